package googlesheets_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"sinew/internal/fault"
	"sinew/internal/integrations"
	"sinew/internal/integrations/integrationstest"
	"sinew/internal/integrations/providers/googlesheets"
)

const (
	clientEmail = "sinew-test@project.iam.gserviceaccount.com"
	accessTok   = "ya29.test-access-token"
	sheetID     = "1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms"
)

// fakeGoogle plays Google's OAuth token endpoint and the Sheets API v4 values endpoints. The token
// endpoint checks the JWT assertion's RS256 signature with the service account's public key and its
// claims; the Sheets endpoints check the Bearer token.
type fakeGoogle struct {
	t         *testing.T
	pub       *rsa.PublicKey
	tokenURL  string
	faults    integrationstest.Faults
	tokenHits atomic.Int64
	revoke    atomic.Bool // answer the next Sheets request 401, as for a revoked token
	mu        sync.Mutex
	lastQuery map[string][]string
	lastBody  map[string]any
	lastPath  string
}

func (f *fakeGoogle) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	if r.URL.Path == "/token" {
		f.tokenHits.Add(1)
		f.token(w, r)
		return
	}
	if f.faults.Serve(w) {
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+accessTok || f.revoke.Swap(false) {
		w.WriteHeader(401)
		_, _ = w.Write([]byte(`{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}`))
		return
	}
	var body map[string]any
	if r.Body != nil && (r.Method == "POST" || r.Method == "PUT") {
		_ = json.NewDecoder(r.Body).Decode(&body)
	}
	f.mu.Lock()
	f.lastQuery, f.lastBody, f.lastPath = r.URL.Query(), body, r.Method+" "+r.URL.Path
	f.mu.Unlock()
	prefix := "/v4/spreadsheets/" + sheetID
	if !strings.HasPrefix(r.URL.Path, prefix) {
		w.WriteHeader(404)
		_, _ = w.Write([]byte(`{"error":{"code":404,"message":"Requested entity was not found.","status":"NOT_FOUND"}}`))
		return
	}
	rest := strings.TrimPrefix(r.URL.Path, prefix)
	switch {
	case r.Method == "GET" && rest == "/values:batchGet":
		_, _ = w.Write([]byte(`{"spreadsheetId":"` + sheetID + `","valueRanges":[{"range":"Sheet1!A1:B2","majorDimension":"ROWS","values":[["a","b"],["1","2"]]},{"range":"Sheet2!A1:A1","majorDimension":"ROWS"}]}`))
	case r.Method == "POST" && rest == "/values:batchUpdate":
		_, _ = w.Write([]byte(`{"spreadsheetId":"` + sheetID + `","totalUpdatedRows":3,"totalUpdatedColumns":2,"totalUpdatedCells":5,"totalUpdatedSheets":2,"responses":[{"spreadsheetId":"` + sheetID + `","updatedRange":"Sheet1!A1:B2","updatedRows":2,"updatedColumns":2,"updatedCells":4},{"spreadsheetId":"` + sheetID + `","updatedRange":"Sheet2!A1","updatedRows":1,"updatedColumns":1,"updatedCells":1}]}`))
	case r.Method == "GET" && strings.HasPrefix(rest, "/values/"):
		rng := strings.TrimPrefix(rest, "/values/")
		_, _ = w.Write([]byte(`{"range":"` + rng + `","majorDimension":"` + r.URL.Query().Get("majorDimension") + `","values":[["Name","Score"],["Ann",10]]}`))
	case r.Method == "PUT" && strings.HasPrefix(rest, "/values/"):
		upd := `{"spreadsheetId":"` + sheetID + `","updatedRange":"Sheet1!A1:B2","updatedRows":2,"updatedColumns":2,"updatedCells":4`
		if r.URL.Query().Get("includeValuesInResponse") == "true" {
			upd += `,"updatedData":{"range":"Sheet1!A1:B2","majorDimension":"ROWS","values":[["x","y"],["1","2"]]}`
		}
		_, _ = w.Write([]byte(upd + "}"))
	case r.Method == "POST" && strings.HasSuffix(rest, ":append"):
		_, _ = w.Write([]byte(`{"spreadsheetId":"` + sheetID + `","tableRange":"Sheet1!A1:B2","updates":{"spreadsheetId":"` + sheetID + `","updatedRange":"Sheet1!A3:B3","updatedRows":1,"updatedColumns":2,"updatedCells":2}}`))
	case r.Method == "POST" && strings.HasSuffix(rest, ":clear"):
		_, _ = w.Write([]byte(`{"spreadsheetId":"` + sheetID + `","clearedRange":"Sheet1!A1:Z1000"}`))
	default:
		f.t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
		w.WriteHeader(400)
	}
}

