package schemas_test

import (
	"bytes"
	"reflect"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/integrations/all"
	"sinew/internal/integrations/schemas"
)

// TestGenerated: catalogue.json is what the registry of every provider generates now; a provider
// changed without `go generate ./internal/integrations/schemas` fails here.
func TestGenerated(t *testing.T) {
	want, err := all.Stored()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(schemas.Embedded(), want) {
		t.Fatal("catalogue.json is not what the providers generate: run go generate ./internal/integrations/schemas")
	}
}

// TestSameAnswers: the catalogue answers every lookup as the registry does, unknown names included
// (same kind, field and message).
func TestSameAnswers(t *testing.T) {
	reg, err := all.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := schemas.New()
	if got, want := c.Catalogue(), reg.Catalogue(); !reflect.DeepEqual(got, want) {
		t.Fatalf("catalogue differs from the registry's:\n got %v\nwant %v", got, want)
	}
	type lookup struct{ provider, method, name string }
	cases := []lookup{{"nosuch", "", ""}, {"", "", ""}, {"wikipedia", "nosuch", ""}, {"dummy", "anything", "t"}, {"wikipedia", "", "my_tool"}}
	for _, e := range reg.Catalogue() {
		cases = append(cases, lookup{e.Provider, "", ""})
		for _, m := range e.Methods {
			cases = append(cases, lookup{e.Provider, m.Method, ""}, lookup{e.Provider, m.Method, "named"})
		}
	}
	for _, l := range cases {
		got, gerr := c.ToolSchema(l.provider, l.method, l.name)
		want, werr := reg.ToolSchema(l.provider, l.method, l.name)
		if !reflect.DeepEqual(got, want) || !sameError(gerr, werr) {
			t.Errorf("ToolSchema%v = %v, %v; the registry's %v, %v", l, got, gerr, want, werr)
		}
	}
	for _, name := range append(reg.Names(), "nosuch", "") {
		got, gerr := c.ProviderInfo(name)
		want, werr := reg.ProviderInfo(name)
		if !reflect.DeepEqual(got, want) || !sameError(gerr, werr) {
			t.Errorf("ProviderInfo(%q) = %v, %v; the registry's %v, %v", name, got, gerr, want, werr)
		}
	}
}

func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return fault.KindOf(a) == fault.KindOf(b) && fault.FieldOf(a) == fault.FieldOf(b) && fault.Message(a) == fault.Message(b)
}

// TestFreshCopies: what a caller gets is its own; changing it changes no later answer.
func TestFreshCopies(t *testing.T) {
	c := schemas.New()
	f, err := c.ToolSchema("wikipedia", "", "")
	if err != nil {
		t.Fatal(err)
	}
	delete(f.Parameters, "properties")
	again, _ := c.ToolSchema("wikipedia", "", "")
	if again.Parameters["properties"] == nil {
		t.Error("a change to one answer reached the next")
	}
}
