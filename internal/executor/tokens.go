package executor

import (
	"context"
	"log/slog"
	"sync"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

// TaskAnswerer is the part of the Step Functions client an executor answers its own task token
// with.
type TaskAnswerer interface {
	SendTaskSuccess(context.Context, *sfn.SendTaskSuccessInput, ...func(*sfn.Options)) (*sfn.SendTaskSuccessOutput, error)
	SendTaskFailure(context.Context, *sfn.SendTaskFailureInput, ...func(*sfn.Options)) (*sfn.SendTaskFailureOutput, error)
}

var _ TaskAnswerer = (*sfn.Client)(nil)

// Tokens answers the task token of a call tool_call's Dispatch state gave an executor: a Task that
// waits for its token runs every type of call in one state, so a server-side executor answers for
// itself.
type Tokens struct {
	// SFN answers; nil: a client from AWS, made at the first token (most invocations carry none,
	// and need no client).
	SFN TaskAnswerer
	// AWS is the configuration SFN is made from.
	AWS  *awsv2.Config
	once sync.Once
}

// NewTokens answers tokens with a Step Functions client from cfg, made at the first token.
func NewTokens(cfg awsv2.Config) *Tokens { return &Tokens{AWS: &cfg} }

// Step Functions' limit on SendTaskFailure's cause.
const maxTaskCause = 32768

// Answer sends the outcome of a run: output with SendTaskSuccess, or runErr's fault name
// (Sinew.*, which the Task's Retry and Catch match) and its caller-safe message with
// SendTaskFailure. A token the Task no longer waits on (it timed out, or the execution stopped)
// is no error: the outcome is recorded, and nothing waits for it. Any other failure is returned,
// so the invocation fails and the Task's Retry runs the call again, which answers from its record.
func (t *Tokens) Answer(ctx context.Context, token string, output any, runErr error) error {
	c, err := t.client()
	if err != nil {
		return err
	}
	if runErr != nil {
		msg := fault.Message(runErr)
		if len(msg) > maxTaskCause {
			msg = msg[:maxTaskCause]
		}
		_, err = c.SendTaskFailure(ctx, &sfn.SendTaskFailureInput{TaskToken: &token,
			Error: awsv2.String(string(fault.KindOf(runErr))), Cause: &msg})
	} else {
		var b []byte
		if b, err = jsonv.Encode(output); err != nil {
			return fault.Wrap(fault.Internal, err, "the output cannot be written as JSON")
		}
		_, err = c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: &token, Output: awsv2.String(string(b))})
	}
	switch code := fault.AWSCode(err); {
	case err == nil:
		return nil
	case code == "TaskTimedOut" || code == "TaskDoesNotExist" || code == "InvalidToken":
		slog.WarnContext(ctx, "the Task no longer waits for this call's answer", "error_code", code)
		return nil
	}
	return fault.Wrap(fault.Transient, err, "answer the Task's token")
}

func (t *Tokens) client() (TaskAnswerer, error) {
	if t != nil {
		t.once.Do(func() {
			if t.SFN == nil && t.AWS != nil {
				t.SFN = sfn.NewFromConfig(*t.AWS)
			}
		})
		if t.SFN != nil {
			return t.SFN, nil
		}
	}
	return nil, fault.New(fault.Internal, "this executor has no Step Functions client to answer a task token with")
}

// answerOrReturn is an executor's answer to its invocation: without a task token, the result
// object as the Task's result, or err (and, when the caller reads error results, a tool's failure as
// the error result, err only for a fault); with one, the outcome goes to the token (the result
// object when whole, else the bare output), and the invocation itself succeeds unless the answer
// could not be sent.
func answerOrReturn(ctx context.Context, tk *Tokens, token string, whole, errorResult bool, call *tool.Call, out any, err error) (map[string]any, error) {
	if token == "" {
		switch {
		case err == nil:
			return workflow.ResultObject(tool.ResultOf(call, out)), nil
		case errorResult && toolFailure(err):
			return workflow.ResultObject(tool.ErrorResult(call, string(fault.KindOf(err)), fault.Message(err))), nil
		}
		return nil, err
	}
	if whole && err == nil {
		out = workflow.ResultObject(tool.ResultOf(call, out))
	}
	if aerr := tk.Answer(ctx, token, out, err); aerr != nil {
		if err != nil {
			// The run's own error, so the Task fails with its name all the same.
			return nil, err
		}
		return nil, aerr
	}
	return map[string]any{}, nil
}

// toolFailure reports whether a run's err is the tool's own failure (a provider's refusal, a bad
// argument, the target's timeout), which is the call's result, rather than a fault: Sinew.Transient,
// which the callers retry, or Sinew.Internal, sinew's own (an untyped error among them).
func toolFailure(err error) bool {
	k := fault.KindOf(err)
	return err != nil && k != fault.Transient && k != fault.Internal
}
