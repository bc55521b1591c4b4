// Package taskexec runs Julep tasks' executions on their compiled state machines and answers them
// in Julep's shapes.
//
// The machines are package taskmachine's. The shapes are the Execution (status queued, starting,
// running, awaiting_input, succeeded, failed or cancelled, with output, error and
// transition_count) and its Transitions, read from the Step Functions history (init, step, wait,
// resume, error, finish, cancelled, each with current and next {workflow, step, scope_id}).
//
// Step Functions is the source of truth for what an execution did; the execution's record in the
// table holds what it waits for (the pending call of a wait_for_input, or of a function tool of the
// task), which PUT /executions/{id} answers.
package taskexec

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	gjs "github.com/google/jsonschema-go/jsonschema"
	"github.com/google/uuid"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/julep/taskflow"
	"sinew/internal/store"
	"sinew/internal/workflow"
)

// SFN is the part of the Step Functions client task executions need.
type SFN interface {
	workflow.ExecutionStarter
	GetExecutionHistory(context.Context, *sfn.GetExecutionHistoryInput, ...func(*sfn.Options)) (*sfn.GetExecutionHistoryOutput, error)
	ListExecutions(context.Context, *sfn.ListExecutionsInput, ...func(*sfn.Options)) (*sfn.ListExecutionsOutput, error)
	DescribeStateMachineForExecution(context.Context, *sfn.DescribeStateMachineForExecutionInput, ...func(*sfn.Options)) (*sfn.DescribeStateMachineForExecutionOutput, error)
}

var _ SFN = (*sfn.Client)(nil)

// Service starts and reads task executions.
type Service struct {
	Store *store.Store
	SFN   SFN
	// MachineARN is the ARN of a task's state machine (taskmachine.Machines.ARN).
	MachineARN func(taskID string) (string, error)

	defs defCache // the states of executions read lately
}

// Execution is Julep's Execution, with sinew's pending calls (what PUT /executions/{id} answers).
type Execution struct {
	ID              string         `json:"id"`
	TaskID          string         `json:"task_id"`
	Status          string         `json:"status"`
	Input           any            `json:"input"`
	Output          any            `json:"output,omitempty"`
	Error           *string        `json:"error,omitempty"`
	TransitionCount *int           `json:"transition_count,omitempty"`
	Metadata        map[string]any `json:"metadata,omitempty"`
	CreatedAt       time.Time      `json:"created_at"`
	UpdatedAt       time.Time      `json:"updated_at"`
	Workflow        string         `json:"workflow"`
	// sinew's names of the ids, as its other executions answer them.
	ExecutionID  string              `json:"execution_id"`
	AgentID      string              `json:"agent_id,omitempty"`
	PendingCalls []store.PendingCall `json:"pending_calls,omitempty"`
}

// Input is what a task machine's execution starts with.
type Input struct {
	DeveloperID string `json:"developer_id"`
	AgentID     string `json:"agent_id"`
	TaskID      string `json:"task_id"`
	Workflow    string `json:"workflow"`
	Input       any    `json:"input"`
}

// maxInput is Step Functions' bound of an execution's input.
const maxInput = 256 * 1024

// HasWorkflows tells whether a task runs on its compiled machine (else on agent_loop).
func HasWorkflows(t *store.Task) bool { return len(t.Workflows) > 0 }

// Start starts an execution of the task t with input (checked against its input_schema). With
// idemKey, a repeat answers the same execution.
func (s *Service) Start(ctx context.Context, dev string, t *store.Task, input any, idemKey string) (*Execution, error) {
	if err := checkInput(t.InputSchema, input); err != nil {
		return nil, err
	}
	arn, err := s.MachineARN(t.ID)
	if err != nil {
		return nil, err
	}
	name := uuid.Must(uuid.NewV7()).String()
	if idemKey != "" {
		name = workflow.IdempotentName(dev, "POST /tasks/"+t.ID+"/executions", idemKey)
	}
	body, err := jsonv.Encode(Input{DeveloperID: dev, AgentID: t.AgentID, TaskID: t.ID, Workflow: taskflow.DefaultWorkflow, Input: input})
	if err != nil {
		return nil, fault.Invalid("input", "input cannot be written as JSON")
	}
	if len(body) > maxInput {
		return nil, fault.New(fault.TooLarge, "the input is %d bytes as JSON, over Step Functions' 256 KiB limit", len(body))
	}
	// Recorded first: a wait_for_input at the start records its call on this record, which must
	// then say it is a task's.
	x := store.Execution{ExecutionID: name, Workflow: workflow.Task, AgentID: t.AgentID, TaskID: t.ID}
	if _, _, err := s.Store.CreateExecution(ctx, dev, x); err != nil && !fault.Is(err, fault.Conflict) {
		return nil, err
	}
	if _, _, err := workflow.StartExecution(ctx, s.SFN, s.Store, dev, arn, name, body, workflow.Task); err != nil {
		if _, derr := s.Store.DiscardUnstarted(ctx, dev, name); derr != nil {
			return nil, derr
		}
		return nil, err
	}
	// Known to exist in Step Functions: the liveness check leaves the record alone.
	if _, err := s.Store.EnsureExecution(ctx, dev, x); err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	return &Execution{ID: name, TaskID: t.ID, Status: "starting", Input: input, CreatedAt: now, UpdatedAt: now, Workflow: workflow.Task,
		ExecutionID: name, AgentID: t.AgentID}, nil
}

