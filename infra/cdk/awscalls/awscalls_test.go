package awscalls

import (
	"slices"
	"testing"
)

// TestFunctionExecutor analyzes the smallest function. Its own code records the pending call and
// its execution in one transaction (a Put and an Update) and publishes through a narrow interface
// (workflow's Events port). It links the one handler package and with it the store code of every
// other function, reachable only through dynamic calls whose targets never flow to this binary's
// code: the analysis must not count those, so a grant of them would be a grant nobody uses.
func TestFunctionExecutor(t *testing.T) {
	out, err := Analyze(Options{Root: "../../..", Module: "sinew", Functions: []string{"function"}, IndexConst: "sinew/internal/store.GSI1"})
	if err != nil {
		t.Fatal(err)
	}
	c := out["function"]
	if got, want := Sorted(c.Ops), []string{"dynamodb/TransactWriteItems", "eventbridge/PutEvents"}; !slices.Equal(got, want) {
		t.Errorf("ops %v, want %v", got, want)
		for _, op := range got {
			t.Logf("%s is reached by %v", op, c.Via[op])
		}
	}
	if got, want := Sorted(c.TransactItems), []string{"Put", "Update"}; !slices.Equal(got, want) {
		t.Errorf("transaction items %v, want %v", got, want)
	}
	if c.Index {
		t.Error("the function executor queries no index")
	}
	// The chain names the code that makes the call, from main down.
	via := c.Via["dynamodb/TransactWriteItems"]
	if len(via) < 2 || via[0] != "sinew/functions/function.main" || via[len(via)-1] != "(*sinew/internal/store.Store).PutPendingCall" {
		t.Errorf("TransactWriteItems reached by %v, want main first and store.PutPendingCall last", via)
	}
}
