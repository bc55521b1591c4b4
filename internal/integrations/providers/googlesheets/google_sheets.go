// Package googlesheets is the google_sheets integration: read and write spreadsheet values through
// the Google Sheets API v4 with service-account auth, as Julep does. The access
// token comes from the JWT bearer flow (RFC 7523): an assertion signed with the service account's
// private key (RS256, scope spreadsheets) is exchanged at the key's token_uri (or
// SINEW_GOOGLE_SHEETS_TOKEN_URL); the Sheets base URL is SINEW_GOOGLE_SHEETS_BASE_URL or
// https://sheets.googleapis.com. use_julep_service takes the operator's shared service account from
// SINEW_GOOGLE_SHEETS_SERVICE_ACCOUNT_JSON. default_retry_count is accepted and unused (Julep ignores
// it too; retries belong to the state machine).
//
// Julep's provider, which this one ports: https://github.com/julep-ai/julep/blob/5371a620af2582868eb121e6489a8cc14836fd50/src/integrations-service/integrations/utils/integrations/google_sheets.py
package googlesheets

import (
	"context"
	"net/url"
	"strconv"

	"sinew/internal/integrations"
)

// Setup of the google_sheets provider.
type Setup struct {
	UseJulepService    bool   `json:"use_julep_service" jsonschema_description:"Use this deployment's shared service account instead of your own."`
	ServiceAccountJSON string `json:"service_account_json,omitempty" jsonschema_description:"Base64 of your service-account key file (JSON)." sinew:"secret"`
	DefaultRetryCount  int    `json:"default_retry_count,omitempty" jsonschema:"minimum=1,maximum=10,default=3" jsonschema_description:"Accepted for compatibility; retries are sinew's."`
}

// Cells are rows (or columns) of cell values.
type Cells = [][]any

// ReadArguments of read_values.
type ReadArguments struct {
	SpreadsheetID        string `json:"spreadsheet_id" jsonschema:"minLength=1"`
	Range                string `json:"range" jsonschema:"minLength=1" jsonschema_description:"A1 notation, e.g. Sheet1!A1:C10."`
	MajorDimension       string `json:"major_dimension,omitempty" jsonschema:"enum=ROWS,enum=COLUMNS,default=ROWS"`
	ValueRenderOption    string `json:"value_render_option,omitempty" jsonschema:"enum=FORMATTED_VALUE,enum=UNFORMATTED_VALUE,enum=FORMULA,default=FORMATTED_VALUE"`
	DateTimeRenderOption string `json:"date_time_render_option,omitempty" jsonschema:"enum=SERIAL_NUMBER,enum=FORMATTED_STRING,default=FORMATTED_STRING"`
}

// WriteArguments of write_values.
type WriteArguments struct {
	SpreadsheetID           string `json:"spreadsheet_id" jsonschema:"minLength=1"`
	Range                   string `json:"range" jsonschema:"minLength=1"`
	Values                  Cells  `json:"values"`
	ValueInputOption        string `json:"value_input_option,omitempty" jsonschema:"enum=RAW,enum=USER_ENTERED,default=USER_ENTERED"`
	InsertDataOption        string `json:"insert_data_option,omitempty" jsonschema:"enum=OVERWRITE,enum=INSERT_ROWS,default=OVERWRITE" jsonschema_description:"Unused by write_values (as in Julep)."`
	IncludeValuesInResponse bool   `json:"include_values_in_response,omitempty" jsonschema:"default=false"`
}

// AppendArguments of append_values.
type AppendArguments struct {
	SpreadsheetID           string `json:"spreadsheet_id" jsonschema:"minLength=1"`
	Range                   string `json:"range" jsonschema:"minLength=1"`
	Values                  Cells  `json:"values"`
	ValueInputOption        string `json:"value_input_option,omitempty" jsonschema:"enum=RAW,enum=USER_ENTERED,default=USER_ENTERED"`
	InsertDataOption        string `json:"insert_data_option,omitempty" jsonschema:"enum=OVERWRITE,enum=INSERT_ROWS,default=INSERT_ROWS"`
	IncludeValuesInResponse bool   `json:"include_values_in_response,omitempty" jsonschema:"default=false"`
}