func (f *fakeGoogle) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		w.WriteHeader(400)
		_, _ = w.Write([]byte(`{"error":"unsupported_grant_type","error_description":"Invalid grant_type"}`))
		return
	}
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(r.PostForm.Get("assertion"), claims, func(tok *jwt.Token) (any, error) {
		if tok.Header["kid"] != "key-1" {
			f.t.Errorf("kid %v", tok.Header["kid"])
		}
		return f.pub, nil
	}, jwt.WithValidMethods([]string{"RS256"}), jwt.WithAudience(f.tokenURL), jwt.WithIssuer(clientEmail), jwt.WithExpirationRequired(), jwt.WithIssuedAt())
	if err != nil {
		w.WriteHeader(400)
		_, _ = w.Write([]byte(`{"error":"invalid_grant","error_description":"Invalid JWT Signature."}`))
		return
	}
	if claims["scope"] != "https://www.googleapis.com/auth/spreadsheets" {
		f.t.Errorf("scope %v", claims["scope"])
	}
	_, _ = w.Write([]byte(`{"access_token":"` + accessTok + `","expires_in":3599,"token_type":"Bearer"}`))
}

// keyFile makes a service-account key file for key, base64-encoded (without padding, as users
// paste it; the provider repairs it).
func keyFile(t *testing.T, key *rsa.PrivateKey, tokenURI string) string {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	b, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "p", "private_key_id": "key-1", "private_key": pemKey,
		"client_email": clientEmail, "token_uri": tokenURI})
	return strings.TrimRight(base64.StdEncoding.EncodeToString(b), "=")
}

