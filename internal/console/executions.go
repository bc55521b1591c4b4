package console

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"sinew/internal/deploy"
	"sinew/internal/fault"
	"sinew/internal/httpapi"
)

// Who sees an execution.
const (
	VisibleToYou      = "yours"
	VisibleToEveryone = "every local token" // a user's own state machine's: they have no developer
)

// Execution statuses, as Step Functions names them.
var execStatuses = []string{"RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"}

// ExecItem is an execution in the list.
//
// Status is always Step Functions' own (DescribeExecution's: whether the workflow ran to its end),
// and Outcome, for sinew's executions, the tool's outcome as sinew's record and GET /executions
// say it: a call answered with an error is SUCCEEDED in Step Functions, since the workflow ran
// and recorded the error as the call's result, and "failed" as an outcome.
type ExecItem struct {
	Machine    string     `json:"machine"`
	Name       string     `json:"name"`
	ARN        string     `json:"arn"`
	Status     string     `json:"status"`
	Outcome    string     `json:"outcome,omitempty"`
	Waiting    bool       `json:"waiting,omitempty"` // on a function call's answer
	Start      time.Time  `json:"start"`
	Stop       *time.Time `json:"stop,omitempty"`
	Sinew      bool       `json:"sinew"`
	Visibility string     `json:"visibility"`
	AgentID    string     `json:"agent_id,omitempty"`
	SessionID  string     `json:"session_id,omitempty"`
	TaskID     string     `json:"task_id,omitempty"`
}

// machine is the name of the state machine x runs on: its workflow's, or its task's own.
func (x apiExecution) machine() string {
	if x.Workflow == "task" {
		return taskMachinePrefix + x.TaskID
	}
	return x.Workflow
}

// apiExecution is an execution as the HTTP API answers it.
type apiExecution struct {
	ExecutionID string    `json:"execution_id"`
	Workflow    string    `json:"workflow"`
	Status      string    `json:"status"`
	AgentID     string    `json:"agent_id"`
	SessionID   string    `json:"session_id"`
	TaskID      string    `json:"task_id"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

type execFilter struct {
	machine string // "" for all
	status  string // "" for all
	limit   int
}

func (c *console) listExecutions(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	if err := onlyQuery(r, "machine", "status", "limit"); err != nil {
		return nil, err
	}
	f := execFilter{machine: r.Query().Get("machine"), status: strings.ToUpper(r.Query().Get("status"))}
	if f.status != "" && !slices.Contains(execStatuses, f.status) {
		return nil, fault.Invalid("status", "status must be one of %s", strings.Join(execStatuses, ", "))
	}
	var err error
	if f.limit, err = parseLimit(r); err != nil {
		return nil, err
	}
	ms, err := c.machines(ctx)
	if err != nil {
		return nil, err
	}
	if f.machine != "" && !slices.ContainsFunc(ms, func(m Machine) bool { return m.Name == f.machine }) {
		return nil, fault.New(fault.NotFound, "no state machine named %q", f.machine)
	}
	items, resp, err := c.developerExecutions(ctx, r, ms, f)
	if resp != nil || err != nil {
		return resp, err
	}
	for _, m := range ms {
		if m.Sinew || (f.machine != "" && m.Name != f.machine) {
			continue
		}
		more, err := c.usersExecutions(ctx, m, f)
		if err != nil {
			return nil, err
		}
		items = append(items, more...)
	}
	slices.SortStableFunc(items, func(a, b ExecItem) int { return b.Start.Compare(a.Start) })
	if len(items) > f.limit {
		items = items[:f.limit]
	}
	if items == nil {
		items = []ExecItem{} // an empty list, not null
	}
	return httpapi.OK(map[string]any{"items": items}), nil
}

// developerExecutions are the caller's executions of sinew's machines, as the API lists them
// (newest first). A failed API answer is given back as it is.
func (c *console) developerExecutions(ctx context.Context, r *httpapi.Request, ms []Machine, f execFilter) ([]ExecItem, *httpapi.Response, error) {
	arns := map[string]string{}
	for _, m := range ms {
		if m.Sinew {
			arns[m.Name] = m.ARN
		}
	}
	if f.machine != "" && arns[f.machine] == "" {
		return nil, nil, nil
	}
	sfnStatus := c.sfnStatuses(ctx, arns, f.machine)
	var out []ExecItem
	cursor := ""
	for range 10 { // up to 1,000 of the newest
		q := url.Values{"limit": {"100"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		status, body := c.askAPI(ctx, r, "/executions?"+q.Encode())
		if status != http.StatusOK {
			return nil, relay(status, body), nil
		}
		var page struct {
			Items      []apiExecution `json:"items"`
			NextCursor *string        `json:"next_cursor"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			return nil, nil, fault.Wrap(fault.Internal, err, "the API's list of executions")
		}
		for _, x := range page.Items {
			it := fromAPI(x, arns[x.machine()])
			if it.Status = sfnStatus[it.ARN]; it.Status == "" {
				it.Status = c.describeStatus(ctx, it.ARN)
			}
			if (f.machine == "" || x.machine() == f.machine) && (f.status == "" || it.Status == f.status) {
				out = append(out, it)
			}
		}
		if page.NextCursor == nil || len(out) >= f.limit {
			break
		}
		cursor = *page.NextCursor
	}
	return out, nil, nil
}

