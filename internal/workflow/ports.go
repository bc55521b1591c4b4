package workflow

import (
	"context"
	"errors"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"sinew/internal/fault"
)

// SFN is the part of the aws-sdk-go-v2 Step Functions client the workflow uses. Local mode's
// Step Functions API answers the same calls through an endpoint override.
type SFN interface {
	StartExecution(context.Context, *sfn.StartExecutionInput, ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error)
	StopExecution(context.Context, *sfn.StopExecutionInput, ...func(*sfn.Options)) (*sfn.StopExecutionOutput, error)
	SendTaskSuccess(context.Context, *sfn.SendTaskSuccessInput, ...func(*sfn.Options)) (*sfn.SendTaskSuccessOutput, error)
	SendTaskFailure(context.Context, *sfn.SendTaskFailureInput, ...func(*sfn.Options)) (*sfn.SendTaskFailureOutput, error)
	SendTaskHeartbeat(context.Context, *sfn.SendTaskHeartbeatInput, ...func(*sfn.Options)) (*sfn.SendTaskHeartbeatOutput, error)
}

var _ SFN = (*sfn.Client)(nil)

// Events publishes the function executor's announcements on an event bus. Its adapter over
// EventBridge (package eventbus) is built by the function executor alone, so the other functions
// do not link, nor initialise at each cold start, the EventBridge client.
type Events interface {
	Publish(ctx context.Context, e Event) error
}

// Event is one event on the bus: its detail is a JSON object.
type Event struct {
	Bus, Source, DetailType string
	Detail                  []byte
}

// awsCode gives the error code of an AWS API error, "" for other errors.
func awsCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// awsErr types an AWS SDK error that no caller-specific rule claimed: throttling, 5xx and requests
// that got no answer are Transient (the caller may try again), the rest Internal.
func awsErr(err error, what string) error {
	var fe *fault.Error
	if errors.As(err, &fe) {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return fault.Wrap(fault.Transient, err, "%s: the request ran out of time; try again", what)
	}
	switch awsCode(err) {
	case "ThrottlingException", "TooManyRequestsException", "ServiceUnavailable", "InternalServerError",
		"InternalFailure", "ServiceUnavailableException", "RequestLimitExceeded":
		return fault.Wrap(fault.Transient, err, "%s: the service is busy; try again", what)
	}
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() >= http.StatusInternalServerError {
		return fault.Wrap(fault.Transient, err, "%s: the service failed; try again", what)
	}
	var se *smithyhttp.RequestSendError
	if errors.As(err, &se) {
		return fault.Wrap(fault.Transient, err, "%s: the service did not answer; try again", what)
	}
	return fault.Wrap(fault.Internal, err, "%s", what)
}
