package app_test

import (
	"bytes"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// badCase is one bad request to one route.
type badCase struct {
	name  string
	dev   string // "" sends no Authorization header
	token string // when set, sent instead of dev's token
	path  string // escaped
	query string
	body  []byte
}

// TestBadInputEveryRoute walks every route the routers know (app.APIRouter and the chat
// function's, with their OpenAPI operations) and sends each the bad requests that apply to it: no
// or a bad token, bad path ids, bad queries, and for the routes with a body malformed JSON, wrong
// types (the whole body and each typed field of its schema), an unknown field, an empty body and
// bodies over 256 KiB, 1 MiB and 6 MB. Each must be a 4xx with an error message, never a 5xx, and
// the developer's items in the table must be unchanged. The path ids are the developer's own real
// ids, so a request that got past its checks would have something to change.
func TestBadInputEveryRoute(t *testing.T) {
	l := local(t)
	routes, schemas := allRoutes(t)
	dev := newDev("bad")
	w := seed(t, l, dev)

	counts := map[string]int{}
	total := 0
	// The table after one case is the table before the next: one scan per case.
	last := l.items(t, dev)
	for _, r := range routes {
		if r.public {
			continue // GET /healthz and GET /openapi.json take no input
		}
		base, missing, ok := fill(r.path, w.ids(r.path))
		if !ok {
			t.Errorf("%s: no id for the path parameter {%s}: add it to world.ids", r, missing)
			continue
		}
		cases := badCases(t, r, base, dev, schemas, w)
		for _, c := range cases {
			t.Run(r.String()+"/"+c.name, func(t *testing.T) {
				before := last
				var a answer
				if c.token != "" {
					a = l.doToken(t, c.token, r.method, c.path, c.query, c.body)
				} else {
					a = l.do(t, c.dev, r.method, c.path, c.query, c.body)
				}
				if a.status < 400 || a.status > 499 {
					t.Errorf("answer %s, want a 4xx", a)
				} else if m := a.errMessage(); m == "" || m == "internal error" {
					t.Errorf("answer %s has no error message a person can act on", a)
				}
				if r.method == "GET" {
					return // reads: the table is compared once after the route's cases (below)
				}
				last = l.items(t, dev)
				if d := changes(before, last); d != "" {
					t.Errorf("answer %s, and the table changed: %s", a, d)
				}
			})
		}
		if r.method == "GET" {
			before := last
			last = l.items(t, dev)
			if d := changes(before, last); d != "" {
				t.Errorf("%s: the table changed during its %d bad requests: %s", r, len(cases), d)
			}
		}
		counts[r.String()] = len(cases)
		total += len(cases)
	}
	var keys []string
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "bad-input cases per route:\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "  %-58s %3d\n", k, counts[k])
	}
	fmt.Fprintf(&b, "  %-58s %3d (%d routes)", "total", total, len(keys))
	t.Log(b.String())
	if len(keys) < 40 {
		t.Errorf("only %d routes walked; the routers list more", len(keys))
	}
}

