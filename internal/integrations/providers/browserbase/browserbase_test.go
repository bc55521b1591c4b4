package browserbase_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/integrations"
	"sinew/internal/integrations/integrationstest"
	"sinew/internal/integrations/providers/browserbase"
	"sinew/internal/jsonv"
)

const (
	key     = "bb_live_test_key_1"
	project = "proj-1234"
)

const sessionJSON = `{"id":"sess-1","createdAt":"2024-05-01T10:00:00.000Z","updatedAt":"2024-05-01T10:00:00.000Z","projectId":"proj-1234","startedAt":"2024-05-01T10:00:01.000Z","endedAt":null,"expiresAt":"2024-05-01T11:00:00.000Z","status":"RUNNING","proxyBytes":0,"avgCpuUsage":null,"memoryUsage":null,"keepAlive":false,"contextId":null,"region":"us-west-2","userMetadata":{}}`

type call struct {
	method, path, query string
	body                map[string]any
	file                string
}

// fakeBrowserbase plays the Browserbase API v1 (X-BB-API-Key) and GitHub's archive download.
type fakeBrowserbase struct {
	t      *testing.T
	faults integrationstest.Faults
	mu     sync.Mutex
	calls  []call
}

func (f *fakeBrowserbase) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/gh/") {
		// GitHub: /gh/<owner>/<repo>/archive/refs/tags/<tag>.zip redirects to codeload.
		if strings.HasSuffix(r.URL.Path, "/archive/refs/tags/v1.0.zip") {
			http.Redirect(w, r, "/codeload"+strings.TrimPrefix(r.URL.Path, "/gh"), http.StatusFound)
			return
		}
		w.WriteHeader(404)
		_, _ = w.Write([]byte("Not Found"))
		return
	}
	if strings.HasPrefix(r.URL.Path, "/codeload/") {
		w.Header().Set("Content-Type", "application/zip")
		_, _ = w.Write([]byte("PK\x03\x04zip of " + r.URL.Path))
		return
	}
	if f.faults.Serve(w) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("X-BB-API-Key") != key {
		w.WriteHeader(401)
		_, _ = w.Write([]byte(`{"statusCode":401,"error":"Unauthorized","message":"Invalid API key"}`))
		return
	}
	c := call{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/") {
		_ = r.ParseMultipartForm(1 << 20)
		if fh := r.MultipartForm.File["file"]; len(fh) == 1 {
			file, _ := fh[0].Open()
			b, _ := io.ReadAll(file)
			c.file = fh[0].Filename + ":" + string(b)
		}
	} else if r.Method == "POST" {
		_ = json.NewDecoder(r.Body).Decode(&c.body)
	}
	f.mu.Lock()
	f.calls = append(f.calls, c)
	f.mu.Unlock()
	switch {
	case r.Method == "GET" && r.URL.Path == "/v1/sessions":
		_, _ = w.Write([]byte("[" + sessionJSON + "]"))
	case r.Method == "POST" && r.URL.Path == "/v1/sessions":
		_, _ = w.Write([]byte(strings.TrimSuffix(sessionJSON, "}") + `,"connectUrl":"wss://connect.browserbase.com?signingKey=abc","seleniumRemoteUrl":"http://x","signingKey":"abc"}`))
	case r.URL.Path == "/v1/sessions/sess-1" && r.Method == "GET":
		_, _ = w.Write([]byte(sessionJSON))
	case r.URL.Path == "/v1/sessions/sess-1" && r.Method == "POST":
		_, _ = w.Write([]byte(strings.Replace(sessionJSON, "RUNNING", "COMPLETED", 1)))
	case r.URL.Path == "/v1/sessions/sess-1/debug":
		_, _ = w.Write([]byte(`{"debuggerFullscreenUrl":"https://www.browserbase.com/devtools-fullscreen/inspector.html?wss=x","debuggerUrl":"https://www.browserbase.com/devtools/inspector.html?wss=x","wsUrl":"wss://connect.browserbase.com/debug/sess-1/devtools/browser/x","pages":[{"id":"p1","url":"https://example.com/","title":"Example"}]}`))
	case r.Method == "POST" && r.URL.Path == "/v1/extensions":
		_, _ = w.Write([]byte(`{"id":"ext-9","fileName":"x.zip","projectId":"proj-1234"}`))
	default:
		w.WriteHeader(404)
		_, _ = w.Write([]byte(`{"statusCode":404,"error":"Not Found","message":"Session not found"}`))
	}
}

