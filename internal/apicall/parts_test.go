package apicall_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"sinew/internal/apicall"
	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/tool"
)

// TestParts sends every request part to the echo server and checks what it received.
func TestParts(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(echo))
	type check func(t *testing.T, seen map[string]any)
	eq := func(key string, want any) check {
		return func(t *testing.T, seen map[string]any) {
			t.Helper()
			if got := seen[key]; !jsonv.Equal(got, jsonv.Normalize(want)) {
				t.Errorf("%s = %s, want %s", key, jsonv.EncodeString(got), jsonv.EncodeString(want))
			}
		}
	}
	hdr := func(name, want string) check {
		return func(t *testing.T, seen map[string]any) {
			t.Helper()
			if got := header(seen, name); got != want {
				t.Errorf("header %s = %q, want %q", name, got, want)
			}
		}
	}
	body := func(want string) check {
		return func(t *testing.T, seen map[string]any) {
			t.Helper()
			if got := unb64(t, seen["body"]); got != want {
				t.Errorf("body = %q, want %q", got, want)
			}
		}
	}
	q := func(k string, vs ...string) map[string]any {
		arr := make([]any, len(vs))
		for i, v := range vs {
			arr[i] = v
		}
		return map[string]any{k: arr}
	}
	tests := []struct {
		name   string
		def    *tool.APICallDef
		in     apicall.Input
		checks []check
	}{
		{"method and path from the definition", e.def("POST", "/fixed/path"), apicall.Input{},
			[]check{eq("method", "POST"), eq("path", "/fixed/path"), body("")}},
		{"params object", e.def("GET", "/p"), apicall.Input{Call: map[string]any{"params": map[string]any{"q": "go lang", "n": int64(3), "ok": true, "f": 1.5}}},
			[]check{eq("raw_query", "f=1.5&n=3&ok=true&q=go+lang")}},
		{"params string", e.def("GET", "/p"), apicall.Input{Call: map[string]any{"params": "?a=1&a=2&b=x%20y"}},
			[]check{eq("query", map[string]any{"a": []any{"1", "2"}, "b": []any{"x y"}})}},
		{"params array repeats the key", e.def("GET", "/p"), apicall.Input{Call: map[string]any{"params": map[string]any{"tag": []any{"a", "b"}}}},
			[]check{eq("query", q("tag", "a", "b"))}},
		{"params merge with the URL's query, params win", e.def("GET", "/p?keep=1&over=url"),
			apicall.Input{Call: map[string]any{"params": map[string]any{"over": "call", "add": "x"}}},
			[]check{eq("query", map[string]any{"keep": []any{"1"}, "over": []any{"call"}, "add": []any{"x"}})}},
		{"params null drops a key of the URL", e.def("GET", "/p?drop=1&keep=2"),
			apicall.Input{Call: map[string]any{"params": map[string]any{"drop": nil}}},
			[]check{eq("query", q("keep", "2"))}},
		{"params from the definition (string)", &tool.APICallDef{Method: "GET", URL: e.srv.URL + "/p", Params: json.RawMessage(`"x=1&y=2"`)},
			apicall.Input{Call: map[string]any{"params": map[string]any{"y": "call"}}},
			[]check{eq("query", map[string]any{"x": []any{"1"}, "y": []any{"call"}})}},
		{"json", e.def("POST", "/j"), apicall.Input{Call: map[string]any{"json": map[string]any{"a": int64(1), "b": []any{true, nil}, "html": "<&>"}}},
			[]check{eq("content_type", "application/json"), body(`{"a":1,"b":[true,null],"html":"<&>"}`)}},
		{"json_ alias", e.def("POST", "/j"), apicall.Input{Call: map[string]any{"json_": map[string]any{"a": "alias"}}},
			[]check{body(`{"a":"alias"}`)}},
		{"json array", e.def("POST", "/j"), apicall.Input{Call: map[string]any{"json": []any{int64(1), int64(2)}}},
			[]check{body(`[1,2]`)}},
		{"json merges the definition's keys", &tool.APICallDef{Method: "POST", URL: e.srv.URL + "/j", JSON: map[string]any{"model": "x", "n": 1}},
			apicall.Input{Call: map[string]any{"json": map[string]any{"n": int64(2)}}},
			[]check{body(`{"model":"x","n":2}`)}},
		{"json keeps the caller's content type", e.def("POST", "/j"),
			apicall.Input{Call: map[string]any{"json": map[string]any{}, "headers": map[string]any{"content-type": "application/vnd.api+json"}}},
			[]check{eq("content_type", "application/vnd.api+json"), body(`{}`)}},
		{"data is a form", e.def("POST", "/f"), apicall.Input{Call: map[string]any{"data": map[string]any{"a": "1 2", "b": []any{"x", int64(3)}, "skip": nil}}},
			[]check{eq("content_type", "application/x-www-form-urlencoded"), eq("form", map[string]any{"a": []any{"1 2"}, "b": []any{"x", "3"}})}},
		{"content is base64 decoded", e.def("PUT", "/c"),
			apicall.Input{Call: map[string]any{"content": b64("raw \x00\xff bytes"), "headers": map[string]any{"Content-Type": "application/octet-stream"}}},
			[]check{eq("method", "PUT"), body("raw \x00\xff bytes"), eq("content_type", "application/octet-stream")}},
		{"content from the definition", &tool.APICallDef{Method: "POST", URL: e.srv.URL + "/c", Content: ptr(b64("from def"))}, apicall.Input{},
			[]check{body("from def")}},
		{"files are multipart, with data fields", e.def("POST", "/m"), apicall.Input{Call: map[string]any{
			"data": map[string]any{"title": "report"},
			"files": map[string]any{
				"doc":  map[string]any{"filename": `a "b".pdf`, "content": b64("%PDF"), "content_type": "application/pdf"},
				"note": "plain text",
				"raw":  map[string]any{"content": b64("xyz")},
			}}},
			[]check{eq("parts", []any{
				map[string]any{"name": "title", "filename": "", "content_type": "", "content": "report"},
				map[string]any{"name": "doc", "filename": `a "b".pdf`, "content_type": "application/pdf", "content": "%PDF"},
				map[string]any{"name": "note", "filename": "note", "content_type": "text/plain; charset=utf-8", "content": "plain text"},
				map[string]any{"name": "raw", "filename": "raw", "content_type": "application/octet-stream", "content": "xyz"},
			})}},
		{"cookies", &tool.APICallDef{Method: "GET", URL: e.srv.URL + "/k", Cookies: map[string]string{"sess": "def", "lang": "en"}},
			apicall.Input{Call: map[string]any{"cookies": map[string]any{"sess": "call", "n": int64(7)}}},
			[]check{hdr("Cookie", "lang=en; n=7; sess=call")}},
		{"headers, the definition's win over the call's", &tool.APICallDef{Method: "GET", URL: e.srv.URL + "/h", Headers: map[string]string{"X-Fixed": "def", "accept": "application/json"}},
			apicall.Input{Call: map[string]any{"headers": map[string]any{"x-fixed": "call", "X-Extra": int64(5), "Accept": "text/html", "X-Multi": []any{"a", "b"}}}},
			[]check{hdr("X-Fixed", "def"), hdr("Accept", "application/json"), hdr("X-Extra", "5"), hdr("X-Multi", "a,b"), hdr("User-Agent", "sinew-apicall/1")}},
		{"path placeholders are escaped", e.def("GET", "/users/{id}/files/{name}"),
			apicall.Input{Call: map[string]any{"path": map[string]any{"id": int64(42), "name": "a/b c?d#é"}}},
			[]check{eq("path", "/users/42/files/a%2Fb%20c%3Fd%23%C3%A9")}},
		{"a placeholder cannot climb the path", e.def("GET", "/users/{id}/x"),
			apicall.Input{Call: map[string]any{"path": map[string]any{"id": ".."}}},
			[]check{eq("path", "/users/%2E%2E/x")}},
		{"HEAD", e.def("HEAD", "/h"), apicall.Input{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.def.Method == "HEAD" {
				res, err := e.ex.Execute(t.Context(), tt.def, tt.in)
				if err != nil || res.StatusCode != 200 || res.JSON != nil || *res.Content != "" {
					t.Fatalf("HEAD: %+v, %v", res, err)
				}
				return
			}
			seen := echoed(t, e, tt.def, tt.in)
			for _, c := range tt.checks {
				c(t, seen)
			}
		})
	}
}