// fromAPI is an execution of sinew's as its record says it; Status is left for Step Functions to say.
func fromAPI(x apiExecution, machineArn string) ExecItem {
	it := ExecItem{Machine: x.machine(), Name: x.ExecutionID, ARN: executionArn(machineArn, x.ExecutionID),
		Outcome: x.Status, Waiting: x.Status == "awaiting_input", Start: x.CreatedAt, Sinew: true,
		Visibility: VisibleToYou, AgentID: x.AgentID, SessionID: x.SessionID, TaskID: x.TaskID}
	if x.Status != "running" && x.Status != "awaiting_input" {
		stop := x.UpdatedAt
		it.Stop = &stop
	}
	return it
}

// sfnStatuses is Step Functions' status of the newest executions of sinew's machines (one page of
// ListExecutions each, up to 1,000), by execution ARN; an older one is described on its own.
func (c *console) sfnStatuses(ctx context.Context, arns map[string]string, machine string) map[string]string {
	out := map[string]string{}
	for name, arn := range arns {
		if machine != "" && name != machine {
			continue
		}
		page, err := c.sfn.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(arn), MaxResults: 1000})
		if err != nil {
			continue // each execution is then described on its own
		}
		for _, x := range page.Executions {
			out[aws.ToString(x.ExecutionArn)] = string(x.Status)
		}
	}
	return out
}

// describeStatus is one execution's status in Step Functions, or "UNKNOWN" when it cannot be read
// (the record names an execution that never started, or one of tool_call_express, which Step
// Functions does not keep).
func (c *console) describeStatus(ctx context.Context, arn string) string {
	d, err := c.sfn.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
	if err != nil {
		return "UNKNOWN"
	}
	return string(d.Status)
}

// usersExecutions are the executions of a user's own state machine (made through the Step
// Functions API), which no developer owns.
func (c *console) usersExecutions(ctx context.Context, m Machine, f execFilter) ([]ExecItem, error) {
	in := &sfn.ListExecutionsInput{StateMachineArn: aws.String(m.ARN), MaxResults: int32(f.limit)}
	if f.status != "" {
		in.StatusFilter = types.ExecutionStatus(f.status)
	}
	page, err := c.sfn.ListExecutions(ctx, in)
	if err != nil {
		return nil, sfnErr(err)
	}
	var out []ExecItem
	for _, x := range page.Executions {
		out = append(out, ExecItem{Machine: m.Name, Name: aws.ToString(x.Name), ARN: aws.ToString(x.ExecutionArn),
			Status: string(x.Status), Start: aws.ToTime(x.StartDate), Stop: x.StopDate, Visibility: VisibleToEveryone})
	}
	return out, nil
}

