package fault

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// sdkErr is err as an SDK client returns it: an OperationError of service, with the HTTP answer's
// status when there was one (0: none).
func sdkErr(service string, status int, err error) error {
	if status != 0 {
		err = &awshttp.ResponseError{ResponseError: &smithyhttp.ResponseError{
			Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}}, Err: err}}
	}
	return &smithy.OperationError{ServiceID: service, OperationName: "Op", Err: err}
}

func apiErr(code string) error { return &smithy.GenericAPIError{Code: code, Message: "m"} }

func TestFromAWS(t *testing.T) {
	reset := &url.Error{Op: "Post", URL: "https://x.test", Err: &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}}
	tests := []struct {
		name string
		err  error
		kind Kind
		msg  string
	}{
		// Throttling and the service's own faults.
		{"ThrottlingException", sdkErr("SFN", 400, apiErr("ThrottlingException")), Transient, "op: Step Functions is unavailable (ThrottlingException); try again"},
		{"TooManyRequestsException", sdkErr("Lambda", 429, apiErr("TooManyRequestsException")), Transient, "op: Lambda is unavailable (TooManyRequestsException); try again"},
		{"ProvisionedThroughputExceeded, typed", sdkErr("DynamoDB", 400, &types.ProvisionedThroughputExceededException{}), Transient, "op: DynamoDB is unavailable (ProvisionedThroughputExceededException); try again"},
		{"RequestLimitExceeded", sdkErr("DynamoDB", 400, apiErr("RequestLimitExceeded")), Transient, ""},
		{"ServiceUnavailable", sdkErr("SFN", 503, apiErr("ServiceUnavailable")), Transient, ""},
		{"InternalServerError without a status", apiErr("InternalServerError"), Transient, "op: the service is unavailable (InternalServerError); try again"},
		{"KMS's own fault", sdkErr("KMS", 500, apiErr("KMSInternalException")), Transient, ""},
		{"500 with an unknown code", sdkErr("DynamoDB", 500, apiErr("UnknownError")), Transient, "op: DynamoDB failed (HTTP 500); try again"},
		{"502 from a proxy, no code", sdkErr("SFN", 502, errors.New("bad gateway")), Transient, "op: Step Functions failed (HTTP 502); try again"},
		{"the SDK gave up retrying", sdkErr("SFN", 0, &retry.MaxAttemptsError{Attempt: 3, Err: apiErr("ThrottlingException")}), Transient, ""},
		// No answer.
		{"connection reset in a send", sdkErr("SFN", 0, &smithyhttp.RequestSendError{Err: reset}), Transient, "op: Step Functions did not answer; try again"},
		{"the transport's own timeout", sdkErr("SFN", 0, &smithyhttp.RequestSendError{Err: context.DeadlineExceeded}), Transient, ""},
		{"answer cut short", sdkErr("DynamoDB", 200, &smithy.DeserializationError{Err: io.ErrUnexpectedEOF}), Transient, "op: DynamoDB did not answer; try again"},
		{"ECONNRESET alone", fmt.Errorf("read: %w", syscall.ECONNRESET), Transient, ""},
		{"net.OpError", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("no route to host")}, Transient, ""},
		{"a read that timed out", sdkErr("KMS", 200, &awshttp.ResponseTimeoutError{TimeoutDur: 1}), Transient, ""},
		// The caller's context.
		{"deadline", sdkErr("SFN", 0, &smithy.CanceledError{Err: context.DeadlineExceeded}), Timeout, "op: the request ran out of time"},
		{"canceled", sdkErr("DynamoDB", 0, &smithy.CanceledError{Err: context.Canceled}), Timeout, "op: the request was canceled"},
		{"canceled in the retry's wait", &aws.RequestCanceledError{Err: context.DeadlineExceeded}, Timeout, ""},
		// Refusals of sinew's own requests.
		{"no such table", sdkErr("DynamoDB", 400, &types.ResourceNotFoundException{}), Internal, "op: DynamoDB refused the request (ResourceNotFoundException)"},
		{"no such state machine", sdkErr("SFN", 400, apiErr("StateMachineDoesNotExist")), Internal, ""},
		{"validation", sdkErr("DynamoDB", 400, apiErr("ValidationException")), Internal, ""},
		{"access denied", sdkErr("KMS", 400, apiErr("AccessDeniedException")), Internal, "op: KMS refused the request (AccessDeniedException)"},
		{"conditional check no caller claimed", sdkErr("DynamoDB", 400, &types.ConditionalCheckFailedException{}), Internal, ""},
		{"unknown", errors.New("something else"), Internal, "op"},
		{"file not found is no connection", os.ErrNotExist, Internal, "op"},
		// Typed already.
		{"typed", New(NotFound, "agent a not found"), NotFound, "agent a not found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := FromAWS(tc.err, "op")
			if k := KindOf(got); k != tc.kind {
				t.Errorf("kind = %s, want %s (%v)", k, tc.kind, got)
			}
			if tc.msg != "" && Message(got) != tc.msg {
				t.Errorf("message = %q, want %q", Message(got), tc.msg)
			}
			if !errors.Is(got, tc.err) {
				t.Errorf("the cause is lost: %v", got)
			}
		})
	}
	if FromAWS(nil, "op") != nil {
		t.Error("FromAWS(nil) != nil")
	}
}

func TestAWSCode(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{sdkErr("SFN", 400, apiErr("ExecutionAlreadyExists")), "ExecutionAlreadyExists"},
		{fmt.Errorf("start: %w", &types.ConditionalCheckFailedException{}), "ConditionalCheckFailedException"},
		{errors.New("plain"), ""},
		{nil, ""},
	}
	for _, tc := range tests {
		if got := AWSCode(tc.err); got != tc.want {
			t.Errorf("AWSCode(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