// TestMergeOrder checks MergeParts' order (definition < call < args < setup) part by part, on the pure MergeParts.
func TestMergeOrder(t *testing.T) {
	def := &tool.APICallDef{
		Method: "POST", URL: "https://api.example.com/x",
		Headers:         map[string]string{"Authorization": "def", "X-Def": "def", "X-Call": "def"},
		Params:          json.RawMessage(`{"a":"def","b":"def","c":"def","d":"def"}`),
		JSON:            map[string]any{"a": "def", "b": "def"},
		Timeout:         ptr(10),
		FollowRedirects: ptr(true),
	}
	call := map[string]any{
		"headers": map[string]any{"x-call": "call", "X-Only-Call": "call", "authorization": "call"},
		"params":  map[string]any{"b": "call", "c": "call", "d": "call"},
		"json_":   map[string]any{"b": "call", "c": "call"},
		"timeout": int64(20), "follow_redirects": false,
		"path": map[string]any{"id": "call"},
	}
	args := map[string]any{
		"headers": map[string]any{"X-Def": "args", "X-Args": "args"},
		"params":  "c=args&d=args",
		"timeout": 30.5,
	}
	setup := map[string]any{
		"headers":                  map[string]any{"AUTHORIZATION": "setup"},
		"params":                   map[string]any{"d": "setup"},
		"include_response_content": false,
	}
	before := jsonv.EncodeString(call) + jsonv.EncodeString(args) + jsonv.EncodeString(setup)
	got, err := apicall.MergeParts(def, call, args, setup)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"headers": map[string]any{
			"Authorization": "setup", // setup wins over everything
			"X-Def":         "args",  // metadata args win over the definition
			"X-Call":        "def",   // the definition wins over the call
			"X-Only-Call":   "call",
			"X-Args":        "args",
		},
		"params":                   map[string]any{"a": "def", "b": "call", "c": "args", "d": "setup"},
		"json":                     map[string]any{"a": "def", "b": "call", "c": "call"},
		"timeout":                  30.5,
		"follow_redirects":         false, // a call may turn redirects off, never on
		"include_response_content": false,
		"path":                     map[string]any{"id": "call"},
	}
	if !jsonv.Equal(jsonv.Normalize(got), jsonv.Normalize(want)) {
		t.Errorf("MergeParts =\n%s\nwant\n%s", jsonv.EncodeString(got), jsonv.EncodeString(want))
	}
	if after := jsonv.EncodeString(call) + jsonv.EncodeString(args) + jsonv.EncodeString(setup); after != before {
		t.Error("MergeParts changed its inputs")
	}
	// The result shares nothing with the inputs.
	got["params"].(map[string]any)["b"] = "changed"
	if call["params"].(map[string]any)["b"] != "call" {
		t.Error("the merged parts share a map with the call")
	}

	t.Run("scalars replace whole, later layers win", func(t *testing.T) {
		for _, tt := range []struct {
			name                    string
			call, args, setup, want map[string]any
		}{
			{"content", map[string]any{"content": "Y2FsbA=="}, map[string]any{"content": "YXJncw=="}, nil, map[string]any{"content": "YXJncw=="}},
			{"json replaced by a non-object", map[string]any{"json": map[string]any{"a": 1}}, map[string]any{"json": []any{1}}, nil, map[string]any{"json": []any{1}}},
			{"null is not given", map[string]any{"timeout": 5}, map[string]any{"timeout": nil}, nil, map[string]any{"timeout": 5}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				got, err := apicall.MergeParts(&tool.APICallDef{Method: "GET", URL: "http://x/"}, tt.call, tt.args, tt.setup)
				if err != nil {
					t.Fatal(err)
				}
				if !jsonv.Equal(jsonv.Normalize(got), jsonv.Normalize(tt.want)) {
					t.Errorf("got %s, want %s", jsonv.EncodeString(got), jsonv.EncodeString(tt.want))
				}
			})
		}
	})

	// End to end: the server sees the merged request.
	e := newEnv(t, http.HandlerFunc(echo))
	d := &tool.APICallDef{Method: "POST", URL: e.srv.URL + "/m", Headers: map[string]string{"X-Key": "def"}, Params: json.RawMessage(`{"a":"def"}`)}
	seen := echoed(t, e, d, apicall.Input{
		Call:      map[string]any{"headers": map[string]any{"X-Key": "call"}, "params": map[string]any{"a": "call", "b": "call"}},
		MetaArgs:  map[string]any{"params": map[string]any{"b": "args"}},
		MetaSetup: map[string]any{"headers": map[string]any{"x-key": "setup"}},
	})
	if got := header(seen, "X-Key"); got != "setup" {
		t.Errorf("X-Key = %q, want setup", got)
	}
	if got := seen["raw_query"]; got != "a=call&b=args" {
		t.Errorf("query = %v, want a=call&b=args", got)
	}
}

