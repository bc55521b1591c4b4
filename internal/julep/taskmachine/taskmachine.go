// Package taskmachine keeps each Julep task's state machine in Step Functions.
//
// A machine is compiled from the task's workflows by package taskflow, created when the task is saved and updated in place when
// it changes, deleted with it. A task's machine is named <prefix>task-<task id>, beside the
// tool_call machine (<prefix>tool_call), so one grant on <prefix>task-* covers them all.
package taskmachine

import (
	"context"
	"errors"
	"slices"
	"strings"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"sinew/internal/fault"
	"sinew/internal/julep/taskflow"
	"sinew/internal/store"
	"sinew/internal/tool"
)

// SFN is the part of the Step Functions client the machines need.
type SFN interface {
	CreateStateMachine(context.Context, *sfn.CreateStateMachineInput, ...func(*sfn.Options)) (*sfn.CreateStateMachineOutput, error)
	UpdateStateMachine(context.Context, *sfn.UpdateStateMachineInput, ...func(*sfn.Options)) (*sfn.UpdateStateMachineOutput, error)
	DeleteStateMachine(context.Context, *sfn.DeleteStateMachineInput, ...func(*sfn.Options)) (*sfn.DeleteStateMachineOutput, error)
}

var _ SFN = (*sfn.Client)(nil)

// Machines compiles and saves tasks' state machines.
type Machines struct {
	SFN          SFN
	ToolCallARN  string // SINEW_TOOL_CALL_ARN: its name ends tool_call, and task machines are named beside it
	AgentLoopARN string // SINEW_AGENT_LOOP_ARN
	RoleARN      string // SINEW_TASK_ROLE_ARN: the role task machines run as
	Expr         taskflow.ExprCompiler
	// Eval evaluates in the prepare function what Expr does not compile; nil refuses it.
	Eval *taskflow.Evaluator
}

const toolCallSuffix = "tool_call"

// ARN is the ARN of a task's machine.
func (m *Machines) ARN(taskID string) (string, error) {
	if !strings.HasSuffix(m.ToolCallARN, toolCallSuffix) || !strings.Contains(m.ToolCallARN, ":stateMachine:") {
		return "", fault.New(fault.Internal, "the tool_call state machine's ARN (SINEW_TOOL_CALL_ARN) is not configured")
	}
	return strings.TrimSuffix(m.ToolCallARN, toolCallSuffix) + "task-" + taskID, nil
}

func (m *Machines) name(taskID string) string {
	arn, _ := m.ARN(taskID)
	return arn[strings.LastIndex(arn, ":")+1:]
}

// Compile compiles t's workflows with its own tools (a function tool of the task waits on a call
// recorded on the task's execution) and those it inherits from its agent, which a prompt step's
// list of tools may name.
func (m *Machines) Compile(t *store.Task, tools, inherited []tool.Tool) ([]byte, error) {
	self := ""
	if t.ID != "" {
		arn, err := m.ARN(t.ID)
		if err != nil {
			return nil, err
		}
		self = arn
	}
	refs := make([]taskflow.ToolRef, 0, len(tools)+len(inherited))
	for _, tl := range append(slices.Clip(tools), inherited...) {
		refs = append(refs, taskflow.ToolRef{ID: tl.ID, Name: tl.Name})
	}
	fns := map[string]int64{}
	for _, tl := range tools {
		if tl.Type != tool.TypeFunction {
			continue
		}
		timeout := tool.DefaultFunctionTimeoutSeconds
		if tl.Function != nil && tl.Function.TimeoutSeconds != nil {
			timeout = *tl.Function.TimeoutSeconds
		}
		fns[tl.Name] = timeout
	}
	wfs := make(map[string][]any, len(t.Workflows))
	for k, v := range t.Workflows {
		steps, ok := v.([]any)
		if !ok {
			return nil, fault.Invalid(k, "%s must be a list of steps", k)
		}
		wfs[k] = steps
	}
	def, err := taskflow.Compile(wfs, taskflow.Options{ToolCallARN: m.ToolCallARN, AgentLoopARN: m.AgentLoopARN,
		SelfARN: self, Expr: m.Expr, FunctionTools: fns, Tools: refs, Eval: m.Eval})
	var ce *taskflow.Error
	if errors.As(err, &ce) {
		return nil, fault.Invalid(ce.Path, "%s: %s", ce.Path, ce.Msg)
	}
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "compile the task's workflows")
	}
	return def, nil
}

// Create creates the task's machine; one of that name already is a Conflict. A task made with an
// id its caller chose (Julep's create_or_update) is saved so: machines are named by task id across
// developers, and a taken id must not reach another's machine.
func (m *Machines) Create(ctx context.Context, taskID string, def []byte) error {
	if m.RoleARN == "" {
		return fault.New(fault.Internal, "the role of task state machines (SINEW_TASK_ROLE_ARN) is not configured")
	}
	_, err := m.SFN.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: awsv2.String(m.name(taskID)),
		Definition: awsv2.String(string(def)), RoleArn: &m.RoleARN})
	if fault.AWSCode(err) == "StateMachineAlreadyExists" {
		return fault.New(fault.Conflict, "the task id %s is taken: choose another", taskID)
	}
	if err != nil {
		return machineErr(err, "create the task's state machine")
	}
	return nil
}

// Save creates the task's machine, or updates its definition in place when it exists.
func (m *Machines) Save(ctx context.Context, taskID string, def []byte) error {
	err := m.Create(ctx, taskID, def)
	if !fault.Is(err, fault.Conflict) {
		return err
	}
	arn, _ := m.ARN(taskID)
	if _, err := m.SFN.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: &arn,
		Definition: awsv2.String(string(def)), RoleArn: &m.RoleARN}); err != nil {
		return machineErr(err, "update the task's state machine")
	}
	return nil
}

// machineErr: a definition Step Functions refuses is the task's fault (a 400 with its reason).
func machineErr(err error, what string) error {
	if fault.AWSCode(err) == "InvalidDefinition" {
		return fault.Wrap(fault.InvalidInput, err, "Step Functions refused the task's compiled workflows: %v", err)
	}
	return fault.FromAWS(err, what)
}

// Delete deletes the task's machine; one that does not exist is already deleted.
func (m *Machines) Delete(ctx context.Context, taskID string) error {
	arn, err := m.ARN(taskID)
	if err != nil {
		return nil // no tool_call machine configured: no task machine was ever made
	}
	if _, err := m.SFN.DeleteStateMachine(ctx, &sfn.DeleteStateMachineInput{StateMachineArn: &arn}); err != nil &&
		fault.AWSCode(err) != "StateMachineDoesNotExist" {
		return fault.FromAWS(err, "delete the task's state machine")
	}
	return nil
}
