package secretsapi_test

import (
	"context"
	"strings"
	"testing"

	"sinew/internal/secrets/secretstest"
)

// TestPostCreates: Julep's POST /secrets {name, value, description} stores the value sealed, as
// PUT does, answers the name with the description and never the value, and refuses bad input.
func TestPostCreates(t *testing.T) {
	e := newEnv(t)
	const v = "julep-value-9f8e7d6c"
	a := e.do("dev-1", "POST", "/secrets", `{"name":"OPENAI_KEY","value":"`+v+`","description":"the model's key"}`)
	if a.status != 201 || a.body["name"] != "OPENAI_KEY" || a.body["description"] != "the model's key" || a.body["value"] != nil {
		t.Fatalf("create: %d %s", a.status, a.raw)
	}
	// Stored: GET /secrets lists it, and a PUT of a new value keeps it.
	if a := e.do("dev-1", "PUT", "/secrets/OPENAI_KEY", `{"value":"`+v+`-2"}`); a.status != 204 {
		t.Fatalf("put: %d %s", a.status, a.raw)
	}
	l := e.do("dev-1", "GET", "/secrets", "")
	items, _ := l.body["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["description"] != "the model's key" {
		t.Fatalf("list: %s, want the description", l.raw)
	}
	// Julep's secrets.update: PUT with the name and a new description.
	if a := e.do("dev-1", "PUT", "/secrets/OPENAI_KEY", `{"name":"OPENAI_KEY","value":"`+v+`","description":"new"}`); a.status != 204 {
		t.Fatalf("put with a description: %d %s", a.status, a.raw)
	}
	if a := e.do("dev-1", "PUT", "/secrets/OPENAI_KEY", `{"name":"OTHER","value":"`+v+`"}`); a.status != 400 || a.errField() != "name" {
		t.Fatalf("put naming another secret: %d %s", a.status, a.raw)
	}
	if l := e.do("dev-1", "GET", "/secrets", ""); !strings.Contains(l.raw, `"description":"new"`) {
		t.Fatalf("list after the update: %s", l.raw)
	}
	if a := e.do("dev-1", "POST", "/secrets", `{"name":"OPENAI_KEY","value":"`+v+`"}`); a.status != 201 || a.body["description"] != nil {
		t.Fatalf("create again without a description: %d %s, want it cleared", a.status, a.raw)
	}
	got, err := e.st.OpenSecret(context.Background(), "dev-1", "OPENAI_KEY")
	if err != nil || string(got) != v {
		t.Fatalf("stored %q, %v", got, err)
	}
	for _, tc := range []struct{ body, field string }{
		{`{"value":"x"}`, "name"},
		{`{"name":"bad-name","value":"x"}`, "name"},
		{`{"name":"A"}`, "value"},
		{`{"name":"A","value":"x","other":1}`, "other"},
	} {
		if a := e.do("dev-1", "POST", "/secrets", tc.body); a.status != 400 || a.errField() != tc.field {
			t.Errorf("%s: %d %s, want 400 on %s", tc.body, a.status, a.raw, tc.field)
		}
	}
	e.hay.Add("logs", e.logs.String())
	secretstest.AssertNoLeak(t, e.hay, []string{v})
}
