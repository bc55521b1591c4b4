package all_test

import (
	"encoding/json"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/integrations/all"
)

// TestRegistry builds the real registry: every provider registers (schemas generate and compile),
// every method has a description and an object argument schema the model can take, and the tool
// schema of each default method is named <provider>_<method>.
func TestRegistry(t *testing.T) {
	r, err := all.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	cat := r.Catalogue()
	have := map[string]bool{}
	for _, e := range cat {
		have[e.Provider] = true
	}
	for _, want := range []string{"algolia", "arxiv", "brave", "browserbase", "cloudinary", "dummy", "google_sheets", "llama_parse", "mailgun", "spider", "unstructured", "weather", "wikipedia"} {
		if !have[want] {
			t.Errorf("provider %s is not registered", want)
		}
	}
	for _, e := range cat {
		if e.Info.FriendlyName == "" {
			t.Errorf("%s: no friendly name", e.Provider)
		}
		for _, m := range e.Methods {
			if m.Description == "" {
				t.Errorf("%s.%s: no description", e.Provider, m.Method)
			}
			if m.Arguments["type"] != "object" || m.Output == nil {
				t.Errorf("%s.%s: schemas %v / %v", e.Provider, m.Method, m.Arguments, m.Output)
			}
			if _, err := json.Marshal(m); err != nil {
				t.Errorf("%s.%s: %v", e.Provider, m.Method, err)
			}
		}
		if e.Setup != nil && e.Setup["type"] != "object" {
			t.Errorf("%s: setup schema %v", e.Provider, e.Setup)
		}
		for _, m := range e.Methods {
			if where := booleanSchema(m.Arguments, "arguments"); where != "" {
				t.Errorf("%s.%s: a boolean schema at %s (models want object schemas)", e.Provider, m.Method, where)
			}
		}
		f, err := r.ToolSchema(e.Provider, "", "")
		if err != nil || f.Name != e.Provider+"_"+e.Methods[0].Method {
			t.Errorf("%s: tool schema %v %v", e.Provider, f, err)
		}
	}
	if _, err := r.ProviderInfo("nope"); fault.KindOf(err) != fault.NotFound {
		t.Errorf("unknown provider: %v", err)
	}
}

// booleanSchema finds a `true` or `false` schema under items or properties.
func booleanSchema(v any, path string) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	if _, isBool := m["items"].(bool); isBool {
		return path + ".items"
	}
	if w := booleanSchema(m["items"], path+".items"); w != "" {
		return w
	}
	props, _ := m["properties"].(map[string]any)
	for name, p := range props {
		if _, isBool := p.(bool); isBool {
			return path + "." + name
		}
		if w := booleanSchema(p, path+"."+name); w != "" {
			return w
		}
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		alts, _ := m[k].([]any)
		for _, a := range alts {
			if w := booleanSchema(a, path+"."+k); w != "" {
				return w
			}
		}
	}
	return ""
}
