package awscalls

import (
	"slices"
	"testing"
)

// TestFunctionExecutor analyzes the smallest function. Its own code publishes through a narrow
// interface (workflow's Events port) and records the pending call and its execution in one
// transaction; it links the one handler package, whose store code the analysis also reaches, so
// the store's item operations and transaction items are all found, and no use of the index.
func TestFunctionExecutor(t *testing.T) {
	out, err := Analyze(Options{Root: "../../..", Module: "sinew", Functions: []string{"function"}, IndexConst: "sinew/internal/store.GSI1"})
	if err != nil {
		t.Fatal(err)
	}
	c := out["function"]
	if got, want := Sorted(c.Ops), []string{"dynamodb/BatchGetItem", "dynamodb/BatchWriteItem", "dynamodb/DeleteItem", "dynamodb/GetItem",
		"dynamodb/PutItem", "dynamodb/Query", "dynamodb/TransactWriteItems", "dynamodb/UpdateItem", "eventbridge/PutEvents"}; !slices.Equal(got, want) {
		t.Errorf("ops %v, want %v", got, want)
	}
	if got, want := Sorted(c.TransactItems), []string{"ConditionCheck", "Delete", "Put", "Update"}; !slices.Equal(got, want) {
		t.Errorf("transaction items %v, want %v", got, want)
	}
	if c.Index {
		t.Error("the function executor queries no index")
	}
}