// ExecutionView is an execution with its graph coloured by its history.
type ExecutionView struct {
	ExecItem
	Input  json.RawMessage `json:"input,omitempty"`
	Output json.RawMessage `json:"output,omitempty"`
	Error  string          `json:"error,omitempty"`
	Cause  string          `json:"cause,omitempty"`
	// Record is the API's answer for an execution of sinew's, with its pending function calls.
	Record json.RawMessage       `json:"record,omitempty"`
	Graph  *Graph                `json:"graph"`
	States map[string]*StateView `json:"states"`
	Calls  []Call                `json:"calls"`
	Events []Event               `json:"events"`
	// Logs are an Express execution's log lines, which stand in for the history Step Functions
	// does not keep of it.
	Logs []json.RawMessage `json:"logs,omitempty"`
}

// maxEvents bounds the history read for one view.
const maxEvents = 25000

func (c *console) getExecution(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	if err := onlyQuery(r); err != nil {
		return nil, err
	}
	mv, err := c.machineView(ctx, r.Param("machine"))
	if err != nil {
		return nil, err
	}
	name := r.Param("name")
	v := &ExecutionView{Graph: mv.Graph}
	if mv.Sinew {
		// Whose it is, the API says: another developer's is a 404, as there.
		status, body := c.askAPI(ctx, r, "/executions/"+url.PathEscape(name))
		if status != http.StatusOK {
			return relay(status, body), nil
		}
		var x apiExecution
		if err := json.Unmarshal(body, &x); err != nil {
			return nil, fault.Wrap(fault.Internal, err, "the API's execution")
		}
		v.ExecItem, v.Record = fromAPI(x, mv.ARN), body
	}
	arn := executionArn(mv.ARN, name)
	d, err := c.sfn.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
	var missing *types.ExecutionDoesNotExist
	if errors.As(err, &missing) && v.Record != nil {
		// A call that ran on tool_call_express: Step Functions keeps no Express execution, so
		// sinew's record is all there is to show (its failures are in the state machine's log),
		// and Step Functions' status is unknown, as in the list (describeStatus).
		v.Status = "UNKNOWN"
		v.States, v.Calls, v.Events = map[string]*StateView{}, []Call{}, []Event{}
		if c.expressLog != nil && mv.Name == deploy.ToolCall {
			v.Logs = c.expressLog(siblingArn(mv.ARN, deploy.ToolCallExpress), name)
		}
		return httpapi.OK(v), nil
	}
	if err != nil {
		return nil, sfnErr(err)
	}
	waiting, outcome := v.Waiting, v.Outcome
	v.ExecItem = ExecItem{Machine: mv.Name, Name: aws.ToString(d.Name), ARN: arn, Status: string(d.Status), Outcome: outcome, Waiting: waiting,
		Start: aws.ToTime(d.StartDate), Stop: d.StopDate, Sinew: mv.Sinew, Visibility: VisibleToEveryone,
		AgentID: v.AgentID, SessionID: v.SessionID, TaskID: v.TaskID}
	if mv.Sinew {
		v.Visibility = VisibleToYou
	}
	v.Input, v.Output = jsonText(d.Input), jsonText(d.Output)
	v.Error, v.Cause = aws.ToString(d.Error), aws.ToString(d.Cause)
	if v.Events, err = c.history(ctx, arn); err != nil {
		return nil, err
	}
	v.States, v.Calls = Analyze(v.Events)
	return httpapi.OK(v), nil
}

func (c *console) history(ctx context.Context, arn string) ([]Event, error) {
	var hist []types.HistoryEvent
	var next *string
	for len(hist) < maxEvents {
		page, err := c.sfn.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn),
			NextToken: next, MaxResults: 1000, IncludeExecutionData: aws.Bool(true)})
		if err != nil {
			return nil, sfnErr(err)
		}
		hist = append(hist, page.Events...)
		if next = page.NextToken; next == nil {
			break
		}
	}
	return FromHistory(hist), nil
}

// siblingArn is the ARN of the state machine called name beside the one of arn.
func siblingArn(arn, name string) string {
	return arn[:strings.LastIndex(arn, ":")+1] + name
}
