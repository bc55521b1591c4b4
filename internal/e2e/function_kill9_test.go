package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"sinew/internal/jsonv"
	"sinew/internal/localaws/localnames"
	"sinew/internal/store"
	"sinew/internal/testenv/ddblocal"
	"sinew/internal/testenv/localmode"
)

// functionKill9Size is how many function calls are answered before the crash: SINEW_SOAK=1 runs
// the full size.
func functionKill9Size() int {
	if os.Getenv("SINEW_SOAK") == "1" {
		return 150
	}
	return 20
}

// killAfterAnswers is how long after the last answer was accepted local mode is killed: long
// enough for Step Functions to end the executions, too short for every status change to have
// reached settle.
const killAfterAnswers = 350 * time.Millisecond

// testSweepPeriod is local mode's sweep period in the crash tests.
const testSweepPeriod = 2 * time.Second

// startLocalArgs is startLocal with flags besides --root.
func startLocalArgs(t testing.TB, dir string, args, env []string) *local {
	t.Helper()
	lp, err := localmode.Start(binPath, dir, append([]string{"--root", "../.."}, args...), append(os.Environ(), env...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		lp.Kill()
		if t.Failed() {
			t.Logf("local mode's log (last 4 KiB):\n%s", tail(lp.Stderr.String(), 4096))
		}
	})
	return &local{lp}
}

// fnCall is one function call of the crash test.
type fnCall struct {
	exec, call string
	answer     map[string]any
	accepted   int // answers taken (must be exactly one)
}

// Many function calls are answered over POST /executions/{id}/calls/{call}/result and local mode
// is killed with kill -9 0.35 s after the last answer was taken, with DynamoDB Local dying with
// it; then it starts again over the same directory. Every execution ends SUCCEEDED in Step
// Functions, and sinew's own record of each (read from DynamoDB, so no read path settles it)
// ends succeeded with the answer given and no pending call within the sweep's period: the status
// changes that were in flight at the crash were journaled. GET /executions/{id} then answers the
// same. Then a few records are put back as a lost status change leaves them (awaiting_input, no
// pending call, their executions ended), and the sweep settles them, unread, within two periods.
func TestFunctionCallsKill9(t *testing.T) {
	n := functionKill9Size()
	dir := t.TempDir()
	args := []string{"--sweep-period", testSweepPeriod.String()}
	p := startLocalArgs(t, dir, args, []string{ownDynamoDB})
	const dev = "dev-kill9-function"
	a := p.apiFor(t, dev)
	agent := a.must(t, "POST", "/agents", map[string]any{"name": "kill9-function"}, 201)["id"].(string)
	a.must(t, "POST", "/agents/"+agent+"/tools", map[string]any{"name": "ask", "type": "function",
		"function": map[string]any{"parameters": map[string]any{"type": "object"}, "timeout_seconds": 3600}}, 201)

	calls := startFunctionCalls(t, a, agent, n)
	answerAll(t, a, calls)
	time.Sleep(killAfterAnswers)
	crash(t, p)

	p = startLocalArgs(t, dir, args, []string{ownDynamoDB})
	restarted := time.Now()
	a, c := p.apiFor(t, dev), p.sfnClient()
	for _, fc := range calls {
		if d := waitEnded(t, c, fc.exec, 2*time.Minute); d.Status != types.ExecutionStatusSucceeded {
			t.Fatalf("%s: Step Functions ended it %s %s %s", fc.exec, d.Status, aws.ToString(d.Error), aws.ToString(d.Cause))
		}
	}
	// The records, as the table holds them: nothing reads them through the API until they are final.
	st := store.New(ddblocal.NewClientWith(p.Endpoints["dynamodb"], p.Credentials()), localnames.Table, nil)
	within := testSweepPeriod + 20*time.Second // the period, and room for a busy machine
	left := waitRecordsFinal(t, st, dev, calls, within)
	t.Logf("%d function calls answered, kill -9 %v after the last answer; %d records not final at the restart's first read, all final %v after the restart",
		n, killAfterAnswers, left, time.Since(restarted).Round(time.Millisecond))
	for _, fc := range calls {
		checkFunctionRecord(t, a, fc)
	}

	lost := calls[:min(5, len(calls))]
	for _, fc := range lost {
		strand(t, st, p, dev, fc.exec)
	}
	stranded := time.Now()
	waitRecordsFinal(t, st, dev, lost, 2*testSweepPeriod+20*time.Second)
	t.Logf("%d records stranded as a lost event leaves them were settled by the sweep in %v", len(lost), time.Since(stranded).Round(time.Millisecond))
	for _, fc := range lost {
		checkFunctionRecord(t, a, fc)
	}
}

