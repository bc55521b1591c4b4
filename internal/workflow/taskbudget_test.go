package workflow_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"sinew/internal/asl"
	"sinew/internal/asl/jsonata"
	"sinew/internal/executions"
	"sinew/internal/httpapi"
	"sinew/internal/julep/pyexpr"
	"sinew/internal/julep/taskexec"
	"sinew/internal/julep/taskmachine"
	"sinew/internal/store"
	"sinew/internal/tool"
)

// budgetTask is the representative compiled Julep task whose executions sinewbench prices:
// an evaluate, a tool step calling an integration tool (a tool_call child execution), a return.
const budgetTask = `[
	{"evaluate": {"who": "$ _['name'] + '!'"}},
	{"tool": "echo", "arguments": {"text": "$ _['who']"}},
	{"return": {"echoed": "$ _"}}]`

// TestTaskRequestBudget counts what one execution of budgetTask does, end to end, as
// TestRequestBudget counts a call: started by POST /tasks/{id}/executions, through its tool_call
// child, to the status-change events of both settled. Its transitions are every state entered in
// the task's execution and its child's (Standard bills each). It prints a line of
// TestRequestBudget's form, which sinewbench's tasks part reads.
func TestTaskRequestBudget(t *testing.T) {
	rec := newCostRecorder(t)
	h := newHarness(t)
	dev := "dev-a"
	agent := h.agent(dev, nil)
	echo, err := tool.Decode([]byte(echoTool))
	if err != nil {
		t.Fatal(err)
	}
	var steps []any
	if err := json.Unmarshal([]byte(budgetTask), &steps); err != nil {
		t.Fatal(err)
	}
	task, _, err := h.store.CreateTask(h.ctx, dev, agent, store.Task{Name: "budget", Workflows: map[string]any{"main": steps}}, []tool.Tool{*echo})
	if err != nil {
		t.Fatal(err)
	}
	machines := &taskmachine.Machines{ToolCallARN: toolCallARN, Expr: pyexpr.Compile}
	def, err := machines.Compile(task, []tool.Tool{*echo}, nil)
	if err != nil {
		t.Fatal(err)
	}
	arn, _ := machines.ARN(task.ID)
	if h.machines[arn], err = asl.Parse(def, asl.Options{JSONata: jsonata.New()}); err != nil {
		t.Fatal(err)
	}
	h.withTaskRoutes(machines.ARN)
	if rec != nil {
		rec.attach(t, h)
		h.budgetTask(t, dev, task.ID) // unrecorded: a process's first call dials its connections
	}
	h.ddb.Reset()
	rec.reset()
	before := h.iv.total()
	x, events := h.budgetTask(t, dev, task.ID)
	var entered []string
	for _, e := range events {
		if strings.HasSuffix(e.Type, "StateEntered") {
			entered = append(entered, e.StateEnteredEventDetails.Name)
		}
	}
	n := len(entered)
	t.Logf("states entered: %s", strings.Join(entered, ", "))
	ops, units := h.ddb.Ops(), h.ddb.Units()
	total := requestsIn(ops, units)
	inside := h.iv.total() - before
	const name, https, settles = "task/evaluate+tool_call+return", 1, 2 // the task's and its child's status changes
	t.Logf("%s: %d state transitions, %d Lambda invocations inside the state machine, %d outside it, %d HTTP requests, DynamoDB %v (%d requests, request units %v)",
		name, n, inside, https+settles, https, ops, total, units)
	rec.writeHistory(t, name, x.ARN, events)
	// The task's states, and its tool_call child's as a bare start's (Dispatch, Prepare,
	// Prepared, Dispatch); prepare twice and the executor; the start's read of the task and
	// its record, the child's find and record, the executor's claim, merge and outcome, and the
	// two settles.
	if n > 9 || inside != 3 || total > 11 {
		t.Errorf("%s: %d transitions, %d Lambda invocations, %d DynamoDB requests (%v); want at most 9, 3, at most 11", name, n, inside, total, ops)
	}
}

