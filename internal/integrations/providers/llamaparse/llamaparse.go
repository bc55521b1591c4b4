// Package llamaparse is the llama_parse integration.
//
// It parses documents with LlamaParse through the LlamaCloud parsing API v1, which Julep's
// llama-parse client uses: upload (POST /api/v1/parsing/upload, multipart `file`, or `input_url`
// for a URL, with the parse parameters as form fields, Bearer key), poll the job (GET
// /api/v1/parsing/job/<id>) until it succeeds or fails, then read the result (GET
// /api/v1/parsing/job/<id>/result/<text|markdown|json>). Parameters are setup.params merged with
// arguments.params (the arguments win); result_type (text, markdown or json; default text) picks
// the result and split_by_page (default true) splits it into one document per page, as the client
// does. Polling is part of one call, not a retry: the poll interval is
// SINEW_LLAMA_PARSE_POLL_INTERVAL (default 1s) and the call's context bounds it.
//
// Differences from Julep: a file that is not base64 must be an http(s) URL, which LlamaCloud fetches
// (Julep would read a path on its own host); a list of files is a list of URLs (or of base64 files
// when base64 is true).
//
// Julep's provider, which this one ports: https://github.com/julep-ai/julep/blob/5371a620af2582868eb121e6489a8cc14836fd50/src/integrations-service/integrations/utils/integrations/llama_parse.py
package llamaparse

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"mime/multipart"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"sinew/internal/fault"
	"sinew/internal/integrations"
)

// pageSeparator is the llama-parse client's page separator in text and markdown results.
const pageSeparator = "\n---\n"

// Setup of the llama_parse provider.
type Setup struct {
	APIKey string         `json:"llamaparse_api_key" jsonschema:"minLength=1" jsonschema_description:"LlamaCloud API key." sinew:"secret"`
	Params map[string]any `json:"params,omitempty" jsonschema_description:"Default parse parameters (result_type, language, parsing_instruction, ...)."`
}

// Arguments of parse.
type Arguments struct {
	File     any            `json:"file" jsonschema:"oneof_type=string;array" jsonschema_description:"The file as base64 (with base64 true) or an http(s) URL; or a list of them."`
	Filename string         `json:"filename,omitempty" jsonschema_description:"The file's name (its extension tells LlamaParse the type)."`
	Params   map[string]any `json:"params,omitempty" jsonschema_description:"Parse parameters; they override setup.params."`
	Base64   bool           `json:"base64,omitempty" jsonschema:"default=false" jsonschema_description:"Whether file holds base64 content."`
}

// Document is a llama-index Document.
type Document struct {
	ID        string         `json:"id_"`
	Text      string         `json:"text"`
	Metadata  map[string]any `json:"metadata"`
	MimeType  string         `json:"mimetype"`
	ClassName string         `json:"class_name"`
}

// Output of parse.
type Output struct {
	Documents []Document `json:"documents"`
}

