package schemas_test

import (
	"encoding/json"
	"testing"
	"time"

	"sinew/internal/deploy"
	"sinew/internal/integrations/schemas"
)

// TestCallBoundsFitTheFunction: every provider's bound on one call (a timeout_seconds argument or
// setup) ends before the integration function's own timeout, with time left to store the result;
// a longer bound would be cut by Lambda, as a timeout nobody reports.
func TestCallBoundsFitTheFunction(t *testing.T) {
	const margin = 20 * time.Second
	var fn deploy.Function
	for _, f := range deploy.Functions() {
		if f.Name == "integration" {
			fn = f
		}
	}
	if fn.Timeout == 0 {
		t.Fatal("internal/deploy has no integration function")
	}
	var doc any
	if err := json.Unmarshal(schemas.Embedded(), &doc); err != nil {
		t.Fatal(err)
	}
	found := 0
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, c := range v {
				if p, ok := c.(map[string]any); ok && k == "timeout_seconds" {
					found++
					max, _ := p["maximum"].(float64)
					if max == 0 || time.Duration(max)*time.Second+margin > fn.Timeout {
						t.Errorf("%s/%s: maximum %v s, want at most %v (the integration function's %v less %v)", path, k, p["maximum"], (fn.Timeout - margin).Seconds(), fn.Timeout, margin)
					}
				}
				walk(path+"/"+k, c)
			}
		case []any:
			for _, c := range v {
				walk(path, c)
			}
		}
	}
	walk("", doc)
	if found == 0 {
		t.Fatal("no provider has a timeout_seconds: the walk finds nothing to check")
	}
}