// ClearArguments of clear_values.
type ClearArguments struct {
	SpreadsheetID string `json:"spreadsheet_id" jsonschema:"minLength=1"`
	Range         string `json:"range" jsonschema:"minLength=1"`
}

// BatchReadArguments of batch_read.
type BatchReadArguments struct {
	SpreadsheetID        string   `json:"spreadsheet_id" jsonschema:"minLength=1"`
	Ranges               []string `json:"ranges" jsonschema:"minItems=1"`
	MajorDimension       string   `json:"major_dimension,omitempty" jsonschema:"enum=ROWS,enum=COLUMNS,default=ROWS"`
	ValueRenderOption    string   `json:"value_render_option,omitempty" jsonschema:"enum=FORMATTED_VALUE,enum=UNFORMATTED_VALUE,enum=FORMULA,default=FORMATTED_VALUE"`
	DateTimeRenderOption string   `json:"date_time_render_option,omitempty" jsonschema:"enum=SERIAL_NUMBER,enum=FORMATTED_STRING,default=FORMATTED_STRING"`
}

// BatchData is one range to write.
type BatchData struct {
	Range          string `json:"range" jsonschema:"minLength=1"`
	Values         Cells  `json:"values"`
	MajorDimension string `json:"major_dimension,omitempty" jsonschema:"enum=ROWS,enum=COLUMNS,default=ROWS"`
}

// BatchWriteArguments of batch_write.
type BatchWriteArguments struct {
	SpreadsheetID           string      `json:"spreadsheet_id" jsonschema:"minLength=1"`
	Data                    []BatchData `json:"data" jsonschema:"minItems=1"`
	ValueInputOption        string      `json:"value_input_option,omitempty" jsonschema:"enum=RAW,enum=USER_ENTERED,default=USER_ENTERED"`
	IncludeValuesInResponse bool        `json:"include_values_in_response,omitempty" jsonschema:"default=false"`
}

// ValueRange is the output of read_values and each range of batch_read.
type ValueRange struct {
	Range          string `json:"range"`
	MajorDimension string `json:"major_dimension"`
	Values         Cells  `json:"values"`
}

// WriteOutput of write_values and append_values.
type WriteOutput struct {
	SpreadsheetID  string `json:"spreadsheet_id"`
	UpdatedRange   string `json:"updated_range"`
	UpdatedRows    int64  `json:"updated_rows"`
	UpdatedColumns int64  `json:"updated_columns"`
	UpdatedCells   int64  `json:"updated_cells"`
	UpdatedValues  Cells  `json:"updated_values,omitempty"`
}

// ClearOutput of clear_values.
type ClearOutput struct {
	SpreadsheetID string `json:"spreadsheet_id"`
	ClearedRange  string `json:"cleared_range"`
}

// BatchReadOutput of batch_read.
type BatchReadOutput struct {
	SpreadsheetID string       `json:"spreadsheet_id"`
	ValueRanges   []ValueRange `json:"value_ranges"`
}

// UpdateResponse is one range's result in batch_write.
type UpdateResponse struct {
	UpdatedRange   string `json:"updated_range"`
	UpdatedRows    int64  `json:"updated_rows"`
	UpdatedColumns int64  `json:"updated_columns"`
	UpdatedCells   int64  `json:"updated_cells"`
}

// BatchWriteOutput of batch_write.
type BatchWriteOutput struct {
	SpreadsheetID       string           `json:"spreadsheet_id"`
	TotalUpdatedSheets  int64            `json:"total_updated_sheets"`
	TotalUpdatedRows    int64            `json:"total_updated_rows"`
	TotalUpdatedColumns int64            `json:"total_updated_columns"`
	TotalUpdatedCells   int64            `json:"total_updated_cells"`
	Responses           []UpdateResponse `json:"responses"`
}

// Sheets API wire types.
type apiValueRange struct {
	Range          string `json:"range"`
	MajorDimension string `json:"majorDimension"`
	Values         Cells  `json:"values"`
}

type apiUpdate struct {
	UpdatedRange   string         `json:"updatedRange"`
	UpdatedRows    int64          `json:"updatedRows"`
	UpdatedColumns int64          `json:"updatedColumns"`
	UpdatedCells   int64          `json:"updatedCells"`
	UpdatedData    *apiValueRange `json:"updatedData"`
}