func checkInput(schema, input any) error {
	if schema == nil {
		return nil
	}
	b, err := json.Marshal(schema)
	if err != nil {
		return fault.Wrap(fault.Internal, err, "encode the task's input_schema")
	}
	var sc gjs.Schema
	if err := json.Unmarshal(b, &sc); err != nil {
		return fault.Invalid("input_schema", "the task's input_schema is not a JSON Schema: %v", err)
	}
	r, err := sc.Resolve(nil)
	if err != nil {
		return fault.Invalid("input_schema", "the task's input_schema cannot be used: %v", err)
	}
	// The validator reads JSON as encoding/json decodes it.
	var v any
	raw, _ := json.Marshal(input)
	_ = json.Unmarshal(raw, &v)
	if err := r.Validate(v); err != nil {
		return fault.Invalid("input", "input does not fit the task's input_schema: %v", err)
	}
	return nil
}

// Get answers a task execution x (its record) in Julep's shape, from its Step Functions history
// alone (its status, input, output and error are its events'), which its transitions are counted
// from too, and the definition it started with, read once per execution.
func (s *Service) Get(ctx context.Context, dev string, x *store.Execution) (*Execution, error) {
	arn, err := s.executionARN(x.TaskID, x.ExecutionID)
	if err != nil {
		return nil, err
	}
	events, err := s.history(ctx, arn)
	if err != nil {
		return nil, err
	}
	states, err := s.states(ctx, arn)
	if err != nil {
		return nil, err
	}
	d := summarize(events)
	e := &Execution{ID: x.ExecutionID, TaskID: x.TaskID, Status: statusOf(d.status), CreatedAt: x.CreatedAt,
		UpdatedAt: x.UpdatedAt, Workflow: workflow.Task, ExecutionID: x.ExecutionID, AgentID: x.AgentID}
	if d.status == "RUNNING" {
		if e.PendingCalls, err = s.pendingIn(ctx, dev, x, events); err != nil {
			return nil, err
		}
		if len(e.PendingCalls) > 0 {
			e.Status = "awaiting_input"
		}
	}
	if d.input != nil {
		var in Input
		if json.Unmarshal([]byte(*d.input), &in) == nil {
			e.Input = in.Input
		}
	}
	if d.output != nil {
		e.Output, _ = jsonv.DecodeString(*d.output)
	}
	if d.err != nil || d.cause != nil {
		msg := strings.TrimSpace(awsv2.ToString(d.err) + ": " + awsv2.ToString(d.cause))
		e.Error = &msg
	}
	if d.stop != nil {
		e.UpdatedAt = *d.stop
	}
	n := len(transitions(x, states, events))
	e.TransitionCount = &n
	return e, nil
}

// summary is what DescribeExecution would say of an execution, as its history says it.
type summary struct {
	status                    string
	input, output, err, cause *string
	stop                      *time.Time
}

func summarize(events []types.HistoryEvent) summary {
	d := summary{status: "RUNNING"}
	for _, e := range events {
		switch {
		case e.ExecutionStartedEventDetails != nil:
			d.input = e.ExecutionStartedEventDetails.Input
		case e.ExecutionSucceededEventDetails != nil:
			d.status, d.output, d.stop = "SUCCEEDED", e.ExecutionSucceededEventDetails.Output, e.Timestamp
		case e.ExecutionFailedEventDetails != nil:
			f := e.ExecutionFailedEventDetails
			d.status, d.err, d.cause, d.stop = "FAILED", f.Error, f.Cause, e.Timestamp
		case e.ExecutionTimedOutEventDetails != nil:
			f := e.ExecutionTimedOutEventDetails
			d.status, d.err, d.cause, d.stop = "TIMED_OUT", f.Error, f.Cause, e.Timestamp
		case e.ExecutionAbortedEventDetails != nil:
			f := e.ExecutionAbortedEventDetails
			d.status, d.err, d.cause, d.stop = "ABORTED", f.Error, f.Cause, e.Timestamp
		}
	}
	return d
}

// statusOf is Julep's status of an execution Step Functions gives as sfnStatus (running: Get tells
// awaiting_input from its pending calls).
func statusOf(sfnStatus string) string {
	switch sfnStatus {
	case "SUCCEEDED":
		return "succeeded"
	case "FAILED", "TIMED_OUT":
		return "failed"
	case "ABORTED":
		return "cancelled"
	}
	return "running"
}

func (s *Service) executionARN(taskID, name string) (string, error) {
	arn, err := s.MachineARN(taskID)
	if err != nil {
		return "", err
	}
	return strings.Replace(arn, ":stateMachine:", ":execution:", 1) + ":" + name, nil
}
