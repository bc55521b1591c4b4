package workflow_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go"

	"sinew/internal/jsonv"
	"sinew/internal/store"
	"sinew/internal/store/seal"
	"sinew/internal/testenv/ddblocal"
	"sinew/internal/workflow"
)

// describer is Step Functions as the Reconciler asks it: canned answers by execution name, and a
// count of the questions.
type describer struct {
	mu    sync.Mutex
	out   map[string]*sfn.DescribeExecutionOutput
	err   map[string]error
	asked map[string]int
}

func newDescriber() *describer {
	return &describer{out: map[string]*sfn.DescribeExecutionOutput{}, err: map[string]error{}, asked: map[string]int{}}
}

func (d *describer) DescribeExecution(_ context.Context, in *sfn.DescribeExecutionInput, _ ...func(*sfn.Options)) (*sfn.DescribeExecutionOutput, error) {
	name := awsv2.ToString(in.ExecutionArn)
	name = name[strings.LastIndex(name, ":")+1:]
	d.mu.Lock()
	defer d.mu.Unlock()
	d.asked[name]++
	if err := d.err[name]; err != nil {
		return nil, err
	}
	if out := d.out[name]; out != nil {
		return out, nil
	}
	return nil, &sfntypes.ExecutionDoesNotExist{Message: awsv2.String("Execution Does Not Exist: '" + name + "'")}
}

func (d *describer) set(name string, status sfntypes.ExecutionStatus, input, output, errName, cause string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := &sfn.DescribeExecutionOutput{Name: &name, Status: status, ExecutionArn: awsv2.String("arn:aws:states:us-east-1:000000000000:execution:sinew-tool_call:" + name),
		StateMachineArn: awsv2.String(toolCallARN), Input: &input}
	for p, v := range map[**string]string{&out.Output: output, &out.Error: errName, &out.Cause: cause} {
		if v != "" {
			*p = awsv2.String(v)
		}
	}
	d.out[name] = out
}