// call makes one authorized Sheets API request. path is after /v4/spreadsheets/<id>.
func call(ctx context.Context, env integrations.Env, s Setup, method, id, path string, q url.Values, body, out any) error {
	tok, err := accessToken(ctx, env, s)
	if err != nil {
		return err
	}
	err = env.DoJSON(ctx, integrations.Request{
		Method: method,
		URL:    integrations.JoinURL(env.BaseURL, "v4", "spreadsheets", id) + path,
		Query:  q,
		Header: map[string][]string{"Authorization": {"Bearer " + tok}},
		JSON:   body,
	}, out)
	if integrations.StatusOf(err) == 401 {
		forgetToken(tok) // revoked or expired early: the next call signs a new assertion
	}
	return err
}

func valuesPath(rng string) string { return "/values/" + url.PathEscape(rng) }

func orEmpty(c Cells) Cells {
	if c == nil {
		return Cells{}
	}
	return c
}

func readValues(ctx context.Context, env integrations.Env, s Setup, a ReadArguments) (ValueRange, error) {
	var r apiValueRange
	q := url.Values{"majorDimension": {a.MajorDimension}, "valueRenderOption": {a.ValueRenderOption}, "dateTimeRenderOption": {a.DateTimeRenderOption}}
	if err := call(ctx, env, s, "GET", a.SpreadsheetID, valuesPath(a.Range), q, nil, &r); err != nil {
		return ValueRange{}, err
	}
	out := ValueRange{Range: r.Range, MajorDimension: r.MajorDimension, Values: orEmpty(r.Values)}
	if out.Range == "" {
		out.Range = a.Range
	}
	if out.MajorDimension == "" {
		out.MajorDimension = a.MajorDimension
	}
	return out, nil
}

func writeQuery(inputOption string, include bool) url.Values {
	q := url.Values{"valueInputOption": {inputOption}, "includeValuesInResponse": {strconv.FormatBool(include)}}
	if include {
		q.Set("responseValueRenderOption", "FORMATTED_VALUE")
	}
	return q
}

func writeOutput(id string, u apiUpdate, include bool) WriteOutput {
	out := WriteOutput{SpreadsheetID: id, UpdatedRange: u.UpdatedRange, UpdatedRows: u.UpdatedRows, UpdatedColumns: u.UpdatedColumns, UpdatedCells: u.UpdatedCells}
	if include && u.UpdatedData != nil {
		out.UpdatedValues = orEmpty(u.UpdatedData.Values)
	}
	return out
}

func writeValues(ctx context.Context, env integrations.Env, s Setup, a WriteArguments) (WriteOutput, error) {
	var u apiUpdate
	if err := call(ctx, env, s, "PUT", a.SpreadsheetID, valuesPath(a.Range), writeQuery(a.ValueInputOption, a.IncludeValuesInResponse), map[string]any{"values": orEmpty(a.Values)}, &u); err != nil {
		return WriteOutput{}, err
	}
	return writeOutput(a.SpreadsheetID, u, a.IncludeValuesInResponse), nil
}

func appendValues(ctx context.Context, env integrations.Env, s Setup, a AppendArguments) (WriteOutput, error) {
	var r struct {
		Updates apiUpdate `json:"updates"`
	}
	q := writeQuery(a.ValueInputOption, a.IncludeValuesInResponse)
	q.Set("insertDataOption", a.InsertDataOption)
	if err := call(ctx, env, s, "POST", a.SpreadsheetID, valuesPath(a.Range)+":append", q, map[string]any{"values": orEmpty(a.Values)}, &r); err != nil {
		return WriteOutput{}, err
	}
	return writeOutput(a.SpreadsheetID, r.Updates, a.IncludeValuesInResponse), nil
}

func clearValues(ctx context.Context, env integrations.Env, s Setup, a ClearArguments) (ClearOutput, error) {
	var r struct {
		ClearedRange string `json:"clearedRange"`
	}
	if err := call(ctx, env, s, "POST", a.SpreadsheetID, valuesPath(a.Range)+":clear", nil, map[string]any{}, &r); err != nil {
		return ClearOutput{}, err
	}
	if r.ClearedRange == "" {
		r.ClearedRange = a.Range
	}
	return ClearOutput{SpreadsheetID: a.SpreadsheetID, ClearedRange: r.ClearedRange}, nil
}