// TestInvalidInput: bad arguments are InvalidInput errors naming the field, and nothing is sent.
func TestInvalidInput(t *testing.T) {
	var hits int
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	good := e.def("GET", "/users/{id}")
	path := map[string]any{"id": "1"}
	with := func(kv ...any) map[string]any {
		m := map[string]any{"path": path}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name  string
		def   *tool.APICallDef
		in    apicall.Input
		field string
		msg   string
	}{
		{"unknown key", good, apicall.Input{Call: with("body", "x")}, "body", `unknown api_call argument "body"`},
		{"url cannot be set", good, apicall.Input{Call: with("url", "http://169.254.169.254/")}, "url", "the definition fixes the method and URL"},
		{"url cannot be set, even to null", good, apicall.Input{MetaArgs: map[string]any{"url": nil}}, "x-api_call-args.url", "the definition fixes the method and URL"},
		{"method cannot be set", good, apicall.Input{Call: with("method", "DELETE")}, "method", "the definition fixes the method and URL"},
		{"unknown key in setup", good, apicall.Input{Call: with(), MetaSetup: map[string]any{"token": "x"}}, "x-api_call-setup.token", `x-api_call-setup: unknown api_call argument "token"`},
		{"params wrong type", good, apicall.Input{Call: with("params", int64(1))}, "params", "params must be a query string or an object, got number"},
		{"params nested object", good, apicall.Input{Call: with("params", map[string]any{"q": map[string]any{}})}, "params.q", "params.q must be a string, number or boolean"},
		{"headers wrong type", good, apicall.Input{Call: with("headers", []any{"a"})}, "headers", "headers must be an object, got array"},
		{"header value object", good, apicall.Input{Call: with("headers", map[string]any{"X-A": map[string]any{}})}, "headers.X-A", "must be a string, number or boolean"},
		{"header name invalid", good, apicall.Input{Call: with("headers", map[string]any{"Bad Name": "x"})}, "headers.Bad Name", "not a valid header name"},
		{"header line break", good, apicall.Input{Call: with("headers", map[string]any{"X-A": "a\r\nX-Injected: 1"})}, "headers.X-A", "line break"},
		{"host header", good, apicall.Input{Call: with("headers", map[string]any{"host": "internal"})}, "headers.Host", "Host header is fixed"},
		{"cookie value", good, apicall.Input{Call: with("cookies", map[string]any{"a": "x; admin=1"})}, "cookies.a", "cannot carry"},
		{"cookies wrong type", good, apicall.Input{Call: with("cookies", "a=b")}, "cookies", "cookies must be an object"},
		{"data wrong type", good, apicall.Input{Call: with("data", "a=b")}, "data", "data must be an object"},
		{"content not base64", good, apicall.Input{Call: with("content", "not base64!")}, "content", "content must be base64"},
		{"content wrong type", good, apicall.Input{Call: with("content", map[string]any{})}, "content", "content must be a base64 string"},
		{"file without content", good, apicall.Input{Call: with("files", map[string]any{"f": map[string]any{"filename": "a"}})}, "files.f.content", "needs content"},
		{"file unknown key", good, apicall.Input{Call: with("files", map[string]any{"f": map[string]any{"content": "", "mode": "x"}})}, "files.f.mode", "unknown file key"},
		{"file wrong type", good, apicall.Input{Call: with("files", map[string]any{"f": int64(1)})}, "files.f", "files.f must be a string or"},
		{"two bodies", good, apicall.Input{Call: with("json", map[string]any{}, "data", map[string]any{"a": "b"})}, "data/files", "got json and data/files"},
		{"body conflict across layers", &tool.APICallDef{Method: "POST", URL: e.srv.URL + "/users/{id}", Content: ptr("")}, apicall.Input{Call: with("json", map[string]any{})}, "content", "got json and content"},
		{"json and json_", good, apicall.Input{Call: with("json", map[string]any{}, "json_", map[string]any{})}, "json_", "give json or json_, not both"},
		{"timeout too long", good, apicall.Input{Call: with("timeout", int64(601))}, "timeout", "at most 600 seconds"},
		{"timeout zero", good, apicall.Input{Call: with("timeout", int64(0))}, "timeout", "more than 0"},
		{"timeout wrong type", good, apicall.Input{Call: with("timeout", "30")}, "timeout", "timeout must be a number of seconds, got string"},
		{"follow_redirects wrong type", good, apicall.Input{Call: with("follow_redirects", "yes")}, "follow_redirects", "must be true or false"},
		{"follow_redirects on in the call", good, apicall.Input{Call: with("follow_redirects", true)}, "follow_redirects", "only by the tool's definition"},
		{"follow_redirects on in x-api_call-args", good, apicall.Input{Call: with(), MetaArgs: map[string]any{"follow_redirects": true}}, "x-api_call-args.follow_redirects", "only by the tool's definition"},
		{"follow_redirects on in x-api_call-setup", good, apicall.Input{Call: with(), MetaSetup: map[string]any{"follow_redirects": true}}, "x-api_call-setup.follow_redirects", "only by the tool's definition"},
		{"missing placeholder", good, apicall.Input{Call: map[string]any{}}, "path.id", "the URL needs path.id"},
		{"null placeholder", good, apicall.Input{Call: map[string]any{"path": map[string]any{"id": nil}}}, "path.id", "the URL needs path.id"},
		{"extra path key", good, apicall.Input{Call: with("path", map[string]any{"id": "1", "other": "x"})}, "path.other", "no {other} placeholder"},
		{"placeholder object", good, apicall.Input{Call: with("path", map[string]any{"id": []any{}})}, "path.id", "must be a string, number or boolean"},
		{"definition scheme", &tool.APICallDef{Method: "GET", URL: "file:///etc/passwd"}, apicall.Input{}, "api_call.url", "must be http or https"},
		{"definition without scheme", &tool.APICallDef{Method: "GET", URL: "example.com/x"}, apicall.Input{}, "api_call.url", "has no scheme"},
		{"placeholder in the host", &tool.APICallDef{Method: "GET", URL: "http://{host}/x"}, apicall.Input{Call: map[string]any{"path": map[string]any{"host": "10.0.0.1"}}}, "api_call.url", "only in its path"},
		{"definition method", &tool.APICallDef{Method: "FETCH", URL: e.srv.URL}, apicall.Input{}, "api_call.method", `"FETCH" is not one of`},
		{"definition params", &tool.APICallDef{Method: "GET", URL: e.srv.URL, Params: json.RawMessage(`[1]`)}, apicall.Input{}, "api_call.params", "must be a query string or an object"},
		{"no definition", nil, apicall.Input{}, "api_call", "no api_call definition"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.ex.Execute(t.Context(), tt.def, tt.in)
			if !fault.Is(err, fault.InvalidInput) {
				t.Fatalf("err = %v (kind %s), want InvalidInput", err, fault.KindOf(err))
			}
			if f := fault.FieldOf(err); f != tt.field {
				t.Errorf("field = %q, want %q", f, tt.field)
			}
			if !strings.Contains(fault.Message(err), tt.msg) {
				t.Errorf("message %q, want it to mention %q", fault.Message(err), tt.msg)
			}
		})
	}
	if hits != 0 {
		t.Errorf("the server got %d requests for invalid calls", hits)
	}
}