func newKey(t *testing.T) *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSheets(t *testing.T) {
	key := newKey(t)
	fake := &fakeGoogle{t: t, pub: &key.PublicKey}
	r, srv := integrationstest.Start(t, googlesheets.Provider, fake, nil)
	fake.tokenURL = srv.URL + "/token"
	setup := map[string]any{"use_julep_service": false, "service_account_json": keyFile(t, key, fake.tokenURL)}

	tests := []struct {
		name      string
		method    string
		args      map[string]any
		want      any
		wantPath  string
		wantQuery map[string][]string
		wantBody  map[string]any
	}{
		{name: "read_values (default)", args: map[string]any{"spreadsheet_id": sheetID, "range": "My Sheet!A1:B2"},
			want:      map[string]any{"range": "My Sheet!A1:B2", "major_dimension": "ROWS", "values": []any{[]any{"Name", "Score"}, []any{"Ann", int64(10)}}},
			wantPath:  "GET /v4/spreadsheets/" + sheetID + "/values/My Sheet!A1:B2",
			wantQuery: map[string][]string{"majorDimension": {"ROWS"}, "valueRenderOption": {"FORMATTED_VALUE"}, "dateTimeRenderOption": {"FORMATTED_STRING"}}},
		{name: "read_values by columns", method: "read_values", args: map[string]any{"spreadsheet_id": sheetID, "range": "A1:B2", "major_dimension": "COLUMNS", "value_render_option": "FORMULA", "date_time_render_option": "SERIAL_NUMBER"},
			want:      map[string]any{"range": "A1:B2", "major_dimension": "COLUMNS", "values": []any{[]any{"Name", "Score"}, []any{"Ann", int64(10)}}},
			wantPath:  "GET /v4/spreadsheets/" + sheetID + "/values/A1:B2",
			wantQuery: map[string][]string{"majorDimension": {"COLUMNS"}, "valueRenderOption": {"FORMULA"}, "dateTimeRenderOption": {"SERIAL_NUMBER"}}},
		{name: "write_values", method: "write_values", args: map[string]any{"spreadsheet_id": sheetID, "range": "Sheet1!A1:B2", "values": []any{[]any{"x", "y"}, []any{int64(1), int64(2)}}, "include_values_in_response": true},
			want:      map[string]any{"spreadsheet_id": sheetID, "updated_range": "Sheet1!A1:B2", "updated_rows": int64(2), "updated_columns": int64(2), "updated_cells": int64(4), "updated_values": []any{[]any{"x", "y"}, []any{"1", "2"}}},
			wantPath:  "PUT /v4/spreadsheets/" + sheetID + "/values/Sheet1!A1:B2",
			wantQuery: map[string][]string{"valueInputOption": {"USER_ENTERED"}, "includeValuesInResponse": {"true"}, "responseValueRenderOption": {"FORMATTED_VALUE"}},
			wantBody:  map[string]any{"values": []any{[]any{"x", "y"}, []any{float64(1), float64(2)}}}},
		{name: "append_values", method: "append_values", args: map[string]any{"spreadsheet_id": sheetID, "range": "Sheet1!A1", "values": []any{[]any{"Bob", int64(7)}}, "value_input_option": "RAW"},
			want:      map[string]any{"spreadsheet_id": sheetID, "updated_range": "Sheet1!A3:B3", "updated_rows": int64(1), "updated_columns": int64(2), "updated_cells": int64(2)},
			wantPath:  "POST /v4/spreadsheets/" + sheetID + "/values/Sheet1!A1:append",
			wantQuery: map[string][]string{"valueInputOption": {"RAW"}, "insertDataOption": {"INSERT_ROWS"}, "includeValuesInResponse": {"false"}},
			wantBody:  map[string]any{"values": []any{[]any{"Bob", float64(7)}}}},
		{name: "clear_values", method: "clear_values", args: map[string]any{"spreadsheet_id": sheetID, "range": "Sheet1"},
			want:     map[string]any{"spreadsheet_id": sheetID, "cleared_range": "Sheet1!A1:Z1000"},
			wantPath: "POST /v4/spreadsheets/" + sheetID + "/values/Sheet1:clear", wantQuery: map[string][]string{}, wantBody: map[string]any{}},
		{name: "batch_read", method: "batch_read", args: map[string]any{"spreadsheet_id": sheetID, "ranges": []any{"Sheet1!A1:B2", "Sheet2!A1"}},
			want: map[string]any{"spreadsheet_id": sheetID, "value_ranges": []any{
				map[string]any{"range": "Sheet1!A1:B2", "major_dimension": "ROWS", "values": []any{[]any{"a", "b"}, []any{"1", "2"}}},
				map[string]any{"range": "Sheet2!A1:A1", "major_dimension": "ROWS", "values": []any{}}}},
			wantPath:  "GET /v4/spreadsheets/" + sheetID + "/values:batchGet",
			wantQuery: map[string][]string{"ranges": {"Sheet1!A1:B2", "Sheet2!A1"}, "majorDimension": {"ROWS"}, "valueRenderOption": {"FORMATTED_VALUE"}, "dateTimeRenderOption": {"FORMATTED_STRING"}}},
		{name: "batch_write", method: "batch_write", args: map[string]any{"spreadsheet_id": sheetID, "data": []any{
			map[string]any{"range": "Sheet1!A1:B2", "values": []any{[]any{"a", "b"}, []any{"c", "d"}}},
			map[string]any{"range": "Sheet2!A1", "values": []any{[]any{"z"}}, "major_dimension": "COLUMNS"}}},
			want: map[string]any{"spreadsheet_id": sheetID, "total_updated_sheets": int64(2), "total_updated_rows": int64(3), "total_updated_columns": int64(2), "total_updated_cells": int64(5), "responses": []any{
				map[string]any{"updated_range": "Sheet1!A1:B2", "updated_rows": int64(2), "updated_columns": int64(2), "updated_cells": int64(4)},
				map[string]any{"updated_range": "Sheet2!A1", "updated_rows": int64(1), "updated_columns": int64(1), "updated_cells": int64(1)}}},
			wantPath: "POST /v4/spreadsheets/" + sheetID + "/values:batchUpdate", wantQuery: map[string][]string{},
			wantBody: map[string]any{"valueInputOption": "USER_ENTERED", "includeValuesInResponse": false, "data": []any{
				map[string]any{"range": "Sheet1!A1:B2", "values": []any{[]any{"a", "b"}, []any{"c", "d"}}, "majorDimension": "ROWS"},
				map[string]any{"range": "Sheet2!A1", "values": []any{[]any{"z"}}, "majorDimension": "COLUMNS"}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Execute(context.Background(), "google_sheets", tc.method, setup, tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %#v\nwant %#v", got, tc.want)
			}
			fake.mu.Lock()
			defer fake.mu.Unlock()
			if fake.lastPath != tc.wantPath {
				t.Errorf("sent %s, want %s", fake.lastPath, tc.wantPath)
			}
			if len(fake.lastQuery) != 0 || len(tc.wantQuery) != 0 {
				if !reflect.DeepEqual(map[string][]string(fake.lastQuery), tc.wantQuery) {
					t.Errorf("query %v, want %v", fake.lastQuery, tc.wantQuery)
				}
			}
			if tc.wantBody != nil && !reflect.DeepEqual(fake.lastBody, tc.wantBody) {
				t.Errorf("body %v, want %v", fake.lastBody, tc.wantBody)
			}
		})
	}
	if n := fake.tokenHits.Load(); n != 1 {
		t.Errorf("%d token exchanges for %d calls, want 1 (the token is cached)", n, len(tests))
	}

	t.Run("a refused token is not reused", func(t *testing.T) {
		fake.revoke.Store(true)
		args := map[string]any{"spreadsheet_id": sheetID, "range": "A1"}
		_, err := r.Execute(context.Background(), "google_sheets", "", setup, args)
		integrationstest.CheckErr(t, err, fault.Provider, "HTTP 401", setup)
		if _, err := r.Execute(context.Background(), "google_sheets", "", setup, args); err != nil {
			t.Fatal(err)
		}
		if n := fake.tokenHits.Load(); n != 2 {
			t.Errorf("%d token exchanges, want 2 (a new token after the 401)", n)
		}
	})

	failures := []struct {
		name  string
		setup map[string]any
		args  map[string]any
		kind  fault.Kind
		msg   string
		field string
	}{
		{name: "key the token endpoint does not know", setup: map[string]any{"use_julep_service": false, "service_account_json": keyFile(t, newKey(t), fake.tokenURL)},
			args: map[string]any{"spreadsheet_id": sheetID, "range": "A1"}, kind: fault.Provider, msg: "Google refused the service-account credentials"},
		{name: "not base64", setup: map[string]any{"use_julep_service": false, "service_account_json": "%%%not-base64%%%"},
			args: map[string]any{"spreadsheet_id": sheetID, "range": "A1"}, kind: fault.InvalidInput, field: "setup.service_account_json"},
		{name: "not a key file", setup: map[string]any{"use_julep_service": false, "service_account_json": base64.StdEncoding.EncodeToString([]byte(`{"client_email":"x","private_key":"not pem"}`))},
			args: map[string]any{"spreadsheet_id": sheetID, "range": "A1"}, kind: fault.InvalidInput, field: "setup.service_account_json", msg: "not an RSA key"},
		{name: "no key and no shared account", setup: map[string]any{"use_julep_service": false},
			args: map[string]any{"spreadsheet_id": sheetID, "range": "A1"}, kind: fault.InvalidInput, field: "setup.service_account_json"},
		{name: "shared account not configured", setup: map[string]any{"use_julep_service": true},
			args: map[string]any{"spreadsheet_id": sheetID, "range": "A1"}, kind: fault.InvalidInput, field: "setup.use_julep_service"},
		{name: "use_julep_service missing", setup: map[string]any{"service_account_json": "x"},
			args: map[string]any{"spreadsheet_id": sheetID, "range": "A1"}, kind: fault.InvalidInput, field: "setup.use_julep_service"},
		{name: "unknown spreadsheet", setup: setup, args: map[string]any{"spreadsheet_id": "nope", "range": "A1"}, kind: fault.Provider, msg: "Requested entity was not found"},
		{name: "bad major_dimension in batch data", setup: setup, args: map[string]any{"spreadsheet_id": sheetID, "data": []any{map[string]any{"range": "A1", "values": []any{}, "major_dimension": "DIAGONAL"}}}, kind: fault.InvalidInput, field: "arguments.data[0].major_dimension"},
	}
	for _, tc := range failures {
		t.Run(tc.name, func(t *testing.T) {
			method := ""
			if _, ok := tc.args["data"]; ok {
				method = "batch_write"
			}
			_, err := r.Execute(context.Background(), "google_sheets", method, tc.setup, tc.args)
			integrationstest.CheckErr(t, err, tc.kind, tc.msg, tc.setup)
			if fault.FieldOf(err) != tc.field {
				t.Errorf("field %q, want %q", fault.FieldOf(err), tc.field)
			}
		})
	}
	integrationstest.RunFaults(t, r, &fake.faults, "google_sheets", "", setup, map[string]any{"spreadsheet_id": sheetID, "range": "A1"}, append(
		integrationstest.StandardFaults(`{"error":{"code":429,"message":"Quota exceeded for quota metric 'Read requests'","status":"RESOURCE_EXHAUSTED"}}`, `{"error":{"code":503,"message":"The service is currently unavailable.","status":"UNAVAILABLE"}}`),
		integrationstest.Case{Status: 403, Body: `{"error":{"code":403,"message":"The caller does not have permission","status":"PERMISSION_DENIED"}}`, Kind: fault.Provider, Msg: "refused the credentials in the setup (HTTP 403)"}))
}

// TestSharedServiceAccount: use_julep_service takes the operator's key from
// SINEW_GOOGLE_SHEETS_SERVICE_ACCOUNT_JSON, and SINEW_GOOGLE_SHEETS_TOKEN_URL overrides the key's
// token_uri.
func TestSharedServiceAccount(t *testing.T) {
	key := newKey(t)
	fake := &fakeGoogle{t: t, pub: &key.PublicKey}
	// The shared key file names a token_uri that must not be used: the override wins.
	r, srv := integrationstest.Start(t, googlesheets.Provider, fake, integrationstest.Env{
		integrations.EnvName("google_sheets", "TOKEN_URL"):            "{{URL}}/token",
		integrations.EnvName("google_sheets", "SERVICE_ACCOUNT_JSON"): keyFile(t, key, "https://oauth2.invalid/token"),
	})
	fake.tokenURL = srv.URL + "/token"
	got, err := r.Execute(context.Background(), "google_sheets", "read_values", map[string]any{"use_julep_service": true}, map[string]any{"spreadsheet_id": sheetID, "range": "A1:B2"})
	if err != nil {
		t.Fatal(err)
	}
	if got.(map[string]any)["range"] != "A1:B2" || fake.tokenHits.Load() != 1 {
		t.Fatalf("got %v after %d token exchanges", got, fake.tokenHits.Load())
	}
}
