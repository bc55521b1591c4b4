package all_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/integrations/all"
	"sinew/internal/netguard"
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

// TestSetupEndpointsDeclared: every provider's setup field that names where a call goes (a URL, a
// host, a port) is declared an endpoint, and every one that holds a credential a secret, so the
// executor's binding check (merge.CheckBinding) covers it. A new provider that forgets a `sinew`
// tag fails here.
func TestSetupEndpointsDeclared(t *testing.T) {
	reg, err := all.New(netguard.New())
	if err != nil {
		t.Fatal(err)
	}
	isEndpoint := func(k string) bool { return strings.HasSuffix(k, "url") || k == "host" || k == "port" }
	isSecret := func(k string) bool {
		for _, w := range []string{"key", "secret", "password", "token", "headers", "service_account"} {
			if strings.Contains(k, w) {
				return true
			}
		}
		return false
	}
	for _, name := range reg.Names() {
		info, err := reg.ProviderInfo(name)
		if err != nil {
			t.Fatal(err)
		}
		props, _ := info.Setup["properties"].(map[string]any)
		b := reg.SetupBinding(name)
		for k := range props {
			if isEndpoint(k) && !slices.Contains(b.Endpoints, k) {
				t.Errorf("%s: setup.%s names where calls go but is not tagged sinew:\"endpoint\"", name, k)
			}
			if isSecret(k) && !slices.Contains(b.Secrets, k) {
				t.Errorf("%s: setup.%s holds a credential but is not tagged sinew:\"secret\"", name, k)
			}
		}
		for _, k := range append(slices.Clone(b.Endpoints), b.Secrets...) {
			if _, ok := props[k]; !ok {
				t.Errorf("%s: the binding names setup.%s, which the setup schema lacks", name, k)
			}
		}
	}
	if b := reg.SetupBinding("browserbase"); !slices.Contains(b.Endpoints, "api_url") || !slices.Contains(b.Secrets, "api_key") {
		t.Errorf("browserbase binding %+v", b)
	}
}