func TestParamsSchema(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(echo))
	def := e.def("GET", "/s")
	def.ParamsSchema = &tool.ParameterSchema{
		Type: "object",
		Properties: map[string]tool.PropertyDefinition{
			"params":  {Type: "object"},
			"headers": {Type: "object"},
		},
		Required:             []string{"params"},
		AdditionalProperties: ptr(false),
	}
	tests := []struct {
		name  string
		in    apicall.Input
		field string
	}{
		{"ok", apicall.Input{Call: map[string]any{"params": map[string]any{"q": "x"}}}, ""},
		{"required may come from metadata", apicall.Input{Call: map[string]any{}, MetaArgs: map[string]any{"params": map[string]any{"q": "x"}}}, ""},
		{"metadata parts are not the model's", apicall.Input{Call: map[string]any{"params": "q=x"}, MetaSetup: map[string]any{"cookies": map[string]any{"a": "b"}}}, "params"},
		{"required missing", apicall.Input{Call: map[string]any{"headers": map[string]any{}}}, "params"},
		{"not in the schema", apicall.Input{Call: map[string]any{"params": map[string]any{}, "json": map[string]any{}}}, "json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.ex.Execute(t.Context(), def, tt.in)
			if tt.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !fault.Is(err, fault.InvalidInput) || fault.FieldOf(err) != tt.field || !strings.Contains(fault.Message(err), "params_schema") {
				t.Fatalf("err = %v (field %q), want InvalidInput on %q", err, fault.FieldOf(err), tt.field)
			}
		})
	}
}