// badCases are the bad requests that apply to route r, whose path with dev's real ids is base.
func badCases(t *testing.T, r route, base, dev string, schemas map[string]any, w *world) []badCase {
	var cs []badCase
	add := func(name, path, query string, body []byte) {
		cs = append(cs, badCase{name: name, dev: dev, path: path, query: query, body: body})
	}
	// The body a bad path or query is sent with: an empty object where a body is documented.
	var plain []byte
	if r.hasBody() {
		plain = []byte(`{}`)
	}

	cs = append(cs,
		badCase{name: "no bearer token", path: base, body: plain},
		badCase{name: "a malformed token", token: "not.a.jwt", path: base, body: plain},
		badCase{name: "a token signed by another key", token: forgedToken(dev), path: base, body: plain},
	)

	for _, p := range r.params("path") {
		name := p["name"].(string)
		for _, bad := range []struct{ what, v string }{
			{"an unknown UUID", unknownID(r, name)},
			{"not an id", "not-an-id"},
			{"2000 characters", strings.Repeat("a", 2000)},
			{"an escaped path", "../../agents"},
			{"a NUL", "\x00"},
		} {
			if bad.v == "" {
				continue
			}
			path, _, _ := fill(r.path, func(p string) (string, bool) {
				if p == name {
					return bad.v, true
				}
				return w.ids(r.path)(p)
			})
			add("path {"+name+"} "+bad.what, path, "", plain)
		}
	}

	for _, p := range r.params("query") {
		name := p["name"].(string)
		schema, _ := p["schema"].(map[string]any)
		var vals []string
		switch {
		case name == "limit":
			vals = []string{"-1", "0", "101", "abc", "1.5", "99999999999999999999"}
		case name == "cursor":
			vals = []string{"not-a-cursor!!", strings.Repeat("c", 5000)}
		case schema["enum"] != nil:
			vals = []string{"zz_bogus"}
		case schema["type"] == "integer":
			vals = []string{"abc"}
		}
		for _, v := range vals {
			shown := v
			if len(shown) > 20 {
				shown = fmt.Sprintf("%d characters", len(v))
			}
			add("query "+name+"="+shown, base, url.Values{name: {v}}.Encode(), plain)
		}
	}
	if len(r.params("query")) > 0 {
		add("a malformed query string", base, "limit=%zz", plain)
	}

	pad := func(n int) []byte { return []byte(`{"zz_padding":"` + strings.Repeat("x", n) + `"}`) }
	switch r.method {
	case "POST", "PUT", "PATCH":
	default:
		return cs
	}
	// Bodies over every limit apply to every writing route: the router refuses them before any
	// handler reads them.
	add("a body over 1 MiB", base, "", pad(1<<20+1))
	add("a body over 6 MB", base, "", pad(6<<20+1))
	if !r.hasBody() {
		return cs
	}
	for _, b := range []struct{ what, body string }{
		{"malformed JSON: cut short", `{"name": `},
		{"malformed JSON: bare key", `{name: 1}`},
		{"malformed JSON: trailing data", `{} {}`},
		{"malformed JSON: invalid UTF-8", "{\"name\": \"\xff\xfe\"}"},
		{"wrong type: an array", `[]`},
		{"wrong type: a string", `"body"`},
		{"wrong type: a number", `42`},
		{"wrong type: null", `null`},
		{"an unknown field", `{"zz_unknown_field": 1}`},
	} {
		add(b.what, base, "", []byte(b.body))
	}
	add("an empty body", base, "", nil)
	add("a body over 256 KiB", base, "", pad(300<<10))
	add("a body over 256 KiB, malformed", base, "", append([]byte(`{"a":"`), bytes.Repeat([]byte("x"), 300<<10)...))

	// Each typed property of the body's schema, with a value of another type.
	schema := r.requestSchema(schemas)
	props, _ := schema["properties"].(map[string]any)
	var names []string
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		prop := resolve(schemas, props[k])
		typ, _ := prop["type"].(string)
		var wrong string
		switch typ {
		case "string":
			wrong = `12345`
		case "integer", "number":
			wrong = `"not a number"`
		case "boolean":
			wrong = `"yes"`
		case "object":
			wrong = `"not an object"`
		case "array":
			wrong = `{"not": "an array"}`
		default:
			continue // a union or free-form value: no single wrong type
		}
		add("wrong type: "+k+" = "+wrong, base, "", []byte(`{"`+k+`": `+wrong+`}`))
	}
	return cs
}

// createsWithID are Julep's create_or_update routes: an unknown id in the path is the id of the
// record they make, not a bad request.
var createsWithID = map[string]string{"POST /agents/{agent_id}": "agent_id", "POST /users/{user_id}": "user_id",
	"POST /agents/{agent_id}/tasks/{task_id}": "task_id", "POST /sessions/{session_id}": "session_id"}

// unknownID is a UUID no record has, or "" where the route creates with the id it is given.
func unknownID(r route, param string) string {
	if createsWithID[r.String()] == param {
		return ""
	}
	return uuid.Must(uuid.NewV7()).String()
}