func batchRead(ctx context.Context, env integrations.Env, s Setup, a BatchReadArguments) (BatchReadOutput, error) {
	var r struct {
		ValueRanges []apiValueRange `json:"valueRanges"`
	}
	q := url.Values{"ranges": a.Ranges, "majorDimension": {a.MajorDimension}, "valueRenderOption": {a.ValueRenderOption}, "dateTimeRenderOption": {a.DateTimeRenderOption}}
	if err := call(ctx, env, s, "GET", a.SpreadsheetID, "/values:batchGet", q, nil, &r); err != nil {
		return BatchReadOutput{}, err
	}
	out := BatchReadOutput{SpreadsheetID: a.SpreadsheetID, ValueRanges: []ValueRange{}}
	for _, vr := range r.ValueRanges {
		md := vr.MajorDimension
		if md == "" {
			md = a.MajorDimension
		}
		out.ValueRanges = append(out.ValueRanges, ValueRange{Range: vr.Range, MajorDimension: md, Values: orEmpty(vr.Values)})
	}
	return out, nil
}

func batchWrite(ctx context.Context, env integrations.Env, s Setup, a BatchWriteArguments) (BatchWriteOutput, error) {
	data := make([]map[string]any, len(a.Data))
	for i, d := range a.Data {
		md := d.MajorDimension
		if md == "" {
			md = "ROWS"
		}
		data[i] = map[string]any{"range": d.Range, "values": orEmpty(d.Values), "majorDimension": md}
	}
	body := map[string]any{"valueInputOption": a.ValueInputOption, "data": data, "includeValuesInResponse": a.IncludeValuesInResponse}
	if a.IncludeValuesInResponse {
		body["responseValueRenderOption"] = "FORMATTED_VALUE"
	}
	var r struct {
		TotalUpdatedSheets  int64       `json:"totalUpdatedSheets"`
		TotalUpdatedRows    int64       `json:"totalUpdatedRows"`
		TotalUpdatedColumns int64       `json:"totalUpdatedColumns"`
		TotalUpdatedCells   int64       `json:"totalUpdatedCells"`
		Responses           []apiUpdate `json:"responses"`
	}
	if err := call(ctx, env, s, "POST", a.SpreadsheetID, "/values:batchUpdate", nil, body, &r); err != nil {
		return BatchWriteOutput{}, err
	}
	out := BatchWriteOutput{SpreadsheetID: a.SpreadsheetID, TotalUpdatedSheets: r.TotalUpdatedSheets, TotalUpdatedRows: r.TotalUpdatedRows,
		TotalUpdatedColumns: r.TotalUpdatedColumns, TotalUpdatedCells: r.TotalUpdatedCells, Responses: []UpdateResponse{}}
	for _, u := range r.Responses {
		out.Responses = append(out.Responses, UpdateResponse{UpdatedRange: u.UpdatedRange, UpdatedRows: u.UpdatedRows, UpdatedColumns: u.UpdatedColumns, UpdatedCells: u.UpdatedCells})
	}
	return out, nil
}

// Provider is the google_sheets provider.
var Provider = &integrations.Provider{
	Name:         "google_sheets",
	FriendlyName: "Google Sheets",
	URL:          "https://workspace.google.com/products/sheets/",
	Docs:         "https://developers.google.com/sheets/api/reference/rest",
	Icon:         "https://www.gstatic.com/images/branding/product/1x/sheets_2020q4_48dp.png",
	BaseURL:      "https://sheets.googleapis.com",
	Methods: []*integrations.Method{
		integrations.NewMethod("read_values", "Read values from a range of a Google Sheets spreadsheet", readValues),
		integrations.NewMethod("write_values", "Write values to a range of a Google Sheets spreadsheet", writeValues),
		integrations.NewMethod("append_values", "Append rows after the table in a range of a Google Sheets spreadsheet", appendValues),
		integrations.NewMethod("clear_values", "Clear the values of a range of a Google Sheets spreadsheet", clearValues),
		integrations.NewMethod("batch_read", "Read values from several ranges of a Google Sheets spreadsheet", batchRead),
		integrations.NewMethod("batch_write", "Write values to several ranges of a Google Sheets spreadsheet", batchWrite),
	},
}
