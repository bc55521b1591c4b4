package secretsapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"sinew/internal/httpapi"
	"sinew/internal/secrets/secretstest"
	"sinew/internal/secretsapi"
	"sinew/internal/store"
	"sinew/internal/testenv/ddblocal"
)

func TestMain(m *testing.M) { ddblocal.Main(m) }

type env struct {
	t    *testing.T
	st   *store.Store
	base string
	logs *secretstest.Logs
	hay  secretstest.Haystacks
}

func bearer(r *http.Request) (map[string]string, error) {
	dev, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || dev == "" {
		return nil, errors.New("no bearer")
	}
	return map[string]string{"sub": dev}, nil
}

func newEnv(t *testing.T) *env {
	t.Helper()
	k := secretstest.StartKMS(t)
	db := ddblocal.Client(t)
	st := store.New(db, ddblocal.NewTable(t, db), k.Envelope(t))
	logs := &secretstest.Logs{}
	rt := httpapi.New(httpapi.Options{Logger: logs.Logger(nil)})
	secretsapi.Register(rt, secretsapi.Deps{Store: st})
	srv := httptest.NewServer(httpapi.HTTPHandler(rt.ServeEvent, bearer))
	t.Cleanup(srv.Close)
	return &env{t: t, st: st, base: srv.URL, logs: logs, hay: secretstest.Haystacks{}}
}

type answer struct {
	status int
	body   map[string]any
	raw    string
}

func (e *env) do(dev, method, path, body string) answer {
	e.t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, e.base+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if dev != "" {
		req.Header.Set("Authorization", "Bearer "+dev)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	e.hay.Add("answers", string(b))
	a := answer{status: resp.StatusCode, raw: string(b)}
	_ = json.Unmarshal(b, &a.body)
	return a
}

func (a answer) errField() string {
	e, _ := a.body["error"].(map[string]any)
	f, _ := e["field"].(string)
	return f
}

func TestPutCreatesThenReplaces(t *testing.T) {
	e := newEnv(t)
	const v1, v2 = "first-value-0a1b2c3d", "second-value-4e5f6a7b"
	a := e.do("dev-1", "PUT", "/secrets/SMTP_PW", `{"value":"`+v1+`"}`)
	if a.status != 201 || a.body["name"] != "SMTP_PW" || a.body["created_at"] == nil || a.body["updated_at"] == nil || len(a.body) != 3 {
		t.Fatalf("create: %d %s", a.status, a.raw)
	}
	if a := e.do("dev-1", "PUT", "/secrets/SMTP_PW", `{"value":"`+v2+`"}`); a.status != 204 || a.raw != "" {
		t.Fatalf("replace: %d %s", a.status, a.raw)
	}
	got, err := e.st.OpenSecret(context.Background(), "dev-1", "SMTP_PW")
	if err != nil || string(got) != v2 {
		t.Fatalf("stored %q, %v", got, err)
	}
	l := e.do("dev-1", "GET", "/secrets", "")
	items, _ := l.body["items"].([]any)
	if l.status != 200 || len(items) != 1 {
		t.Fatalf("list: %d %s", l.status, l.raw)
	}
	it := items[0].(map[string]any)
	if it["name"] != "SMTP_PW" || it["created_at"] == it["updated_at"] || len(it) != 3 {
		t.Errorf("listed %v: want name and both dates, created before updated", it)
	}
	e.hay.Add("logs", e.logs.String())
	secretstest.AssertNoLeak(t, e.hay, []string{v1, v2})
}

func TestPutRefusesBadInput(t *testing.T) {
	e := newEnv(t)
	big := strings.Repeat("a", secretsapi.MaxValueBytes+1)
	tests := []struct {
		name, path, body string
		status           int
		field            string
	}{
		{"name with a dash", "/secrets/bad-name", `{"value":"v"}`, 400, "name"},
		{"name starting with a digit", "/secrets/1abc", `{"value":"v"}`, 400, "name"},
		{"name too long", "/secrets/" + strings.Repeat("a", 65), `{"value":"v"}`, 400, "name"},
		{"no value", "/secrets/A", `{}`, 400, "value"},
		{"null value", "/secrets/A", `{"value":null}`, 400, "value"},
		{"empty value", "/secrets/A", `{"value":""}`, 400, "value"},
		{"number value", "/secrets/A", `{"value":5}`, 400, "value"},
		{"unknown field", "/secrets/A", `{"value":"v","other":1}`, 400, "other"},
		{"the redaction marker", "/secrets/A", `{"value":"<redacted>"}`, 400, "value"},
		{"not JSON", "/secrets/A", `value=v`, 400, ""},
		{"over 64 KiB", "/secrets/A", `{"value":"` + big + `"}`, 413, "value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := e.do("dev-1", "PUT", tc.path, tc.body)
			if a.status != tc.status || (tc.field != "" && a.errField() != tc.field) {
				t.Errorf("%d field %q, want %d field %q: %s", a.status, a.errField(), tc.status, tc.field, a.raw)
			}
		})
	}
	if l := e.do("dev-1", "GET", "/secrets", ""); !strings.Contains(l.raw, `"items":[]`) {
		t.Errorf("refused writes stored something: %s", l.raw)
	}
	// 64 KiB exactly is accepted.
	if a := e.do("dev-1", "PUT", "/secrets/MAX", `{"value":"`+big[1:]+`"}`); a.status != 201 {
		t.Errorf("64 KiB value: %d %s", a.status, a.raw)
	}
}