func (d *describer) count(name string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.asked[name]
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// recEnv is a store, Step Functions' answers and a Reconciler over them, on one clock.
type recEnv struct {
	st    *store.Store
	sfn   *describer
	clock *fakeClock
	rec   *workflow.Reconciler
}

func newRecEnv(t *testing.T) *recEnv {
	t.Helper()
	db := ddblocal.Client(t)
	sl, err := seal.NewAESGCM(bytes.Repeat([]byte{42}, 32))
	if err != nil {
		t.Fatal(err)
	}
	c := &fakeClock{t: time.Now().UTC()}
	st := store.New(db, ddblocal.NewTable(t, db), sl, store.WithClock(c.now))
	d := newDescriber()
	return &recEnv{st: st, sfn: d, clock: c, rec: &workflow.Reconciler{Store: st, SFN: d, ARNs: map[string]string{workflow.ToolCall: toolCallARN}, Now: c.now}}
}

const recDev = "dev-reconcile"

// functionInput is the input POST /tool-calls gives a function call's execution.
func functionInput(callID string) string {
	return jsonv.EncodeString(map[string]any{"developer_id": recDev, "result": map[string]any{"id": callID, "type": "function", "name": "ask"}})
}

// answeredCall records an execution whose function call was answered (its execution then ended
// in Step Functions) and whose status change never arrived: awaiting_input, no pending call.
func (e *recEnv) answeredCall(t *testing.T, id string) {
	t.Helper()
	c := store.PendingCall{ExecutionID: id, CallID: "call-" + id, Tool: "ask", TaskToken: "tok", ExpiresAt: e.clock.now().Add(time.Hour)}
	if _, err := e.st.PutPendingCall(context.Background(), recDev, c, store.Execution{ExecutionID: id, Workflow: workflow.ToolCall}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.SettleCall(context.Background(), recDev, id, c.CallID, store.CallAnswered); err != nil {
		t.Fatal(err)
	}
}

// waitingCall records an execution waiting on its pending function call.
func (e *recEnv) waitingCall(t *testing.T, id string) {
	t.Helper()
	c := store.PendingCall{ExecutionID: id, CallID: "call-" + id, Tool: "ask", TaskToken: "tok", ExpiresAt: e.clock.now().Add(time.Hour)}
	if _, err := e.st.PutPendingCall(context.Background(), recDev, c, store.Execution{ExecutionID: id, Workflow: workflow.ToolCall}); err != nil {
		t.Fatal(err)
	}
}

// unstarted records an execution as a route does before starting it.
func (e *recEnv) unstarted(t *testing.T, id string) {
	t.Helper()
	if _, _, err := e.st.CreateExecution(context.Background(), recDev, store.Execution{ExecutionID: id, Workflow: workflow.ToolCall}); err != nil {
		t.Fatal(err)
	}
}

// TestReconcile: a record read while its execution has ended is settled from DescribeExecution
// as its status change would have settled it; one whose execution runs, changed lately, or asked
// about lately is answered as it is, as is every record when Step Functions cannot answer.
func TestReconcile(t *testing.T) {
	tests := []struct {
		name   string
		make   func(e *recEnv, t *testing.T, id string)
		sfn    func(e *recEnv, id string)
		age    time.Duration // how long after the record's last change it is read
		want   store.ExecStatus
		errMsg string // a substring of the settled record's error message
		calls  store.CallStatus
		asked  int
	}{
		{"answered call, SUCCEEDED", (*recEnv).answeredCall, func(e *recEnv, id string) {
			e.sfn.set(id, sfntypes.ExecutionStatusSucceeded, functionInput("call-"+id), `{"answer":42}`, "", "")
		}, time.Minute, store.ExecSucceeded, "", store.CallAnswered, 1},
		{"waiting call, ABORTED", (*recEnv).waitingCall, func(e *recEnv, id string) {
			e.sfn.set(id, sfntypes.ExecutionStatusAborted, functionInput("call-"+id), "", "", "")
		}, time.Minute, store.ExecCancelled, "stopped", store.CallExpired, 1},
		{"waiting call, FAILED", (*recEnv).waitingCall, func(e *recEnv, id string) {
			e.sfn.set(id, sfntypes.ExecutionStatusFailed, functionInput("call-"+id), "", "States.Runtime", "boom")
		}, time.Minute, store.ExecFailed, "boom", store.CallExpired, 1},
		{"waiting call, TIMED_OUT", (*recEnv).waitingCall, func(e *recEnv, id string) {
			e.sfn.set(id, sfntypes.ExecutionStatusTimedOut, functionInput("call-"+id), "", "", "")
		}, time.Minute, store.ExecTimedOut, "ran out of time", store.CallExpired, 1},
		{"waiting call, RUNNING", (*recEnv).waitingCall, func(e *recEnv, id string) {
			e.sfn.set(id, sfntypes.ExecutionStatusRunning, functionInput("call-"+id), "", "", "")
		}, time.Minute, store.ExecAwaitingInput, "", store.CallPending, 1},
		{"changed lately: left to its event", (*recEnv).answeredCall, func(e *recEnv, id string) {
			e.sfn.set(id, sfntypes.ExecutionStatusSucceeded, functionInput("call-"+id), `{}`, "", "")
		}, time.Second, store.ExecAwaitingInput, "", store.CallAnswered, 0},
		{"never started, past the grace", (*recEnv).unstarted, func(*recEnv, string) {}, 2 * time.Minute, store.ExecFailed, "never started", "", 1},
		{"never started, within the grace", (*recEnv).unstarted, func(*recEnv, string) {}, 30 * time.Second, store.ExecRunning, "", "", 1},
		{"ran, and Step Functions no longer knows it", (*recEnv).waitingCall, func(*recEnv, string) {}, time.Minute, store.ExecFailed, "no longer knows", store.CallExpired, 1},
		{"Step Functions unavailable", (*recEnv).answeredCall, func(e *recEnv, id string) {
			e.sfn.err[id] = &smithy.GenericAPIError{Code: "ThrottlingException", Message: "Rate exceeded"}
		}, time.Minute, store.ExecAwaitingInput, "", store.CallAnswered, 1},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newRecEnv(t)
			id := "exec-rec-" + string(rune('a'+i))
			tt.make(e, t, id)
			tt.sfn(e, id)
			e.clock.advance(tt.age)
			x, err := e.st.GetExecution(context.Background(), recDev, id)
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.rec.Reconcile(context.Background(), recDev, x)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tt.want || e.sfn.count(id) != tt.asked {
				t.Fatalf("status %s after %d questions, want %s after %d", got.Status, e.sfn.count(id), tt.want, tt.asked)
			}
			if tt.errMsg != "" && !strings.Contains(jsonv.EncodeString(got.Error), tt.errMsg) {
				t.Errorf("error %v, want one saying %q", got.Error, tt.errMsg)
			}
			if tt.calls != "" {
				c, err := e.st.GetCall(context.Background(), recDev, id, "call-"+id)
				if err != nil || c.Status != tt.calls {
					t.Errorf("call %+v (%v), want %s", c, err, tt.calls)
				}
			}
			if tt.want == store.ExecSucceeded {
				out, _ := got.Output.(map[string]any)
				if out["id"] != "call-"+id || jsonv.EncodeString(out["output"]) != `{"answer":42}` {
					t.Errorf("output %v, want the call's result object with the answer", got.Output)
				}
			}
			// Read again at once: a final record, or one asked about lately, is not asked about.
			if _, err := e.rec.Reconcile(context.Background(), recDev, got); err != nil || e.sfn.count(id) != tt.asked {
				t.Errorf("a second read asked Step Functions again (%d questions, %v)", e.sfn.count(id), err)
			}
		})
	}
}