// strand makes execution id's record what a lost status change leaves after its function call
// was answered: awaiting_input, with no pending call and no output. The record is removed (the
// table's key layout, package store's) and made again as a route makes it, awaiting input.
func strand(t *testing.T, st *store.Store, p *local, dev, id string) {
	t.Helper()
	db := ddblocal.NewClientWith(p.Endpoints["dynamodb"], p.Credentials())
	key := map[string]ddbtypes.AttributeValue{
		store.AttrPK: &ddbtypes.AttributeValueMemberS{Value: "DEV#" + url.PathEscape(dev) + "#EXEC#" + url.PathEscape(id)},
		store.AttrSK: &ddbtypes.AttributeValueMemberS{Value: "EXEC"}}
	if _, err := db.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(localnames.Table), Key: key,
		ConditionExpression: aws.String("attribute_exists(pk)")}); err != nil {
		t.Fatalf("remove the record of %s: %v", id, err)
	}
	if _, _, err := st.CreateExecution(context.Background(), dev, store.Execution{ExecutionID: id, Workflow: "tool_call", Status: store.ExecAwaitingInput}); err != nil {
		t.Fatal(err)
	}
	if x, err := st.GetExecution(context.Background(), dev, id); err != nil || x.Status != store.ExecAwaitingInput || len(x.PendingCalls) != 0 {
		t.Fatalf("stranded record %+v %v", x, err)
	}
}

// startFunctionCalls starts n function calls with POST /tool-calls and waits until each is pending.
func startFunctionCalls(t *testing.T, a *api, agent string, n int) []*fnCall {
	t.Helper()
	calls := make([]*fnCall, n)
	byExec := map[string]*fnCall{}
	for i := range calls {
		body := a.must(t, "POST", "/tool-calls", map[string]any{"agent_id": agent, "task_id": nil, "session_id": nil, "tool": "ask",
			"arguments": map[string]any{"n": i}}, 202)
		calls[i] = &fnCall{exec: body["execution_id"].(string), answer: map[string]any{"answer": i, "text": fmt.Sprintf("answer %d", i)}}
		byExec[calls[i].exec] = calls[i]
	}
	found := 0
	deadline := time.Now().Add(2 * time.Minute)
	for found < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d function calls pending after 2 minutes", found, n)
		}
		for _, pc := range a.all(t, "/calls") {
			if fc := byExec[fmt.Sprint(pc["execution_id"])]; fc != nil && fc.call == "" {
				fc.call, found = fmt.Sprint(pc["call_id"]), found+1
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return calls
}

// answerAll answers every call at once over the HTTP route; each must be taken.
func answerAll(t *testing.T, a *api, calls []*fnCall) {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, fc := range calls {
		wg.Go(func() {
			code, body, err := a.do(context.Background(), "POST", "/executions/"+fc.exec+"/calls/"+fc.call+"/result", map[string]any{"output": fc.answer})
			mu.Lock()
			defer mu.Unlock()
			if err != nil || code != http.StatusOK {
				t.Errorf("answer %s = %d %v (%v), want 200", fc.exec, code, body, err)
				return
			}
			fc.accepted++
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
}

// waitRecordsFinal reads the records from the table until each is final or within is spent; it
// answers how many were not final at the first read.
func waitRecordsFinal(t *testing.T, st *store.Store, dev string, calls []*fnCall, within time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(within)
	first := -1
	for {
		var open []string
		for _, fc := range calls {
			x, err := st.GetExecution(context.Background(), dev, fc.exec)
			if err != nil {
				t.Fatalf("read the record of %s: %v", fc.exec, err)
			}
			if !x.Status.Final() {
				open = append(open, fc.exec+" "+string(x.Status))
			}
		}
		if first < 0 {
			first = len(open)
		}
		if len(open) == 0 {
			return first
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d records are not final %v after the restart, though Step Functions ended every execution: %s",
				len(open), len(calls), within, strings.Join(open[:min(len(open), 10)], ", "))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkFunctionRecord checks a call's record as GET /executions/{id} answers it: succeeded, no
// pending call, the result object with the answer given.
func checkFunctionRecord(t *testing.T, a *api, fc *fnCall) {
	t.Helper()
	if fc.accepted != 1 {
		t.Errorf("%s: the answer was taken %d times, want once", fc.exec, fc.accepted)
	}
	rec := a.must(t, "GET", "/executions/"+fc.exec, nil, 200)
	pcs, _ := rec["pending_calls"].([]any)
	out, _ := rec["output"].(map[string]any)
	got, _ := jsonv.Encode(out["output"])
	want, _ := jsonv.Encode(fc.answer)
	if rec["status"] != "succeeded" || len(pcs) != 0 || out["id"] != fc.call || string(got) != string(want) {
		t.Errorf("GET /executions/%s = %v, want succeeded with call %s's answer %s and no pending call", fc.exec, rec, fc.call, want)
	}
}
