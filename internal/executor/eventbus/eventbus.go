// Package eventbus is executor.Events over EventBridge's PutEvents: AWS's bus, or local mode's
// through AWS_ENDPOINT_URL_EVENTBRIDGE. Only the function executor builds it, so only its binary
// links the EventBridge client.
package eventbus

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"sinew/internal/executor"
	"sinew/internal/fault"
)

// PutEventser is the part of the EventBridge client the bus uses.
type PutEventser interface {
	PutEvents(context.Context, *eventbridge.PutEventsInput, ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

var _ PutEventser = (*eventbridge.Client)(nil)

// Bus publishes the function executor's events with one PutEvents each.
type Bus struct{ Client PutEventser }

var _ executor.Events = Bus{}

// New is the bus over an EventBridge client made from cfg.
func New(cfg aws.Config) Bus { return Bus{Client: eventbridge.NewFromConfig(cfg)} }

// Publish puts e on its bus; an entry EventBridge reports as failed is an error with its code.
func (b Bus) Publish(ctx context.Context, e executor.Event) error {
	out, err := b.Client.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{{
		EventBusName: aws.String(e.Bus), Source: aws.String(e.Source), DetailType: aws.String(e.DetailType),
		Detail: aws.String(string(e.Detail)), Resources: []string{},
	}}})
	if err != nil {
		// Throttled or unreachable is Transient, so the caller retries rather than fails.
		return fault.FromAWS(err, "EventBridge PutEvents")
	}
	if out.FailedEntryCount > 0 {
		if len(out.Entries) > 0 {
			return fmt.Errorf("EventBridge PutEvents: %s: %s", aws.ToString(out.Entries[0].ErrorCode), aws.ToString(out.Entries[0].ErrorMessage))
		}
		return errors.New("EventBridge PutEvents: the entry failed")
	}
	return nil
}
