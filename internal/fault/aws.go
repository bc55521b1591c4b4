package fault

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
)

// The AWS SDK's errors are matched by their methods (smithy-go's APIError, ResponseError,
// RequestSendError and OperationError have them), so this package, which every other imports,
// stays free of the SDK.

// AWSCode gives the error code of the AWS API error in err's chain ("ThrottlingException",
// "ExecutionAlreadyExists"), or "" when err carries none.
func AWSCode(err error) string {
	var ae interface{ ErrorCode() string }
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// FromAWS types the error of an AWS SDK call that no rule of its caller claimed; what says which
// call failed. A failure of the service, not of the request, is Transient: throttling, the
// service's own faults (5xx, 429, 408), and a request that got no answer (refused, reset or
// dropped connection, a timeout of the transport). The caller's context ending is a Timeout, as
// KindOf has it. Anything else (a missing table or state machine, access denied, a validation or
// conditional-check failure no caller claimed) is Internal: sinew builds these requests and owns
// these resources, so the fault is sinew's. An error already typed keeps its kind.
func FromAWS(err error, what string) error {
	if err == nil {
		return nil
	}
	var fe *Error
	if errors.As(err, &fe) {
		return err
	}
	kind, why := awsKind(err)
	if why == "" {
		return Wrap(kind, err, "%s", what)
	}
	return Wrap(kind, err, "%s: %s", what, why)
}

// awsKind is FromAWS's kind for err and the reason it gives.
func awsKind(err error) (Kind, string) {
	svc := awsService(err)
	var conn interface{ ConnectionError() bool }
	if errors.As(err, &conn) && conn.ConnectionError() {
		// First: the SDK reports a send that failed while the caller's context lived so, even when
		// the transport's own timeout put context.DeadlineExceeded in the chain.
		return Transient, svc + " did not answer; try again"
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return Timeout, "the request ran out of time"
	case errors.Is(err, context.Canceled):
		return Timeout, "the request was canceled"
	}
	code := AWSCode(err)
	if _, ok := transientCodes[code]; ok {
		return Transient, fmt.Sprintf("%s is unavailable (%s); try again", svc, code)
	}
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		if s := re.HTTPStatusCode(); s >= 500 || s == 429 || s == 408 {
			return Transient, fmt.Sprintf("%s failed (HTTP %d); try again", svc, s)
		}
	}
	if droppedConnection(err) {
		return Transient, svc + " did not answer; try again"
	}
	if code != "" {
		return Internal, fmt.Sprintf("%s refused the request (%s)", svc, code)
	}
	return Internal, ""
}

// transientCodes are the error codes of a busy or failing service: the SDK's own throttling and
// timeout codes (package aws/retry) and the services' names for their internal faults, which
// some return without a 5xx status.
var transientCodes = map[string]struct{}{
	"Throttling": {}, "ThrottlingException": {}, "ThrottledException": {}, "RequestThrottledException": {},
	"TooManyRequestsException": {}, "ProvisionedThroughputExceededException": {}, "TransactionInProgressException": {},
	"RequestLimitExceeded": {}, "BandwidthLimitExceeded": {}, "LimitExceededException": {}, "RequestThrottled": {},
	"SlowDown": {}, "PriorRequestNotComplete": {}, "EC2ThrottledException": {},
	"RequestTimeout": {}, "RequestTimeoutException": {},
	"ServiceUnavailable": {}, "ServiceUnavailableException": {}, "InternalServerError": {}, "InternalServerException": {},
	"InternalFailure": {}, "InternalError": {}, "ServiceException": {}, "KMSInternalException": {}, "DependencyTimeoutException": {},
}

// droppedConnection reports a connection that failed under a request or its answer: reset,
// refused, closed, cut short mid-answer, or timed out by the network.
func droppedConnection(err error) bool {
	for _, target := range []error{io.ErrUnexpectedEOF, net.ErrClosed, syscall.ECONNRESET, syscall.ECONNREFUSED,
		syscall.ECONNABORTED, syscall.EPIPE} {
		if errors.Is(err, target) {
			return true
		}
	}
	var op *net.OpError
	var timeout interface{ Timeout() bool }
	return errors.As(err, &op) || errors.As(err, &timeout) && timeout.Timeout()
}

// awsService names the service of the failed call for a person ("DynamoDB", "Step Functions").
func awsService(err error) string {
	var op interface{ Service() string }
	if !errors.As(err, &op) || op.Service() == "" {
		return "the service"
	}
	if op.Service() == "SFN" {
		return "Step Functions"
	}
	return op.Service()
}
