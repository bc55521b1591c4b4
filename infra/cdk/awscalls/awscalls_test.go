package awscalls

import (
	"slices"
	"testing"
)

// TestFunctionExecutor analyzes the smallest function, whose calls are known from its code: it
// publishes through a narrow interface (workflow's Events port), and records the pending call and
// its execution in one transaction (a Put and an Update), without the index.
func TestFunctionExecutor(t *testing.T) {
	out, err := Analyze(Options{Root: "../../..", Module: "sinew", Functions: []string{"function"}, IndexConst: "sinew/internal/store.GSI1"})
	if err != nil {
		t.Fatal(err)
	}
	c := out["function"]
	if got, want := Sorted(c.Ops), []string{"dynamodb/TransactWriteItems", "eventbridge/PutEvents"}; !slices.Equal(got, want) {
		t.Errorf("ops %v, want %v", got, want)
	}
	if got, want := Sorted(c.TransactItems), []string{"Put", "Update"}; !slices.Equal(got, want) {
		t.Errorf("transaction items %v, want %v", got, want)
	}
	if c.Index {
		t.Error("the function executor queries no index")
	}
}
