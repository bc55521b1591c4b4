package unstructured_test

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/integrations/integrationstest"
	"sinew/internal/integrations/providers/unstructured"
)

const key = "unstructured-key-42"

type upload struct {
	path, filename, content string
	fields                  map[string][]string
}

// fakeUnstructured speaks the Partition API: multipart with `files`, parameters as form fields,
// the key in unstructured-api-key; elements as JSON, or CSV when output_format is text/csv.
type fakeUnstructured struct {
	t      *testing.T
	faults integrationstest.Faults
	mu     sync.Mutex
	last   upload
}

func (f *fakeUnstructured) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.faults.Serve(w) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("unstructured-api-key") != key {
		w.WriteHeader(401)
		_, _ = w.Write([]byte(`{"detail":"API key is malformed, please type the API key correctly in the header."}`))
		return
	}
	if !strings.HasSuffix(r.URL.Path, "/general/v0/general") || r.Method != "POST" {
		f.t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
	}
	if err := r.ParseMultipartForm(1 << 20); err != nil {
		f.t.Errorf("multipart: %v", err)
		w.WriteHeader(400)
		return
	}
	fh := r.MultipartForm.File["files"]
	if len(fh) != 1 {
		f.t.Errorf("%d files", len(fh))
		w.WriteHeader(400)
		return
	}
	file, _ := fh[0].Open()
	content, _ := io.ReadAll(file)
	f.mu.Lock()
	f.last = upload{r.URL.Path, fh[0].Filename, string(content), r.MultipartForm.Value}
	f.mu.Unlock()
	if strings.HasSuffix(fh[0].Filename, ".exe") {
		w.WriteHeader(400)
		_, _ = w.Write([]byte(`{"detail":"File type application/x-msdownload is not supported."}`))
		return
	}
	if r.FormValue("output_format") == "text/csv" {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		_, _ = w.Write([]byte("type,element_id,text\nTitle,abc,Hello\n"))
		return
	}
	_, _ = w.Write([]byte(`[{"type":"Title","element_id":"abc","text":"Hello","metadata":{"filename":"` + fh[0].Filename + `","languages":["eng"]}},{"type":"NarrativeText","element_id":"def","text":"World.","metadata":{}}]`))
}

func TestParse(t *testing.T) {
	fake := &fakeUnstructured{t: t}
	r, srv := integrationstest.Start(t, unstructured.Provider, fake, nil)
	setup := map[string]any{"unstructured_api_key": key}
	doc := base64.StdEncoding.EncodeToString([]byte("Hello\n\nWorld."))
	elements := []any{
		map[string]any{"type": "Title", "element_id": "abc", "text": "Hello", "metadata": map[string]any{"filename": "notes.txt", "languages": []any{"eng"}}},
		map[string]any{"type": "NarrativeText", "element_id": "def", "text": "World.", "metadata": map[string]any{}},
	}
	tests := []struct {
		name       string
		setup      map[string]any
		args       map[string]any
		want       any
		wantUpload *upload
		kind       fault.Kind
		msg        string
		field      string
	}{
		{name: "elements, strategy alias", setup: setup, args: map[string]any{"file": doc, "filename": "notes.txt", "partition_params": map[string]any{"strategy": "High-Res", "languages": []any{"eng", "spa"}, "coordinates": true, "chunking_strategy": "by_title"}},
			want:       map[string]any{"content_type": "application/json", "status_code": int64(200), "content": elements},
			wantUpload: &upload{"/general/v0/general", "notes.txt", "Hello\n\nWorld.", map[string][]string{"strategy": {"hi_res"}, "languages": {"eng", "spa"}, "coordinates": {"true"}, "chunking_strategy": {"by_title"}}}},
		{name: "unknown strategy is dropped", setup: setup, args: map[string]any{"file": doc, "filename": "notes.txt", "partition_params": map[string]any{"strategy": "turbo"}},
			want:       map[string]any{"content_type": "application/json", "status_code": int64(200), "content": elements},
			wantUpload: &upload{"/general/v0/general", "notes.txt", "Hello\n\nWorld.", map[string][]string{}}},
		{name: "csv", setup: setup, args: map[string]any{"file": doc, "filename": "notes.txt", "partition_params": map[string]any{"output_format": "text/csv"}},
			want: map[string]any{"content_type": "text/csv; charset=utf-8", "status_code": int64(200), "csv_elements": "type,element_id,text\nTitle,abc,Hello\n"}},
		{name: "setup server_url", setup: map[string]any{"unstructured_api_key": key, "server_url": srv.URL + "/dedicated/"}, args: map[string]any{"file": doc, "filename": "notes.txt"},
			want:       map[string]any{"content_type": "application/json", "status_code": int64(200), "content": elements},
			wantUpload: &upload{"/dedicated/general/v0/general", "notes.txt", "Hello\n\nWorld.", map[string][]string{}}},
		{name: "server_url to the metadata address is refused", setup: map[string]any{"unstructured_api_key": key, "server_url": "http://169.254.169.254/"}, args: map[string]any{"file": doc},
			kind: fault.Forbidden, msg: "169.254.169.254 is the cloud metadata address"},
		{name: "unsupported file", setup: setup, args: map[string]any{"file": doc, "filename": "x.exe"}, kind: fault.Provider, msg: "is not supported"},
		{name: "bad key", setup: map[string]any{"unstructured_api_key": "wrong-key-777"}, args: map[string]any{"file": doc}, kind: fault.Provider, msg: "refused the credentials in the setup (HTTP 401)"},
		{name: "not base64", setup: setup, args: map[string]any{"file": "***"}, kind: fault.InvalidInput, field: "arguments.file"},
		{name: "no file", setup: setup, args: map[string]any{}, kind: fault.InvalidInput, field: "arguments.file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Execute(context.Background(), "unstructured", "parse", tc.setup, tc.args)
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
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %#v\nwant %#v", got, tc.want)
			}
			if tc.wantUpload != nil {
				fake.mu.Lock()
				defer fake.mu.Unlock()
				if !reflect.DeepEqual(fake.last, *tc.wantUpload) {
					t.Errorf("uploaded %+v\nwant     %+v", fake.last, *tc.wantUpload)
				}
			}
		})
	}
	t.Run("default file name", func(t *testing.T) {
		if _, err := r.Execute(context.Background(), "unstructured", "", setup, map[string]any{"file": doc}); err != nil {
			t.Fatal(err)
		}
		fake.mu.Lock()
		defer fake.mu.Unlock()
		if !strings.HasSuffix(fake.last.filename, ".txt") || len(fake.last.filename) != 40 {
			t.Errorf("file name %q, want <uuid>.txt", fake.last.filename)
		}
	})
	integrationstest.RunFaults(t, r, &fake.faults, "unstructured", "", setup, map[string]any{"file": doc},
		integrationstest.StandardFaults(`{"detail":"Rate limit exceeded"}`, `{"detail":"Server is under heavy load. Please try again later."}`))
}