func TestResultShape(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("X-Repeat", "one")
		w.Header().Add("X-Repeat", "two")
		w.Header()["lower-raw"] = []string{"kept"}
		if r.URL.Path == "/text" {
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("not json"))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"n": 1, "f": 1.5, "big": 12345678901234567}`))
	}))
	res, err := e.ex.Execute(t.Context(), e.def("POST", "/json"), apicall.Input{})
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 201 {
		t.Errorf("status_code = %d", res.StatusCode)
	}
	if got := res.Headers["x-repeat"]; got != "one, two" {
		t.Errorf("x-repeat = %q, want %q", got, "one, two")
	}
	if got := res.Headers["lower-raw"]; got != "kept" {
		t.Errorf("lower-raw = %q", got)
	}
	for k := range res.Headers {
		if k != strings.ToLower(k) {
			t.Errorf("header key %q is not lower case", k)
		}
	}
	if want := map[string]any{"n": int64(1), "f": 1.5, "big": int64(12345678901234567)}; !reflect.DeepEqual(res.JSON, want) {
		t.Errorf("json = %#v, want %#v", res.JSON, want)
	}
	if res.Content == nil || unb64(t, *res.Content) != `{"n": 1, "f": 1.5, "big": 12345678901234567}` {
		t.Errorf("content = %v", res.Content)
	}

	res, err = e.ex.Execute(t.Context(), e.def("GET", "/text"), apicall.Input{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	if !strings.Contains(string(b), `"json":null`) || unb64(t, *res.Content) != "not json" {
		t.Errorf("a text answer = %s, want json null and the content", b)
	}

	for _, tt := range []struct {
		def, call *bool
		want      bool
	}{{nil, nil, true}, {ptr(false), nil, false}, {ptr(false), ptr(true), true}, {ptr(true), ptr(false), false}, {nil, ptr(false), false}} {
		d := e.def("GET", "/text")
		d.IncludeResponseContent = tt.def
		call := map[string]any{}
		if tt.call != nil {
			call["include_response_content"] = *tt.call
		}
		res, err := e.ex.Execute(t.Context(), d, apicall.Input{Call: call})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		if got := strings.Contains(string(b), `"content"`); got != tt.want {
			t.Errorf("def %v call %v: content present = %v, want %v (%s)", deref(tt.def), deref(tt.call), got, tt.want, b)
		}
	}
}

func deref(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}

func TestResponseSchema(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/good":
			w.Write([]byte(`{"id": 1, "tags": ["a"]}`))
		case "/bad":
			w.Write([]byte(`{"id": "one", "tags": ["a"]}`))
		default:
			w.Write([]byte(`<html>`))
		}
	}))
	schema := map[string]any{"type": "object", "required": []any{"id"}, "properties": map[string]any{
		"id": map[string]any{"type": "integer"}, "tags": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}}}
	for _, tt := range []struct{ path, msg string }{
		{"/good", ""},
		{"/bad", "response.id must be integer, got string"},
		{"/html", "is not JSON"},
	} {
		d := e.def("GET", tt.path)
		d.Schema = schema
		_, err := e.ex.Execute(t.Context(), d, apicall.Input{})
		if tt.msg == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.path, err)
			}
			continue
		}
		if !fault.Is(err, fault.Provider) || !strings.Contains(fault.Message(err), tt.msg) {
			t.Errorf("%s: err = %v, want Provider mentioning %q", tt.path, err, tt.msg)
		}
	}
}

// TestIdempotencyKey: every attempt of a call carries its id as Idempotency-Key, unless the
// request sets that header itself; without a call id nothing is added.
func TestIdempotencyKey(t *testing.T) {
	got := make(chan string, 4)
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get(apicall.IdempotencyHeader)
		w.Write([]byte(`{}`))
	}))
	tests := []struct {
		name string
		in   apicall.Input
		want string
	}{
		{"the call's id", apicall.Input{CallID: "call_AAAAAAAAAAAAAAAAAAAAAAAA"}, "call_AAAAAAAAAAAAAAAAAAAAAAAA"},
		{"the request's own key wins", apicall.Input{CallID: "call_AAAAAAAAAAAAAAAAAAAAAAAA",
			Call: map[string]any{"headers": map[string]any{"Idempotency-Key": "mine"}}}, "mine"},
		{"no call id, no header", apicall.Input{}, ""},
	}
	for _, tt := range tests {
		if _, err := e.ex.Execute(t.Context(), e.def("POST", "/x"), tt.in); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if h := <-got; h != tt.want {
			t.Errorf("%s: Idempotency-Key %q, want %q", tt.name, h, tt.want)
		}
	}
}
