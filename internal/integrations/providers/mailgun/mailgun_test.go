package mailgun_test

import (
	"context"
	"net/http"
	"net/url"
	"reflect"
	"sync"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/integrations/integrationstest"
	"sinew/internal/integrations/providers/mailgun"
)

const key = "key-3ax6xnjp29jd6fds4gc373sgvjxteol0"

type sent struct {
	path string
	form url.Values
}

// fakeMailgun speaks the Messages API: Basic auth api:<key>, a form body, {"id","message"} back;
// 401 "Forbidden" for a bad key, 404 for an unknown domain.
type fakeMailgun struct {
	t      *testing.T
	faults integrationstest.Faults
	mu     sync.Mutex
	last   *sent
}

func (f *fakeMailgun) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.faults.Serve(w) {
		return
	}
	user, pass, ok := r.BasicAuth()
	if !ok || user != "api" || pass != key {
		w.WriteHeader(401)
		_, _ = w.Write([]byte("Forbidden"))
		return
	}
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		f.t.Errorf("unexpected request %s %s", r.Method, r.Header.Get("Content-Type"))
	}
	if err := r.ParseForm(); err != nil {
		f.t.Error(err)
	}
	f.mu.Lock()
	f.last = &sent{path: r.URL.Path, form: r.PostForm}
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path == "/v3/email.unknown.org/messages" {
		w.WriteHeader(404)
		_, _ = w.Write([]byte(`{"message":"Domain not found: email.unknown.org"}`))
		return
	}
	_, _ = w.Write([]byte(`{"id":"<20240101000000.1.ABC@email.example.com>","message":"Queued. Thank you."}`))
}

func TestSendEmail(t *testing.T) {
	fake := &fakeMailgun{t: t}
	r, _ := integrationstest.Start(t, mailgun.Provider, fake, nil)
	setup := map[string]any{"api_key": key}
	base := map[string]any{"from": "bot@example.com", "to": "ann@example.org", "subject": "Hi", "body": "Hello there"}
	with := func(kv ...any) map[string]any {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name     string
		setup    map[string]any
		args     map[string]any
		wantPath string
		wantForm url.Values
		kind     fault.Kind
		msg      string
		field    string
	}{
		{name: "send", setup: setup, args: base, wantPath: "/v3/email.example.com/messages",
			wantForm: url.Values{"from": {"bot@example.com"}, "to": {"ann@example.org"}, "subject": {"Hi"}, "text": {"Hello there"}}},
		{name: "cc and bcc", setup: setup, args: with("cc", "a@x.io, b@y.io", "bcc", "c@z.io", "from", "bot@email.example.com"), wantPath: "/v3/email.example.com/messages",
			wantForm: url.Values{"from": {"bot@email.example.com"}, "to": {"ann@example.org"}, "subject": {"Hi"}, "text": {"Hello there"}, "cc": {"a@x.io, b@y.io"}, "bcc": {"c@z.io"}}},
		{name: "setup domain", setup: map[string]any{"api_key": key, "domain": "mg.example.com"}, args: base, wantPath: "/v3/mg.example.com/messages",
			wantForm: url.Values{"from": {"bot@example.com"}, "to": {"ann@example.org"}, "subject": {"Hi"}, "text": {"Hello there"}}},
		{name: "unknown domain", setup: setup, args: with("from", "x@unknown.org"), kind: fault.Provider, msg: "Domain not found"},
		{name: "bad key", setup: map[string]any{"api_key": "key-wrong-000000"}, args: base, kind: fault.Provider, msg: "refused the credentials in the setup (HTTP 401)"},
		{name: "bad from", setup: setup, args: with("from", "not-an-address"), kind: fault.InvalidInput, field: "arguments.from"},
		{name: "bad to", setup: setup, args: with("to", "ann@"), kind: fault.InvalidInput, field: "arguments.to"},
		{name: "bad cc", setup: setup, args: with("cc", "a@x.io,nope"), kind: fault.InvalidInput, field: "arguments.cc", msg: `"nope"`},
		{name: "bad bcc", setup: setup, args: with("bcc", "x"), kind: fault.InvalidInput, field: "arguments.bcc"},
		{name: "bad setup domain", setup: map[string]any{"api_key": key, "domain": "../../admin"}, args: base, kind: fault.InvalidInput, field: "setup.domain"},
		{name: "missing subject", setup: setup, args: map[string]any{"from": "bot@example.com", "to": "ann@example.org", "body": "b"}, kind: fault.InvalidInput, field: "arguments.subject"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake.mu.Lock()
			fake.last = nil
			fake.mu.Unlock()
			got, err := r.Execute(context.Background(), "mailgun", "send_email", tc.setup, tc.args)
			if tc.kind != "" {
				integrationstest.CheckErr(t, err, tc.kind, tc.msg, tc.setup)
				if fault.FieldOf(err) != tc.field {
					t.Errorf("field %q, want %q", fault.FieldOf(err), tc.field)
				}
				if tc.kind == fault.InvalidInput && fake.last != nil {
					t.Error("a request was sent for invalid input")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, map[string]any{"success": true}) {
				t.Errorf("output %v", got)
			}
			fake.mu.Lock()
			defer fake.mu.Unlock()
			if fake.last == nil || fake.last.path != tc.wantPath || !reflect.DeepEqual(fake.last.form, tc.wantForm) {
				t.Fatalf("sent %+v, want %s %v", fake.last, tc.wantPath, tc.wantForm)
			}
		})
	}
	integrationstest.RunFaults(t, r, &fake.faults, "mailgun", "", setup, base,
		integrationstest.StandardFaults(`{"message":"Too many requests"}`, `{"message":"Service Unavailable"}`))
}