// withTaskRoutes serves the task execution routes beside the harness's, with task machines at
// machineARN (the harness's engine runs them).
func (h *harness) withTaskRoutes(machineARN func(string) (string, error)) {
	tasks := &taskexec.Service{Store: h.store, SFN: taskSFN{h.svc.SFN.(*engineSFN)}, MachineARN: machineARN}
	rt := httpapi.New(httpapi.Options{})
	executions.Register(rt, executions.Deps{Workflow: h.svc, Tasks: tasks})
	executions.RegisterTaskExecutions(rt, nil, tasks)
	srv := httptest.NewServer(httpapi.HTTPHandler(rt.ServeEvent, httpapi.HMACClaims(h.jwtKey)))
	h.t.Cleanup(srv.Close)
	h.http = srv
}

// budgetTask runs one execution of the task through POST /tasks/{id}/executions and waits for it
// and its child executions to end and be settled; it gives the execution and the events of it
// and its children, the children's after the parent's.
func (h *harness) budgetTask(t *testing.T, dev, taskID string) (*asl.Execution, []asl.Event) {
	t.Helper()
	code, st := h.do(dev, "POST", "/tasks/"+taskID+"/executions", map[string]any{"input": map[string]any{"name": "Ada"}})
	if code != 201 {
		t.Fatalf("POST /tasks/%s/executions = %d %v", taskID, code, st)
	}
	x, ok := h.eng.Execution(taskExecARN(taskID, st["id"].(string)))
	if !ok {
		t.Fatal("no task execution in the engine")
	}
	if out := output(t, h.wait(x)); !strings.Contains(jsonString(out), "Ada!") {
		t.Fatalf("the task's output %v lacks the echoed text", out)
	}
	var events []asl.Event
	queue := []*asl.Execution{x}
	for len(queue) > 0 {
		e := queue[0]
		queue = queue[1:]
		h.wait(e)
		hist := e.History()
		events = append(events, hist...)
		for _, c := range childARNs(hist) {
			child, ok := h.eng.Execution(c)
			if !ok {
				t.Fatalf("child execution %s is not in the engine", c)
			}
			queue = append(queue, child)
		}
	}
	h.waitSettled(t, dev, st["id"].(string))
	return x, events
}

// waitSettled waits until the task execution's record is final: its status change was settled.
func (h *harness) waitSettled(t *testing.T, dev, id string) {
	t.Helper()
	for range 4000 {
		x, err := h.store.GetExecution(h.ctx, dev, id)
		if err == nil && x.Status.Final() {
			return
		}
		sleepMs(5)
	}
	t.Fatalf("the task execution %s was never settled", id)
}

func taskExecARN(taskID, name string) string {
	return strings.Replace(strings.TrimSuffix(toolCallARN, "tool_call"), ":stateMachine:", ":execution:", 1) + "task-" + taskID + ":" + name
}

// childARNs are the executions a history's startExecution tasks started.
func childARNs(hist []asl.Event) []string {
	var out []string
	for _, e := range hist {
		d := e.TaskSucceededEventDetails
		if d == nil || !strings.HasPrefix(d.ResourceType, "states") {
			continue
		}
		var o struct {
			ExecutionArn string `json:"ExecutionArn"`
		}
		if d.Output != nil && json.Unmarshal([]byte(*d.Output), &o) == nil && o.ExecutionArn != "" && !slices.Contains(out, o.ExecutionArn) {
			out = append(out, o.ExecutionArn)
		}
	}
	return out
}

// taskSFN is the harness's engine as taskexec's client: starting a task's execution is all the
// budget asks of it; the reads the budget never makes are refused.
type taskSFN struct{ *engineSFN }

func (taskSFN) GetExecutionHistory(context.Context, *sfn.GetExecutionHistoryInput, ...func(*sfn.Options)) (*sfn.GetExecutionHistoryOutput, error) {
	return nil, errNotInBudget
}

func (taskSFN) ListExecutions(context.Context, *sfn.ListExecutionsInput, ...func(*sfn.Options)) (*sfn.ListExecutionsOutput, error) {
	return nil, errNotInBudget
}

func (taskSFN) DescribeStateMachineForExecution(context.Context, *sfn.DescribeStateMachineForExecutionInput, ...func(*sfn.Options)) (*sfn.DescribeStateMachineForExecutionOutput, error) {
	return nil, errNotInBudget
}

var errNotInBudget = &sfnNotInBudget{}

type sfnNotInBudget struct{}

func (*sfnNotInBudget) Error() string {
	return "the task budget's Step Functions client only starts executions"
}
