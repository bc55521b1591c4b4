package stack

import (
	"strconv"
	"strings"
	"testing"

	"sinew/internal/deploy"
)

// Every function runs with the Go runtime settings of its description (deploy.RuntimeEnv, which the
// cold-start benchmark reads too), and its GOMEMLIMIT leaves room under its MemorySize: a limit at
// or over it would let the heap reach what Lambda kills the function for.
func TestGoRuntimeEnv(t *testing.T) {
	s := defaultStack(t)
	seen := 0
	for _, r := range s.resources("AWS::Lambda::Function") {
		p := props(r)
		f, ok := deploy.FunctionByName(strings.TrimPrefix(p["FunctionName"].(string), "sinew-"))
		if !ok {
			continue
		}
		seen++
		vars := p["Environment"].(map[string]any)["Variables"].(map[string]any)
		for k, want := range f.RuntimeEnv() {
			if vars[k] != want {
				t.Errorf("%s: %s = %v, want %s", f.Name, k, vars[k], want)
			}
		}
		if vars["GOGC"] == "off" {
			t.Errorf("%s: GOGC=off: a warm function would fill its memory up to GOMEMLIMIT between collections", f.Name)
		}
		limit, _ := vars["GOMEMLIMIT"].(string)
		mib, err := strconv.Atoi(strings.TrimSuffix(limit, "MiB"))
		if err != nil || !strings.HasSuffix(limit, "MiB") {
			t.Errorf("%s: GOMEMLIMIT %q is not a whole number of MiB", f.Name, limit)
			continue
		}
		mem := int(p["MemorySize"].(float64))
		// Lambda's MemorySize is in MiB; an eighth at least stays for what the runtime does not count.
		if mib <= 0 || mib > mem*7/8 {
			t.Errorf("%s: GOMEMLIMIT %d MiB, want above 0 and at most seven eighths of its MemorySize %d", f.Name, mib, mem)
		}
	}
	if seen != len(deploy.Functions()) {
		t.Errorf("checked %d functions, want %d", seen, len(deploy.Functions()))
	}
}
