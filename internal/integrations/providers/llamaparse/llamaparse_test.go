package llamaparse_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"sinew/internal/fault"
	"sinew/internal/integrations"
	"sinew/internal/integrations/integrationstest"
	"sinew/internal/integrations/providers/llamaparse"
)

const key = "llx-test-key-0001"

type uploaded struct {
	filename, content, inputURL string
	fields                      map[string][]string
}

// fakeLlamaCloud speaks the parsing API v1: upload → job id; the job is PENDING for its first polls
// (pollsLeft), then SUCCESS or ERROR; results by type.
type fakeLlamaCloud struct {
	t      *testing.T
	faults integrationstest.Faults
	mu     sync.Mutex
	jobs   map[string]*fakeJob
	ups    []uploaded
	polls  int
}

type fakeJob struct {
	pending int
	fail    bool
	text    string
}

func (f *fakeLlamaCloud) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.faults.Serve(w) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Authorization") != "Bearer "+key {
		w.WriteHeader(401)
		_, _ = w.Write([]byte(`{"detail":"Invalid authentication credentials"}`))
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.Method == "POST" && r.URL.Path == "/api/v1/parsing/upload":
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			f.t.Errorf("multipart: %v", err)
			w.WriteHeader(400)
			return
		}
		up := uploaded{inputURL: r.FormValue("input_url"), fields: map[string][]string{}}
		for k, v := range r.MultipartForm.Value {
			if k != "input_url" {
				up.fields[k] = v
			}
		}
		if fh := r.MultipartForm.File["file"]; len(fh) == 1 {
			file, _ := fh[0].Open()
			b, _ := io.ReadAll(file)
			up.filename, up.content = fh[0].Filename, string(b)
		} else if up.inputURL == "" {
			w.WriteHeader(400)
			_, _ = w.Write([]byte(`{"detail":"Either file or input_url must be provided"}`))
			return
		}
		f.ups = append(f.ups, up)
		id := fmt.Sprintf("job-%d", len(f.ups))
		j := &fakeJob{pending: 2, text: "Page one of " + up.filename + up.inputURL + "\n---\nPage two"}
		if strings.Contains(up.content, "corrupt") {
			j.fail = true
		}
		f.jobs[id] = j
		_, _ = w.Write([]byte(`{"id":"` + id + `","status":"PENDING"}`))
	case r.Method == "GET" && strings.HasPrefix(r.URL.Path, "/api/v1/parsing/job/"):
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/api/v1/parsing/job/"), "/")
		j := f.jobs[parts[0]]
		if j == nil {
			w.WriteHeader(404)
			_, _ = w.Write([]byte(`{"detail":"Job not found"}`))
			return
		}
		if len(parts) == 1 {
			f.polls++
			status := "PENDING"
			if j.pending > 0 {
				j.pending--
			} else if j.fail {
				status = "ERROR"
			} else {
				status = "SUCCESS"
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"id": parts[0], "status": status, "error_message": map[bool]string{true: "The file is corrupted"}[status == "ERROR"]})
			return
		}
		if j.pending > 0 || len(parts) != 3 || parts[1] != "result" {
			f.t.Errorf("result asked before success: %s", r.URL.Path)
		}
		switch parts[2] {
		case "text":
			_ = json.NewEncoder(w).Encode(map[string]any{"text": j.text, "job_metadata": map[string]any{"credits_used": 2}})
		case "markdown":
			_ = json.NewEncoder(w).Encode(map[string]any{"markdown": "# " + j.text, "job_metadata": map[string]any{}})
		case "json":
			_ = json.NewEncoder(w).Encode(map[string]any{"pages": []any{map[string]any{"page": 1, "text": "p1"}, map[string]any{"page": 2, "text": "p2"}}})
		}
	default:
		f.t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
		w.WriteHeader(404)
	}
}

func texts(t *testing.T, out any) ([]string, []any) {
	t.Helper()
	var ts []string
	var metas []any
	for _, d := range out.(map[string]any)["documents"].([]any) {
		doc := d.(map[string]any)
		if doc["class_name"] != "Document" || len(doc["id_"].(string)) != 36 {
			t.Errorf("document %v", doc)
		}
		ts = append(ts, doc["text"].(string))
		metas = append(metas, doc["metadata"])
	}
	return ts, metas
}