func TestListPagesAndDelete(t *testing.T) {
	e := newEnv(t)
	for _, n := range []string{"C", "A", "B"} {
		if a := e.do("dev-1", "PUT", "/secrets/"+n, `{"value":"value-of-`+n+`"}`); a.status != 201 {
			t.Fatalf("put %s: %d", n, a.status)
		}
	}
	if a := e.do("dev-2", "PUT", "/secrets/OTHER", `{"value":"v"}`); a.status != 201 {
		t.Fatal(a.raw)
	}
	var names []string
	cursor := ""
	for page := 0; page < 5; page++ {
		path := "/secrets?limit=2"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		a := e.do("dev-1", "GET", path, "")
		if a.status != 200 {
			t.Fatalf("list: %d %s", a.status, a.raw)
		}
		for _, it := range a.body["items"].([]any) {
			names = append(names, it.(map[string]any)["name"].(string))
		}
		next, _ := a.body["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	if strings.Join(names, ",") != "A,B,C" {
		t.Errorf("listed %v, want A,B,C (and not dev-2's)", names)
	}
	if a := e.do("dev-1", "GET", "/secrets?limit=0", ""); a.status != 400 || a.errField() != "limit" {
		t.Errorf("limit=0: %d %s", a.status, a.raw)
	}
	tests := []struct {
		name, dev, path string
		status          int
	}{
		{"another developer's", "dev-2", "/secrets/A", 404},
		{"own", "dev-1", "/secrets/A", 204},
		{"again", "dev-1", "/secrets/A", 404},
		{"never existed", "dev-1", "/secrets/NOPE", 404},
		{"bad name", "dev-1", "/secrets/a-b", 400},
		{"no token", "", "/secrets/B", 401},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if a := e.do(tc.dev, "DELETE", tc.path, ""); a.status != tc.status {
				t.Errorf("%d, want %d: %s", a.status, tc.status, a.raw)
			}
		})
	}
	if a := e.do("dev-1", "GET", "/secrets", ""); strings.Contains(a.raw, `"A"`) || !strings.Contains(a.raw, `"B"`) {
		t.Errorf("after delete: %s", a.raw)
	}
	if a := e.do("", "GET", "/secrets", ""); a.status != 401 {
		t.Errorf("no token: %d", a.status)
	}
	if a := e.do("", "PUT", "/secrets/X", `{"value":"v"}`); a.status != 401 {
		t.Errorf("no token: %d", a.status)
	}
}

func TestOpenAPIDocumentsTheRoutes(t *testing.T) {
	rt := httpapi.New(httpapi.Options{Logger: slog.New(slog.DiscardHandler)})
	secretsapi.Register(rt, secretsapi.Deps{})
	doc := rt.OpenAPI()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"putSecret"`, `"listSecrets"`, `"deleteSecret"`, `"SecretInput"`, `"writeOnly":true`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the document lacks %s", want)
		}
	}
	var d struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	_ = json.Unmarshal(b, &d)
	if _, ok := d.Components.Schemas["Secret"].Properties["value"]; ok || d.Components.Schemas["Secret"].Properties["name"] == nil {
		t.Errorf("Secret schema %v: want a name and no value", d.Components.Schemas["Secret"].Properties)
	}
}
