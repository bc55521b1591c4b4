package awscalls

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
)

// executors analyzes the five executors once for the tests of this file.
var executors = func() func(t *testing.T) map[string]Calls {
	var once sync.Once
	var out map[string]Calls
	var err error
	return func(t *testing.T) map[string]Calls {
		once.Do(func() {
			out, err = Analyze(Options{Root: "../../..", Module: "sinew", Functions: []string{"prepare", "function", "integration", "apicall", "settle"},
				IndexConsts: []string{"sinew/internal/store.GSI1", "sinew/internal/store.GSI2"}})
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
}()

// TestFunctionExecutor analyzes the smallest function. Its own code records the pending call and
// its execution in two plain writes (an Update of the execution, a Put of the call) and publishes through a narrow interface
// (workflow's Events port). It links the one handler package and with it the store code of every
// other function, reachable only through dynamic calls whose targets never flow to this binary's
// code: the analysis must not count those, so a grant of them would be a grant nobody uses.
func TestFunctionExecutor(t *testing.T) {
	c := executors(t)["function"]
	if got, want := Sorted(c.Ops), []string{"dynamodb/PutItem", "dynamodb/UpdateItem", "eventbridge/PutEvents"}; !slices.Equal(got, want) {
		t.Errorf("ops %v, want %v", got, want)
		logVia(t, c, want)
	}
	if len(c.TransactItems) > 0 {
		t.Errorf("the function executor writes no transaction, found items %v", Sorted(c.TransactItems))
	}
	if len(c.Indexes) > 0 {
		t.Errorf("the function executor queries no index, found %v", Sorted(c.Indexes))
	}
	// The chain names the code that makes the call, from main down.
	via := c.Via["dynamodb/PutItem"]
	if len(via) < 3 || via[0] != "sinew/functions/function.main" || via[len(via)-2] != "(*sinew/internal/store.Store).PutPendingCall" ||
		via[len(via)-1] != "(*sinew/internal/store.Store).putCall" {
		t.Errorf("PutItem reached by %v, want main first and store.PutPendingCall's putCall last", via)
	}
}

// TestExecutorCalls holds the other executors' calls: each links the whole store and every other
// function's code, and must be found making only its own calls. A new call fails it (and, unless
// granted, TestGrantsMatchCode); so does a call it no longer makes.
func TestExecutorCalls(t *testing.T) {
	executor := []string{"dynamodb/BatchGetItem", "dynamodb/BatchWriteItem", "dynamodb/GetItem", "dynamodb/PutItem",
		"dynamodb/UpdateItem", "kms/Decrypt", "sfn/SendTaskFailure", "sfn/SendTaskSuccess"}
	want := map[string]struct{ ops, items, indexes []string }{
		// Finds the call's tool; records the execution's status; answers Dispatch's token with
		// Sinew.Prepare (Tokens.Answer, which can answer either way); hands an earlier definition's
		// call to its executor (an Event invocation).
		"prepare": {ops: []string{"dynamodb/BatchGetItem", "dynamodb/UpdateItem", "lambda/Invoke", "sfn/SendTaskFailure", "sfn/SendTaskSuccess"}},
		// The merge, the call's claim, a large output as a payload, setup opened (never sealed), and
		// the answer to the call's own task token when it was dispatched with one; aws_lambda tools
		// invoke the developers' functions the operator named (lambda:invoke-tools).
		"integration": {ops: []string{"dynamodb/BatchGetItem", "dynamodb/BatchWriteItem", "dynamodb/GetItem", "dynamodb/PutItem",
			"dynamodb/UpdateItem", "kms/Decrypt", "lambda/Invoke", "sfn/SendTaskFailure", "sfn/SendTaskSuccess"}},
		"apicall": {ops: executor},
		// Settles calls and executions, a success with its call in two updates; finds
		// the tool again (BatchGetItem) for a failed request that named only the tool; on a
		// schedule, asks Step Functions how the open records' executions ended (the sweep).
		"settle": {ops: []string{"dynamodb/BatchGetItem", "dynamodb/BatchWriteItem", "dynamodb/PutItem", "dynamodb/Query",
			"dynamodb/UpdateItem", "sfn/DescribeExecution"}, indexes: []string{"gsi2"}},
	}
	out := executors(t)
	for _, n := range slices.Sorted(maps.Keys(want)) {
		t.Run(n, func(t *testing.T) {
			c := out[n]
			if got := Sorted(c.Ops); !slices.Equal(got, want[n].ops) {
				t.Errorf("ops %v, want %v", got, want[n].ops)
				logVia(t, c, want[n].ops)
			}
			if got := Sorted(c.TransactItems); !slices.Equal(got, want[n].items) {
				t.Errorf("transaction items %v, want %v", got, want[n].items)
			}
			if got := Sorted(c.Indexes); !slices.Equal(got, want[n].indexes) {
				t.Errorf("indexes queried %v, want %v", got, want[n].indexes)
			}
		})
	}
}

// logVia logs the chain of calls from main to each operation found but not expected.
func logVia(t *testing.T, c Calls, expected []string) {
	for _, op := range Sorted(c.Ops) {
		if !slices.Contains(expected, op) {
			t.Logf("%s is reached by\n\t%s", op, strings.Join(c.Via[op], "\n\t"))
		}
	}
}