type job struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"error_message"`
	ErrorCode    string `json:"error_code"`
}

func parse(ctx context.Context, env integrations.Env, s Setup, a Arguments) (Output, error) {
	files, err := filesOf(a.File)
	if err != nil {
		return Output{}, err
	}
	params := map[string]any{}
	for k, v := range s.Params {
		params[k] = v
	}
	for k, v := range a.Params {
		params[k] = v
	}
	resultType := "text"
	if v, ok := params["result_type"].(string); ok && v != "" {
		resultType = v
	}
	switch resultType {
	case "text", "markdown", "json":
	default:
		return Output{}, fault.Invalid("arguments.params.result_type", "result_type must be text, markdown or json")
	}
	splitByPage := true
	if v, ok := params["split_by_page"].(bool); ok {
		splitByPage = v
	}
	delete(params, "result_type")
	delete(params, "split_by_page")

	interval := time.Second
	if v := env.Setting("POLL_INTERVAL"); v != "" {
		if d, err := time.ParseDuration(v); err == nil && d > 0 {
			interval = d
		}
	}
	auth := map[string][]string{"Authorization": {"Bearer " + s.APIKey}}
	out := Output{Documents: []Document{}}
	for i, f := range files {
		field := "arguments.file"
		if len(files) > 1 {
			field = fmt.Sprintf("arguments.file[%d]", i)
		}
		body, ctype, meta, err := upload(f, field, a, params)
		if err != nil {
			return Output{}, err
		}
		var j job
		if err := env.DoJSON(ctx, integrations.Request{Method: "POST", URL: env.BaseURL + "/api/v1/parsing/upload", Header: auth, Body: body, ContentType: ctype}, &j); err != nil {
			return Output{}, err
		}
		if j.ID == "" {
			return Output{}, fault.New(fault.Provider, "LlamaParse accepted the upload without a job id")
		}
		if err := wait(ctx, env, auth, j, interval); err != nil {
			return Output{}, err
		}
		docs, err := result(ctx, env, auth, j.ID, resultType, splitByPage, meta)
		if err != nil {
			return Output{}, err
		}
		out.Documents = append(out.Documents, docs...)
	}
	return out, nil
}

func filesOf(v any) ([]string, error) {
	switch x := v.(type) {
	case string:
		return []string{x}, nil
	case []any:
		out := make([]string, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, fault.Invalid(fmt.Sprintf("arguments.file[%d]", i), "arguments.file[%d] must be a string", i)
			}
			out[i] = s
		}
		if len(out) == 0 {
			return nil, fault.Invalid("arguments.file", "arguments.file is an empty list")
		}
		return out, nil
	}
	return nil, fault.Invalid("arguments.file", "arguments.file must be a string or a list of strings")
}

// upload builds the multipart body for one file: its bytes (base64) or its URL.
func upload(f, field string, a Arguments, params map[string]any) ([]byte, string, map[string]any, error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	meta := map[string]any{}
	if a.Base64 {
		data, err := base64.StdEncoding.DecodeString(strings.TrimSpace(f))
		if err != nil {
			return nil, "", nil, fault.Invalid(field, "%s is not base64 (base64 is true)", field)
		}
		name := a.Filename
		if name == "" {
			name = uuid.NewString()
		}
		meta["file_name"] = name
		w, err := mw.CreateFormFile("file", name)
		if err != nil {
			return nil, "", nil, err
		}
		_, _ = w.Write(data)
	} else {
		u, err := url.Parse(f)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, "", nil, fault.Invalid(field, "%s must be an http(s) URL, or base64 content with base64 true", field)
		}
		if a.Filename != "" {
			meta["file_name"] = a.Filename
		} else {
			meta["file_name"] = f
		}
		_ = mw.WriteField("input_url", f)
	}
	if err := integrations.WriteFormFields(mw, "arguments.params", params); err != nil {
		return nil, "", nil, err
	}
	if err := mw.Close(); err != nil {
		return nil, "", nil, err
	}
	return buf.Bytes(), mw.FormDataContentType(), meta, nil
}

// wait polls the job until it ends.
func wait(ctx context.Context, env integrations.Env, auth map[string][]string, j job, interval time.Duration) error {
	for {
		switch strings.ToUpper(j.Status) {
		case "SUCCESS", "PARTIAL_SUCCESS":
			return nil
		case "ERROR", "CANCELED", "CANCELLED":
			msg := j.ErrorMessage
			if msg == "" {
				msg = j.ErrorCode
			}
			return fault.New(fault.Provider, "LlamaParse job %s ended in %s: %s", j.ID, j.Status, msg)
		}
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			if ctx.Err() == context.DeadlineExceeded {
				return fault.Wrap(fault.Timeout, ctx.Err(), "LlamaParse job %s did not finish within the call's time bound", j.ID)
			}
			return fault.Wrap(fault.Transient, ctx.Err(), "the LlamaParse call was cancelled")
		case <-t.C:
		}
		id := j.ID
		if err := env.DoJSON(ctx, integrations.Request{URL: integrations.JoinURL(env.BaseURL, "api", "v1", "parsing", "job", id), Header: auth}, &j); err != nil {
			return err
		}
		if j.ID == "" {
			j.ID = id
		}
	}
}

func result(ctx context.Context, env integrations.Env, auth map[string][]string, id, resultType string, split bool, meta map[string]any) ([]Document, error) {
	var r map[string]any
	if err := env.DoJSON(ctx, integrations.Request{URL: integrations.JoinURL(env.BaseURL, "api", "v1", "parsing", "job", id, "result", resultType), Header: auth, MaxBytes: 32 << 20}, &r); err != nil {
		return nil, err
	}
	var texts []string
	switch resultType {
	case "json":
		pages, _ := r["pages"].([]any)
		for _, p := range pages {
			pm, _ := p.(map[string]any)
			t, _ := pm["text"].(string)
			texts = append(texts, t)
		}
		if !split {
			texts = []string{strings.Join(texts, pageSeparator)}
		}
	default:
		t, ok := r[resultType].(string)
		if !ok {
			return nil, fault.New(fault.Provider, "LlamaParse's %s result has no %q field", resultType, resultType)
		}
		texts = []string{t}
		if split {
			texts = strings.Split(t, pageSeparator)
		}
	}
	docs := make([]Document, 0, len(texts))
	for _, t := range texts {
		if split && strings.TrimSpace(t) == "" {
			continue
		}
		md := make(map[string]any, len(meta))
		for k, v := range meta {
			md[k] = v
		}
		docs = append(docs, Document{ID: uuid.NewString(), Text: t, Metadata: md, MimeType: "text/plain", ClassName: "Document"})
	}
	return docs, nil
}

// Provider is the llama_parse provider.
var Provider = &integrations.Provider{
	Name:         "llama_parse",
	FriendlyName: "LlamaParse",
	URL:          "https://www.llamaindex.ai/",
	Docs:         "https://docs.cloud.llamaindex.ai/llamaparse/getting_started",
	Icon:         "https://www.llamaindex.ai/favicon.ico",
	BaseURL:      "https://api.cloud.llamaindex.ai",
	Methods: []*integrations.Method{
		integrations.NewMethod("parse", "Parse and extract the files", parse),
	},
}
