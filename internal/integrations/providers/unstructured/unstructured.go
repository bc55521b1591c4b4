// Package unstructured is the unstructured integration.
//
// It partitions a document into elements through the Unstructured Partition API (POST
// /general/v0/general, multipart with the file in `files` and each partition parameter as a form
// field, key in the unstructured-api-key header), as Julep does with unstructured_client. The
// method is named `parse`, as the service registers it (the typespec card says `partition`). The
// server is setup.server_url when given, else SINEW_UNSTRUCTURED_BASE_URL, else
// https://api.unstructuredapp.io; either way the connection goes through the guard.
// setup.timeout_ms bounds the call; server, url_params and retry_config are accepted for
// compatibility and not used (retries are sinew's).
//
// Julep's provider, which this one ports: https://github.com/julep-ai/julep/blob/5371a620af2582868eb121e6489a8cc14836fd50/src/integrations-service/integrations/utils/integrations/unstructured.py
package unstructured

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"mime/multipart"
	"strings"
	"time"

	"github.com/google/uuid"

	"sinew/internal/fault"
	"sinew/internal/integrations"
)

// Setup of the unstructured provider.
type Setup struct {
	APIKey      string         `json:"unstructured_api_key" jsonschema:"minLength=1" jsonschema_description:"Unstructured API key." sinew:"secret"`
	ServerURL   string         `json:"server_url,omitempty" jsonschema:"format=uri" jsonschema_description:"A self-hosted or dedicated Unstructured API URL." sinew:"endpoint"`
	Server      string         `json:"server,omitempty" jsonschema_description:"Accepted for compatibility; unused." sinew:"endpoint"`
	URLParams   map[string]any `json:"url_params,omitempty" jsonschema_description:"Accepted for compatibility; unused."`
	RetryConfig map[string]any `json:"retry_config,omitempty" jsonschema_description:"Accepted for compatibility; unused."`
	TimeoutMS   int64          `json:"timeout_ms,omitempty" jsonschema:"minimum=1" jsonschema_description:"Time bound of the call in milliseconds."`
}

// Arguments of parse.
type Arguments struct {
	File            string         `json:"file" jsonschema:"minLength=1" jsonschema_description:"The document, base64-encoded."`
	Filename        string         `json:"filename,omitempty" jsonschema_description:"The document's name; its extension tells the API the type (default <uuid>.txt)."`
	PartitionParams map[string]any `json:"partition_params,omitempty" jsonschema_description:"Partition parameters: strategy, chunking_strategy, languages, output_format, ..."`
}

// Output of parse.
type Output struct {
	ContentType string           `json:"content_type"`
	StatusCode  int              `json:"status_code"`
	CSVElements *string          `json:"csv_elements,omitempty"`
	Content     []map[string]any `json:"content,omitempty"`
}

var strategyAliases = map[string]string{
	"hires": "hi_res", "hires_ocr": "hi_res", "highres": "hi_res", "high_res": "hi_res",
	"ocr": "ocr_only", "ocronly": "ocr_only", "od": "od_only", "odonly": "od_only", "object_detection_only": "od_only",
}

var strategies = map[string]bool{"fast": true, "hi_res": true, "auto": true, "ocr_only": true, "od_only": true, "vlm": true}

// normalizeStrategy folds case, spaces and dashes and applies Julep's aliases; an unrecognised
// strategy is dropped (Julep's to_unstructured_strategy returns its default, None).
func normalizeStrategy(v any) (string, bool) {
	s, ok := v.(string)
	if !ok {
		return "", false
	}
	s = strings.ReplaceAll(strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "-", "_"), " ", "_")
	if a, ok := strategyAliases[s]; ok {
		s = a
	}
	return s, strategies[s]
}

func parse(ctx context.Context, env integrations.Env, s Setup, a Arguments) (Output, error) {
	content, err := base64.StdEncoding.DecodeString(strings.TrimSpace(a.File))
	if err != nil {
		return Output{}, fault.Invalid("arguments.file", "arguments.file is not base64")
	}
	name := a.Filename
	if name == "" {
		name = uuid.NewString() + ".txt"
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("files", name)
	if err != nil {
		return Output{}, fault.Wrap(fault.Internal, err, "could not build the upload")
	}
	_, _ = fw.Write(content)
	params := make(map[string]any, len(a.PartitionParams))
	for k, v := range a.PartitionParams {
		params[k] = v
	}
	if v, ok := params["strategy"]; ok {
		if st, ok := normalizeStrategy(v); ok {
			params["strategy"] = st
		} else {
			delete(params, "strategy")
		}
	}
	if err := integrations.WriteFormFields(mw, "arguments.partition_params", params); err != nil {
		return Output{}, err
	}
	if err := mw.Close(); err != nil {
		return Output{}, fault.Wrap(fault.Internal, err, "could not build the upload")
	}
	base := env.BaseURL
	if s.ServerURL != "" {
		base = strings.TrimRight(s.ServerURL, "/")
	}
	if s.TimeoutMS > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(s.TimeoutMS)*time.Millisecond)
		defer cancel()
	}
	resp, err := env.Do(ctx, integrations.Request{
		Method:      "POST",
		URL:         base + "/general/v0/general",
		Header:      map[string][]string{"unstructured-api-key": {s.APIKey}, "Accept": {"application/json, text/csv"}},
		Body:        body.Bytes(),
		ContentType: mw.FormDataContentType(),
		MaxBytes:    32 << 20,
	})
	if err != nil {
		return Output{}, err
	}
	ct := resp.Header.Get("Content-Type")
	out := Output{ContentType: ct, StatusCode: resp.Status}
	if strings.HasPrefix(ct, "text/csv") {
		csv := string(resp.Body)
		if csv != "" {
			out.CSVElements = &csv
		}
		return out, nil
	}
	var elements []map[string]any
	if err := json.Unmarshal(resp.Body, &elements); err != nil {
		return Output{}, fault.Wrap(fault.Provider, err, "Unstructured answered with something other than a list of elements")
	}
	if len(elements) > 0 {
		out.Content = elements
	}
	return out, nil
}

// Provider is the unstructured provider.
var Provider = &integrations.Provider{
	Name:         "unstructured",
	FriendlyName: "Unstructured.io",
	URL:          "https://unstructured.io/",
	Docs:         "https://docs.unstructured.io/api-reference/partition/overview",
	Icon:         "https://unstructured.io/favicon.ico",
	BaseURL:      "https://api.unstructuredapp.io",
	Methods: []*integrations.Method{
		integrations.NewMethod("parse", "Parse documents into structured elements", parse),
	},
}
