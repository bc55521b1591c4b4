package store_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/store"
)

// TestIndexHoldsWhatListsRead: gsi1 projects only some attributes, so each list, which reads the
// index alone, must still give every record exactly as a read of the table does; and what the lists
// never read (an execution's claim, kind) is not copied into the index.
func TestIndexHoldsWhatListsRead(t *testing.T) {
	e := newEnv(t)
	const dev = "d"
	x := store.Execution{Workflow: "tool_call", AgentID: "a1", TaskID: "t1", SessionID: "s1"}
	steps := map[string]func(id string){
		"succeeded": func(id string) {
			must[*store.Execution](t)(e.s.EnsureExecution(ctx(), dev, withID(x, id)))
			if _, _, err := e.s.SetExecutionStatus(ctx(), dev, id, store.ExecSucceeded, map[string]any{"n": int64(1)}, nil); err != nil {
				t.Fatal(err)
			}
		},
		"failed": func(id string) {
			must[*store.Execution](t)(e.s.RecordExecution(ctx(), dev, withID(x, id), nil))
			if _, _, err := e.s.SetExecutionStatus(ctx(), dev, id, store.ExecFailed, nil, map[string]any{"type": "Sinew.Provider"}); err != nil {
				t.Fatal(err)
			}
		},
		"claimed": func(id string) {
			if _, _, _, err := e.s.ClaimExecution(ctx(), dev, withID(x, id), map[string]any{"what": "integration/echo", "until": "later"}); err != nil {
				t.Fatal(err)
			}
		},
		"awaiting": func(id string) {
			must[*store.PendingCall](t)(e.s.PutPendingCall(ctx(), dev, store.PendingCall{CallID: "c-" + id, ExecutionID: id, Tool: "ask",
				TaskToken: "token-" + id, ExpiresAt: e.clock.t.Add(time.Hour), Arguments: map[string]any{"q": "?"}}, withID(x, id)))
		},
		"answered": func(id string) {
			must[*store.PendingCall](t)(e.s.PutPendingCall(ctx(), dev, store.PendingCall{CallID: "c-" + id, ExecutionID: id, Tool: "ask",
				TaskToken: "token-" + id, ExpiresAt: e.clock.t.Add(time.Hour)}, withID(x, id)))
			must[*store.PendingCall](t)(e.s.SettleCall(ctx(), dev, id, "c-"+id, store.CallAnswered))
		},
	}
	for id, step := range steps {
		step(id)
	}

	execs := must[*store.List[store.Execution]](t)(e.s.ListExecutions(ctx(), dev, store.Page{Limit: 50}))
	listed := map[string]store.Execution{}
	for _, it := range execs.Items {
		listed[it.ExecutionID] = it
	}
	for id := range steps {
		t.Run(id, func(t *testing.T) {
			want := must[*store.Execution](t)(e.s.GetExecution(ctx(), dev, id))
			want.PendingCalls = []store.PendingCall{}
			if got := listed[id]; !reflect.DeepEqual(got, *want) {
				t.Errorf("listed %+v\nread   %+v", got, *want)
			}
			if id != "awaiting" && id != "answered" {
				return
			}
			st := map[string]store.CallStatus{"awaiting": store.CallPending, "answered": store.CallAnswered}[id]
			calls := must[*store.List[store.PendingCall]](t)(e.s.ListCalls(ctx(), dev, st, store.Page{Limit: 50}))
			read := must[*store.PendingCall](t)(e.s.GetCall(ctx(), dev, id, "c-"+id))
			if len(calls.Items) != 1 || !reflect.DeepEqual(calls.Items[0], *read) {
				t.Errorf("listed %+v\nread   %+v", calls.Items, *read)
			}
		})
	}

	out, err := e.db.Scan(ctx(), &dynamodb.ScanInput{TableName: &e.table, IndexName: aws.String(store.GSI1)})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range out.Items {
		for _, a := range []string{"claim", "kind", store.AttrTTL} {
			if _, ok := it[a]; ok {
				t.Errorf("the index holds %s: %v", a, it[store.AttrPK].(*types.AttributeValueMemberS).Value)
			}
		}
	}
}

func withID(x store.Execution, id string) store.Execution {
	x.ExecutionID = id
	return x
}
