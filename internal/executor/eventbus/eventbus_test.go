package eventbus

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"sinew/internal/executor"
)

type fakeClient struct {
	in  *eventbridge.PutEventsInput
	out *eventbridge.PutEventsOutput
	err error
}

func (f *fakeClient) PutEvents(_ context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	f.in = in
	return f.out, f.err
}

func TestPublish(t *testing.T) {
	ev := executor.Event{Bus: "b", Source: "sinew", DetailType: "ToolCallPending", Detail: []byte(`{"call_id":"c1"}`)}
	for _, tc := range []struct {
		name    string
		out     *eventbridge.PutEventsOutput
		err     error
		wantErr string
	}{
		{name: "published", out: &eventbridge.PutEventsOutput{}},
		{name: "the request fails", err: errors.New("connection refused"), wantErr: "connection refused"},
		{name: "the entry fails", out: &eventbridge.PutEventsOutput{FailedEntryCount: 1, Entries: []ebtypes.PutEventsResultEntry{{
			ErrorCode: aws.String("InternalFailure"), ErrorMessage: aws.String("try again")}}}, wantErr: "InternalFailure: try again"},
		{name: "failed without entries", out: &eventbridge.PutEventsOutput{FailedEntryCount: 1}, wantErr: "the entry failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &fakeClient{out: tc.out, err: tc.err}
			err := Bus{Client: c}.Publish(context.Background(), ev)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("Publish = %v, want error %q", err, tc.wantErr)
			}
			e := c.in.Entries[0]
			if len(c.in.Entries) != 1 || aws.ToString(e.EventBusName) != "b" || aws.ToString(e.Source) != "sinew" ||
				aws.ToString(e.DetailType) != "ToolCallPending" || aws.ToString(e.Detail) != `{"call_id":"c1"}` {
				t.Errorf("PutEvents got %+v", c.in.Entries)
			}
		})
	}
}