// TestReconcileAllBudget: a list's read asks Step Functions about workflow.ReadBudget records at
// most; the next read asks about others, not the ones found running.
func TestReconcileAllBudget(t *testing.T) {
	e := newRecEnv(t)
	for i := range 25 {
		id := "exec-list-" + string(rune('a'+i))
		e.waitingCall(t, id)
		e.sfn.set(id, sfntypes.ExecutionStatusRunning, functionInput("call-"+id), "", "", "")
	}
	e.clock.advance(time.Minute)
	asked := func() int {
		n := 0
		for i := range 25 {
			n += e.sfn.count("exec-list-" + string(rune('a'+i)))
		}
		return n
	}
	for round, want := range []int{10, 20, 25} {
		l, err := e.st.ListExecutions(context.Background(), recDev, store.Page{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		// Those found running are left out of the next list's questions: only fresh ones count.
		if err := e.rec.ReconcileAll(context.Background(), recDev, l.Items); err != nil {
			t.Fatal(err)
		}
		if got := asked(); got != want {
			t.Errorf("read %d: %d questions in all, want %d", round+1, got, want)
		}
	}
}

// TestReconcileCalls: GET /calls's pending calls of an execution that ended without its event are
// settled, and the list says to read again; calls of running executions are left.
func TestReconcileCalls(t *testing.T) {
	e := newRecEnv(t)
	e.waitingCall(t, "exec-calls-ended")
	e.sfn.set("exec-calls-ended", sfntypes.ExecutionStatusAborted, functionInput("call-exec-calls-ended"), "", "", "")
	e.waitingCall(t, "exec-calls-running")
	e.sfn.set("exec-calls-running", sfntypes.ExecutionStatusRunning, functionInput("call-exec-calls-running"), "", "", "")
	e.clock.advance(time.Minute)
	l, err := e.st.ListCalls(context.Background(), recDev, store.CallPending, store.Page{Limit: 100})
	if err != nil || len(l.Items) != 2 {
		t.Fatalf("pending calls %+v %v", l, err)
	}
	changed, err := e.rec.ReconcileCalls(context.Background(), recDev, l.Items)
	if err != nil || !changed {
		t.Fatalf("changed %v, %v; want a change", changed, err)
	}
	l, err = e.st.ListCalls(context.Background(), recDev, store.CallPending, store.Page{Limit: 100})
	if err != nil || len(l.Items) != 1 || l.Items[0].ExecutionID != "exec-calls-running" {
		t.Errorf("pending calls after: %+v %v, want the running execution's only", l, err)
	}
	if changed, _ := e.rec.ReconcileCalls(context.Background(), recDev, l.Items); changed || e.sfn.count("exec-calls-running") != 1 {
		t.Errorf("a second list changed %v, asked %d times about the running one; want no change, once", changed, e.sfn.count("exec-calls-running"))
	}
}

// TestSweep: the sweep settles the open records whose execution ended, takes out those that are
// final already, leaves those within their grace, looks again at a running one only after a gap
// that grows with its age, and looks at no more than its limit each time.
func TestSweep(t *testing.T) {
	e := newRecEnv(t)
	ctx := context.Background()
	e.answeredCall(t, "ended")
	e.sfn.set("ended", sfntypes.ExecutionStatusSucceeded, functionInput("call-ended"), `{"answer":42}`, "", "")
	e.waitingCall(t, "running")
	e.sfn.set("running", sfntypes.ExecutionStatusRunning, functionInput("call-running"), "", "", "")
	e.unstarted(t, "never")
	e.unstarted(t, "final")
	if _, _, err := e.st.SetExecutionStatus(ctx, recDev, "final", store.ExecSucceeded, map[string]any{}, nil); err != nil {
		t.Fatal(err)
	}
	// A late write puts the final record back in the open index.
	if _, err := e.st.RecordExecution(ctx, recDev, store.Execution{ExecutionID: "final", Workflow: workflow.ToolCall}, nil); err != nil {
		t.Fatal(err)
	}
	e.clock.advance(30 * time.Second)
	e.unstarted(t, "young")
	e.clock.advance(40 * time.Second) // the first four are past the grace (1 min); young is not
	st, err := e.rec.Sweep(ctx, workflow.SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := workflow.SweepStats{Looked: 4, Settled: 2, Closed: 1, Deferred: 1}
	if st != want {
		t.Errorf("first sweep %+v, want %+v", st, want)
	}
	for id, status := range map[string]store.ExecStatus{"ended": store.ExecSucceeded, "never": store.ExecFailed, "running": store.ExecAwaitingInput,
		"final": store.ExecSucceeded, "young": store.ExecRunning} {
		if x, err := e.st.GetExecution(ctx, recDev, id); err != nil || x.Status != status {
			t.Errorf("%s: %+v %v, want %s", id, x, err, status)
		}
	}
	// At once again: nothing is due (running waits its gap, young its grace).
	if st, err := e.rec.Sweep(ctx, workflow.SweepOptions{}); err != nil || st.Looked != 0 {
		t.Errorf("second sweep %+v %v, want nothing due", st, err)
	}
	// Past young's grace and running's gap (its age, 70 s): both are due.
	e.clock.advance(75 * time.Second)
	if st, err := e.rec.Sweep(ctx, workflow.SweepOptions{}); err != nil || st.Looked != 2 || e.sfn.count("running") != 2 {
		t.Errorf("third sweep %+v %v (running asked %d times), want young and running looked at", st, err, e.sfn.count("running"))
	}
}

// TestSweepLimit: one sweep looks at no more than its limit, whatever is open.
func TestSweepLimit(t *testing.T) {
	e := newRecEnv(t)
	for i := range 40 {
		id := "exec-many-" + string(rune('A'+i))
		e.waitingCall(t, id)
		e.sfn.set(id, sfntypes.ExecutionStatusRunning, functionInput("call-"+id), "", "", "")
	}
	e.clock.advance(2 * time.Minute)
	st, err := e.rec.Sweep(context.Background(), workflow.SweepOptions{Limit: 8})
	if err != nil {
		t.Fatal(err)
	}
	if st.Looked == 0 || st.Looked > 8 || st.Deferred != st.Looked {
		t.Errorf("sweep with a limit of 8: %+v", st)
	}
}

// TestSettleIdempotent: settle takes the same status change twice, a change after the record was
// settled another way, and the reconciliation after the event, with the same final record and no
// error: at-least-once delivery is safe.
func TestSettleIdempotent(t *testing.T) {
	tests := []struct {
		name   string
		status sfntypes.ExecutionStatus
		output string
		want   store.ExecStatus
		call   store.CallStatus
	}{
		{"succeeded", sfntypes.ExecutionStatusSucceeded, `{"answer":1}`, store.ExecSucceeded, store.CallAnswered},
		{"failed", sfntypes.ExecutionStatusFailed, "", store.ExecFailed, store.CallExpired},
		{"timed out", sfntypes.ExecutionStatusTimedOut, "", store.ExecTimedOut, store.CallExpired},
		{"aborted", sfntypes.ExecutionStatusAborted, "", store.ExecCancelled, store.CallExpired},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newRecEnv(t)
			id := "exec-idem-" + string(rune('a'+i))
			e.waitingCall(t, id)
			e.sfn.set(id, tt.status, functionInput("call-"+id), tt.output, "", "")
			svc := &workflow.Service{Store: e.st}
			ev := statusEvent(id, string(tt.status), functionInput("call-"+id), tt.output)
			var records []string
			for range 2 {
				if _, err := svc.SettleEvent(context.Background(), ev); err != nil {
					t.Fatal(err)
				}
				records = append(records, recordOf(t, e, id))
			}
			e.clock.advance(time.Minute)
			x, _ := e.st.GetExecution(context.Background(), recDev, id)
			if _, err := e.rec.Reconcile(context.Background(), recDev, x); err != nil {
				t.Fatal(err)
			}
			records = append(records, recordOf(t, e, id))
			if records[0] != records[1] || records[1] != records[2] {
				t.Errorf("the record changed on a repeat:\n%s\n%s\n%s", records[0], records[1], records[2])
			}
			x, _ = e.st.GetExecution(context.Background(), recDev, id)
			c, _ := e.st.GetCall(context.Background(), recDev, id, "call-"+id)
			if x.Status != tt.want || c.Status != tt.call {
				t.Errorf("record %s, call %s; want %s, %s", x.Status, c.Status, tt.want, tt.call)
			}
		})
	}
}

func statusEvent(name, status, input, output string) workflow.StatusChange {
	var ev workflow.StatusChange
	ev.DetailType, ev.Source = workflow.DetailTypeStatusChange, "aws.states"
	ev.Detail.Name, ev.Detail.Status, ev.Detail.Input = name, status, &input
	ev.Detail.ExecutionArn = "arn:aws:states:us-east-1:000000000000:execution:sinew-tool_call:" + name
	if output != "" {
		ev.Detail.Output = &output
	}
	return ev
}

// recordOf is the record's status, output, error and calls, as JSON.
func recordOf(t *testing.T, e *recEnv, id string) string {
	t.Helper()
	x, err := e.st.GetExecution(context.Background(), recDev, id)
	if err != nil {
		t.Fatal(err)
	}
	calls, err := e.st.ExecutionCalls(context.Background(), recDev, id)
	if err != nil {
		t.Fatal(err)
	}
	var cs []string
	for _, c := range calls {
		cs = append(cs, c.CallID+"="+string(c.Status))
	}
	return jsonv.EncodeString(map[string]any{"status": x.Status, "output": x.Output, "error": x.Error, "calls": cs})
}
