package workflow_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"sinew/internal/fault"
	"sinew/internal/store"
	"sinew/internal/testenv/ddblocal"
	"sinew/internal/workflow"
)

// startAnswer answers every StartExecution with err, and keeps the last request.
type startAnswer struct {
	err  error
	last *sfn.StartExecutionInput
}

func (s *startAnswer) StartExecution(_ context.Context, in *sfn.StartExecutionInput, _ ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error) {
	s.last = in
	return &sfn.StartExecutionOutput{}, s.err
}

// TestStartExecution: a taken name answers the first start's execution with its recorded status
// (running while unrecorded), whatever started it; Step Functions' own refusals get their kinds.
func TestStartExecution(t *testing.T) {
	ctx := context.Background()
	db := ddblocal.Client(t)
	st := store.New(db, ddblocal.NewTable(t, db), nil)
	dev, arn := "dev-a", "arn:aws:states:us-east-1:123456789012:stateMachine:sinew-tool_call"
	ended := "ended-execution"
	if _, err := st.RecordExecution(ctx, dev, store.Execution{ExecutionID: ended, Workflow: workflow.ToolCall}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := (&workflow.Service{Store: st}).Finish(ctx, dev, ended, store.ExecSucceeded, map[string]any{}, nil); err != nil {
		t.Fatal(err)
	}
	taken := &sfntypes.ExecutionAlreadyExists{Message: aws.String("Execution Already Exists")}
	tests := []struct {
		name   string
		exec   string
		err    error
		status store.ExecStatus
		again  bool
		kind   fault.Kind
	}{
		{"started", "fresh", nil, store.ExecRunning, false, ""},
		{"taken, not recorded yet", "unrecorded", taken, store.ExecRunning, true, ""},
		{"taken, ended", ended, taken, store.ExecSucceeded, true, ""},
		{"execution limit", "x", &sfntypes.ExecutionLimitExceeded{}, "", false, fault.Transient},
		{"input refused", "x", &sfntypes.InvalidExecutionInput{Message: aws.String("too big")}, "", false, fault.InvalidInput},
		{"throttled", "x", &smithy.GenericAPIError{Code: "ThrottlingException"}, "", false, fault.Transient},
		{"no answer", "x", &smithyhttp.RequestSendError{Err: context.DeadlineExceeded}, "", false, fault.Transient},
		{"no such state machine", "x", &sfntypes.StateMachineDoesNotExist{}, "", false, fault.Internal},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &startAnswer{err: tc.err}
			got, again, err := workflow.StartExecution(ctx, c, st, dev, arn, tc.exec, []byte(`{"a":1}`), workflow.ToolCall)
			if k := fault.KindOf(err); k != tc.kind || again != tc.again {
				t.Fatalf("StartExecution = %+v again %v, %v (%s); want again %v, kind %q", got, again, err, k, tc.again, tc.kind)
			}
			if *c.last.Name != tc.exec || *c.last.StateMachineArn != arn || *c.last.Input != `{"a":1}` {
				t.Errorf("request = %+v", c.last)
			}
			if err == nil && (got.ExecutionID != tc.exec || got.Status != tc.status) {
				t.Errorf("started = %+v, want %s %s", got, tc.exec, tc.status)
			}
		})
	}
}
