package taskexec

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"sinew/internal/fault"
	"sinew/internal/store"
)

// maxChildDepth bounds how deep PendingCalls looks through workflow steps' executions of the task
// machine (each a child of its own).
const maxChildDepth = 4

// PendingCalls are the calls task execution x waits for: its own (a wait_for_input, a function
// tool of the task) and, when it has none, those of the children its running steps wait on (a
// function tool it inherits from its agent, called by a tool_call or a prompt step, waits in that
// step's tool_call or agent_loop execution; a workflow step's execution has children of its own).
func (s *Service) PendingCalls(ctx context.Context, dev string, x *store.Execution) ([]store.PendingCall, error) {
	if own := pendingOf(x); len(own) > 0 {
		return own, nil
	}
	return s.childCalls(ctx, dev, x.TaskID, x.ExecutionID, nil, maxChildDepth)
}

// pendingIn is PendingCalls of x whose history, events, is already read.
func (s *Service) pendingIn(ctx context.Context, dev string, x *store.Execution, events []types.HistoryEvent) ([]store.PendingCall, error) {
	if own := pendingOf(x); len(own) > 0 {
		return own, nil
	}
	return s.childCalls(ctx, dev, x.TaskID, x.ExecutionID, events, maxChildDepth)
}

func pendingOf(x *store.Execution) []store.PendingCall {
	var out []store.PendingCall
	for _, c := range x.PendingCalls {
		if c.Status == store.CallPending {
			out = append(out, c)
		}
	}
	return out
}

// childCalls are the pending calls of the children that execution name of the task's machine has
// started and that have not ended, read from its history (the TaskSubmitted of each
// states:startExecution names the child; its TaskSucceeded closes it); events is its history
// when already read, else nil.
func (s *Service) childCalls(ctx context.Context, dev, taskID, name string, events []types.HistoryEvent, depth int) ([]store.PendingCall, error) {
	if events == nil {
		arn, err := s.executionARN(taskID, name)
		if err != nil {
			return nil, err
		}
		if events, err = s.history(ctx, arn); err != nil {
			return nil, err
		}
	}
	var open []string
	closed := map[string]bool{}
	for _, e := range events {
		if d := e.TaskSubmittedEventDetails; d != nil && d.Output != nil {
			if n := childName(*d.Output); n != "" {
				open = append(open, n)
			}
		}
		if d := e.TaskSucceededEventDetails; d != nil && d.Output != nil {
			closed[childName(*d.Output)] = true
		}
	}
	var out []store.PendingCall
	for _, n := range open {
		if closed[n] {
			continue
		}
		x, err := s.Store.GetExecution(ctx, dev, n)
		switch {
		case fault.Is(err, fault.NotFound):
			// A workflow step's execution has no record until a wait records its call on it.
		case err != nil:
			return nil, err
		default:
			out = append(out, pendingOf(x)...)
		}
		if strings.HasPrefix(n, SubPrefix) && depth > 1 {
			more, err := s.childCalls(ctx, dev, taskID, n, nil, depth-1)
			if err != nil {
				return nil, err
			}
			out = append(out, more...)
		}
	}
	return out, nil
}

// childName is the name of the execution a startExecution task's output ({ExecutionArn, ...})
// names, or "".
func childName(output string) string {
	var v struct{ ExecutionArn string }
	if json.Unmarshal([]byte(output), &v) != nil || v.ExecutionArn == "" {
		return ""
	}
	return v.ExecutionArn[strings.LastIndex(v.ExecutionArn, ":")+1:]
}