func TestBrowserbase(t *testing.T) {
	fake := &fakeBrowserbase{t: t}
	r, srv := integrationstest.Start(t, browserbase.Provider, fake, integrationstest.Env{integrations.EnvName("browserbase", "GITHUB_URL"): "{{URL}}/gh"})
	setup := map[string]any{"api_key": key, "project_id": project}
	julepSession := map[string]any{"id": "sess-1", "createdAt": "2024-05-01T10:00:00.000Z", "projectId": "proj-1234", "startedAt": "2024-05-01T10:00:01.000Z", "endedAt": nil,
		"expiresAt": "2024-05-01T11:00:00.000Z", "status": "RUNNING", "proxyBytes": int64(0), "avgCpuUsage": nil, "memoryUsage": nil, "keepAlive": false, "contextId": nil}
	withConnect := map[string]any{"connect_url": "wss://connect.browserbase.com?signingKey=abc"}
	for k, v := range julepSession {
		withConnect[k] = v
	}
	tests := []struct {
		name     string
		method   string
		setup    map[string]any
		args     map[string]any
		want     any
		wantCall *call
		kind     fault.Kind
		msg      string
		field    string
	}{
		{name: "list_sessions (default)", setup: setup, args: map[string]any{"status": "RUNNING"},
			want: map[string]any{"sessions": []any{mustJSON(t, sessionJSON)}}, wantCall: &call{method: "GET", path: "/v1/sessions", query: "status=RUNNING"}},
		{name: "create_session", method: "create_session", setup: setup, args: map[string]any{"browserSettings": map[string]any{"viewport": map[string]any{"width": int64(1280), "height": int64(720)}}, "extensionId": "ext-9"},
			want: withConnect,
			wantCall: &call{method: "POST", path: "/v1/sessions", body: map[string]any{"projectId": project, "extensionId": "ext-9", "timeout": float64(3600), "keepAlive": false,
				"browserSettings": map[string]any{"viewport": map[string]any{"width": float64(1280), "height": float64(720)}}}}},
		{name: "create_session in another project", method: "create_session", setup: setup, args: map[string]any{"projectId": "proj-other", "keepAlive": true, "timeout": int64(600), "proxies": true},
			want:     withConnect,
			wantCall: &call{method: "POST", path: "/v1/sessions", body: map[string]any{"projectId": "proj-other", "timeout": float64(600), "keepAlive": true, "proxies": true, "browserSettings": map[string]any{}}}},
		{name: "get_session", method: "get_session", setup: setup, args: map[string]any{"id": "sess-1"}, want: julepSession, wantCall: &call{method: "GET", path: "/v1/sessions/sess-1"}},
		{name: "complete_session", method: "complete_session", setup: setup, args: map[string]any{"id": "sess-1"}, want: map[string]any{"success": true},
			wantCall: &call{method: "POST", path: "/v1/sessions/sess-1", body: map[string]any{"projectId": project, "status": "REQUEST_RELEASE"}}},
		{name: "complete unknown session", method: "complete_session", setup: setup, args: map[string]any{"id": "nope"}, kind: fault.Provider, msg: "Session not found"},
		{name: "get_live_urls", method: "get_live_urls", setup: setup, args: map[string]any{"id": "sess-1"},
			want:     map[string]any{"urls": mustJSON(t, `{"debuggerFullscreenUrl":"https://www.browserbase.com/devtools-fullscreen/inspector.html?wss=x","debuggerUrl":"https://www.browserbase.com/devtools/inspector.html?wss=x","wsUrl":"wss://connect.browserbase.com/debug/sess-1/devtools/browser/x","pages":[{"id":"p1","url":"https://example.com/","title":"Example"}]}`)},
			wantCall: &call{method: "GET", path: "/v1/sessions/sess-1/debug"}},
		{name: "install extension (GitHub redirect followed through the guard)", method: "install_extension_from_github", setup: setup, args: map[string]any{"repositoryName": "acme/ext", "ref": "v1.0"},
			want: map[string]any{"id": "ext-9"}, wantCall: &call{method: "POST", path: "/v1/extensions", file: "acme-ext-v1.0.zip:PK\x03\x04zip of /codeload/acme/ext/archive/refs/tags/v1.0.zip"}},
		{name: "extension tag missing on GitHub", method: "install_extension_from_github", setup: setup, args: map[string]any{"repositoryName": "acme/ext", "ref": "v9"}, kind: fault.Provider, msg: "downloading acme/ext@v9 from GitHub"},
		{name: "extension without ref", method: "install_extension_from_github", setup: setup, args: map[string]any{"repositoryName": "acme/ext"}, kind: fault.InvalidInput, field: "arguments.ref"},
		{name: "bad repository name", method: "install_extension_from_github", setup: setup, args: map[string]any{"repositoryName": "../../etc", "ref": "v1"}, kind: fault.InvalidInput, field: "arguments.repositoryName"},
		{name: "bad status", setup: setup, args: map[string]any{"status": "PAUSED"}, kind: fault.InvalidInput, field: "arguments.status"},
		{name: "setup api_url", setup: map[string]any{"api_key": key, "project_id": project, "api_url": srv.URL}, args: map[string]any{},
			want: map[string]any{"sessions": []any{mustJSON(t, sessionJSON)}}, wantCall: &call{method: "GET", path: "/v1/sessions"}},
		{name: "bad key", setup: map[string]any{"api_key": "bb_wrong_key_0", "project_id": project}, args: map[string]any{}, kind: fault.Provider, msg: "refused the credentials in the setup (HTTP 401)"},
		{name: "no project", setup: map[string]any{"api_key": key}, args: map[string]any{}, kind: fault.InvalidInput, field: "setup.project_id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake.mu.Lock()
			fake.calls = nil
			fake.mu.Unlock()
			got, err := r.Execute(context.Background(), "browserbase", tc.method, tc.setup, tc.args)
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
			fake.mu.Lock()
			defer fake.mu.Unlock()
			if len(fake.calls) != 1 || !reflect.DeepEqual(fake.calls[0], *tc.wantCall) {
				t.Errorf("calls %+v\nwant  %+v", fake.calls, *tc.wantCall)
			}
		})
	}
	integrationstest.RunFaults(t, r, &fake.faults, "browserbase", "", setup, map[string]any{}, integrationstest.StandardFaults(
		`{"statusCode":429,"error":"Too Many Requests","message":"Rate limit exceeded"}`, `{"statusCode":503,"error":"Service Unavailable"}`))
}

func mustJSON(t *testing.T, s string) any {
	t.Helper()
	v, err := jsonv.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
