package stack

import (
	"slices"
	"strings"
	"testing"
	"time"

	"sinew/internal/deploy"
)

// TestNoLongFunctionWaitsOnAnother: no function whose timeout is over deploy.MaxInvokerTimeout
// (60 s) may invoke another. Which functions invoke others is read from the description's grants
// and from the template's IAM policies (lambda:InvokeFunction), which must agree; a grant is taken
// for a synchronous invoke, the worst case, since IAM does not tell the invocation types apart.
func TestNoLongFunctionWaitsOnAnother(t *testing.T) {
	s := defaultStack(t)
	pols := s.rolePolicies(t)
	fns := s.resources("AWS::Lambda::Function")
	invokers := 0
	for _, f := range deploy.Functions() {
		described := slices.ContainsFunc(Permissions(f), func(p deploy.Permission) bool { return p.Action == deploy.InvokeFunction })
		granted := hasAction(pols[f.Name], "lambda:InvokeFunction")
		if described != (len(granted) > 0) {
			t.Errorf("%s: the description grants lambda:invoke %v, the template lambda:InvokeFunction %v", f.Name, described, granted)
		}
		if !described {
			continue
		}
		invokers++
		for _, st := range granted {
			for _, r := range st.Resources {
				if !strings.Contains(r, ":function:sinew-") {
					t.Errorf("%s: lambda:InvokeFunction on %s, want only sinew's functions", f.Name, r)
				}
			}
		}
		timeout, _ := props(fns[s.logicalID(t, s.s.Functions[f.Name].Node().DefaultChild())])["Timeout"].(float64)
		if time.Duration(timeout)*time.Second != f.Timeout {
			t.Errorf("%s: the template's timeout %v s, the description's %v", f.Name, timeout, f.Timeout)
		}
		if f.Timeout > deploy.MaxInvokerTimeout {
			t.Errorf("%s invokes another function and may run %v (over %v): it would wait on that function, holding a "+
				"concurrency slot and billed for the other's run; let a state machine invoke it", f.Name, f.Timeout, deploy.MaxInvokerTimeout)
		}
	}
	if invokers == 0 {
		t.Error("no function is described as invoking another: the test checks nothing")
	}
}
