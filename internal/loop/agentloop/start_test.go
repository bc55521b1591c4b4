package agentloop_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"sinew/internal/fault"
	"sinew/internal/llm"
	"sinew/internal/loop/agentloop"
	"sinew/internal/store"
)

type failingSFN struct{ err error }

func (f failingSFN) StartExecution(context.Context, *sfn.StartExecutionInput, ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error) {
	return nil, f.err
}

// sfnErr is err as the SDK returns it from StartExecution: an OperationError, with the HTTP
// answer's status when there was one.
func sfnErr(status int, err error) error {
	if status != 0 {
		err = &awshttp.ResponseError{ResponseError: &smithyhttp.ResponseError{
			Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}}, Err: err}}
	}
	return &smithy.OperationError{ServiceID: "SFN", OperationName: "StartExecution", Err: err}
}

// TestStartFailures: a start that Step Functions could not take because of Step Functions (busy,
// failing, or never answering) is Transient, so the caller's Retry or a client's retry runs it
// again; the caller's own deadline is a Timeout; only a refusal of sinew's request is Internal.
func TestStartFailures(t *testing.T) {
	reset := &url.Error{Op: "Post", URL: "https://states.test", Err: &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}}
	tests := []struct {
		name string
		err  error
		want fault.Kind
	}{
		{"throttled", sfnErr(400, &smithy.GenericAPIError{Code: "ThrottlingException"}), fault.Transient},
		{"500 InternalFailure", sfnErr(500, &smithy.GenericAPIError{Code: "InternalFailure"}), fault.Transient},
		{"503 from a proxy", sfnErr(503, &smithy.GenericAPIError{Code: "UnknownError"}), fault.Transient},
		{"connection reset", sfnErr(0, &smithyhttp.RequestSendError{Err: reset}), fault.Transient},
		{"answer cut short", sfnErr(200, &smithy.DeserializationError{Err: io.ErrUnexpectedEOF}), fault.Transient},
		{"the HTTP client's own timeout", sfnErr(0, &smithyhttp.RequestSendError{Err: context.DeadlineExceeded}), fault.Transient},
		{"the caller's deadline", sfnErr(0, &smithy.CanceledError{Err: context.DeadlineExceeded}), fault.Timeout},
		{"execution limit", sfnErr(400, &smithy.GenericAPIError{Code: "ExecutionLimitExceeded"}), fault.Transient},
		{"no such state machine", sfnErr(400, &smithy.GenericAPIError{Code: "StateMachineDoesNotExist"}), fault.Internal},
		{"access denied", sfnErr(400, &smithy.GenericAPIError{Code: "AccessDeniedException"}), fault.Internal},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &agentloop.Starter{Store: &store.Store{}, SFN: failingSFN{tc.err}, ARN: "arn:aws:states:us-east-1:123456789012:stateMachine:sinew-agent_loop"}
			_, err := s.Start(context.Background(), "", agentloop.Input{DeveloperID: "dev"}, []llm.Message{{Role: llm.RoleUser, Content: "hi"}})
			if got := fault.KindOf(err); got != tc.want {
				t.Errorf("Start = %v (%s), want %s", err, got, tc.want)
			}
		})
	}
}