func TestParse(t *testing.T) {
	fake := &fakeLlamaCloud{t: t, jobs: map[string]*fakeJob{}}
	r, _ := integrationstest.Start(t, llamaparse.Provider, fake, integrationstest.Env{integrations.EnvName("llama_parse", "POLL_INTERVAL"): "5ms"})
	pdf := base64.StdEncoding.EncodeToString([]byte("%PDF-1.7 fake"))
	setup := map[string]any{"llamaparse_api_key": key, "params": map[string]any{"language": "en", "result_type": "markdown"}}
	tests := []struct {
		name      string
		setup     map[string]any
		args      map[string]any
		wantTexts []string
		wantMeta  []any
		wantUps   []uploaded
		kind      fault.Kind
		msg       string
		field     string
	}{
		{name: "base64 file, setup params, pages split", setup: map[string]any{"llamaparse_api_key": key, "params": map[string]any{"language": "fr"}},
			args:      map[string]any{"file": pdf, "filename": "doc.pdf", "base64": true},
			wantTexts: []string{"Page one of doc.pdf", "Page two"}, wantMeta: []any{map[string]any{"file_name": "doc.pdf"}, map[string]any{"file_name": "doc.pdf"}},
			wantUps: []uploaded{{filename: "doc.pdf", content: "%PDF-1.7 fake", fields: map[string][]string{"language": {"fr"}}}}},
		{name: "argument params override setup params", setup: setup,
			args:      map[string]any{"file": "https://example.com/a.pdf", "params": map[string]any{"result_type": "text", "split_by_page": false, "parsing_instruction": "tables only"}},
			wantTexts: []string{"Page one of https://example.com/a.pdf\n---\nPage two"}, wantMeta: []any{map[string]any{"file_name": "https://example.com/a.pdf"}},
			wantUps: []uploaded{{inputURL: "https://example.com/a.pdf", fields: map[string][]string{"language": {"en"}, "parsing_instruction": {"tables only"}}}}},
		{name: "markdown from setup, list of URLs", setup: setup,
			args:      map[string]any{"file": []any{"https://example.com/a.pdf", "https://example.com/b.pdf"}, "filename": "both"},
			wantTexts: []string{"# Page one of https://example.com/a.pdf", "Page two", "# Page one of https://example.com/b.pdf", "Page two"},
			wantMeta:  []any{map[string]any{"file_name": "both"}, map[string]any{"file_name": "both"}, map[string]any{"file_name": "both"}, map[string]any{"file_name": "both"}},
			wantUps:   []uploaded{{inputURL: "https://example.com/a.pdf", fields: map[string][]string{"language": {"en"}}}, {inputURL: "https://example.com/b.pdf", fields: map[string][]string{"language": {"en"}}}}},
		{name: "json result", setup: map[string]any{"llamaparse_api_key": key}, args: map[string]any{"file": pdf, "base64": true, "params": map[string]any{"result_type": "json"}},
			wantTexts: []string{"p1", "p2"}},
		{name: "job error", setup: map[string]any{"llamaparse_api_key": key}, args: map[string]any{"file": base64.StdEncoding.EncodeToString([]byte("corrupt")), "base64": true}, kind: fault.Provider, msg: "ended in ERROR: The file is corrupted"},
		{name: "a path is refused", setup: setup, args: map[string]any{"file": "/etc/passwd"}, kind: fault.InvalidInput, field: "arguments.file"},
		{name: "not base64", setup: setup, args: map[string]any{"file": "@@@", "base64": true}, kind: fault.InvalidInput, field: "arguments.file"},
		{name: "bad list item", setup: setup, args: map[string]any{"file": []any{"https://example.com/a.pdf", int64(3)}}, kind: fault.InvalidInput, field: "arguments.file[1]"},
		{name: "bad result type", setup: setup, args: map[string]any{"file": pdf, "base64": true, "params": map[string]any{"result_type": "xlsx"}}, kind: fault.InvalidInput, field: "arguments.params.result_type"},
		{name: "bad key", setup: map[string]any{"llamaparse_api_key": "llx-wrong-key-9"}, args: map[string]any{"file": pdf, "base64": true}, kind: fault.Provider, msg: "refused the credentials in the setup (HTTP 401)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake.mu.Lock()
			fake.ups, fake.polls = nil, 0
			fake.mu.Unlock()
			got, err := r.Execute(context.Background(), "llama_parse", "", tc.setup, tc.args)
			if tc.kind != "" {
				integrationstest.CheckErr(t, err, tc.kind, tc.msg, tc.setup)
				if fault.FieldOf(err) != tc.field {
					t.Errorf("field %q, want %q", fault.FieldOf(err), tc.field)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ts, metas := texts(t, got)
			if !reflect.DeepEqual(ts, tc.wantTexts) {
				t.Errorf("texts %q, want %q", ts, tc.wantTexts)
			}
			if tc.wantMeta != nil && !reflect.DeepEqual(metas, tc.wantMeta) {
				t.Errorf("metadata %v, want %v", metas, tc.wantMeta)
			}
			fake.mu.Lock()
			defer fake.mu.Unlock()
			if tc.wantUps != nil && !reflect.DeepEqual(fake.ups, tc.wantUps) {
				t.Errorf("uploads %+v\nwant    %+v", fake.ups, tc.wantUps)
			}
			if fake.polls < 3*len(fake.ups) {
				t.Errorf("%d polls for %d jobs: the job was not waited for", fake.polls, len(fake.ups))
			}
		})
	}
	t.Run("deadline while the job runs", func(t *testing.T) {
		fake.mu.Lock()
		fake.jobs["slow"] = &fakeJob{pending: 1 << 30}
		fake.mu.Unlock()
		// A job that never finishes: the call's own bound ends it as Timeout.
		r2, _ := integrationstest.Start(t, llamaparse.Provider, fake, integrationstest.Env{integrations.EnvName("llama_parse", "POLL_INTERVAL"): "1h"})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := r2.Execute(ctx, "llama_parse", "", map[string]any{"llamaparse_api_key": key}, map[string]any{"file": pdf, "base64": true})
		integrationstest.CheckErr(t, err, fault.Timeout, "did not finish", nil)
	})
	integrationstest.RunFaults(t, r, &fake.faults, "llama_parse", "", setup, map[string]any{"file": pdf, "base64": true},
		integrationstest.StandardFaults(`{"detail":"Rate limit exceeded"}`, `{"detail":"Service Unavailable"}`))
}
