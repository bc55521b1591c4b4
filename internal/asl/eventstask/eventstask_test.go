package eventstask

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"

	"sinew/internal/asl"
	localeb "sinew/internal/localaws/eventbridge"
)

// localBus is local mode's EventBridge API behind an AWS SDK client.
func localBus(t *testing.T) (*eventbridge.Client, *localeb.Service) {
	t.Helper()
	svc, err := localeb.Open(localeb.Options{Dir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(svc)
	t.Cleanup(srv.Close)
	return eventbridge.New(eventbridge.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}), svc
}

func TestPutEvents(t *testing.T) {
	const exec = "arn:aws:states:us-east-1:000000000000:execution:m:x"
	// Run against local mode's EventBridge API: an entry without Source fails there as in AWS.
	const machine = "arn:aws:states:us-east-1:000000000000:stateMachine:m"
	cases := []struct {
		name    string
		params  any
		errName string
		detail  string
	}{
		{"object detail", map[string]any{"Entries": []any{map[string]any{"Source": "s", "DetailType": "t", "Detail": map[string]any{"a": int64(1)}}}}, "", `{"a":1}`},
		{"string detail", map[string]any{"Entries": []any{map[string]any{"Source": "s", "DetailType": "t", "Detail": `{"b":2}`}}}, "", `{"b":2}`},
		{"failed entry", map[string]any{"Entries": []any{map[string]any{"DetailType": "t", "Detail": "{}"}}}, "EventBridge.FailedEntry", ""},
		{"no entries", map[string]any{}, "States.Runtime", ""},
		{"not an object", []any{}, "States.Runtime", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			client, svc := localBus(t)
			in := Register(nil, client)["events:putEvents"]
			out, err := in.Invoke(context.Background(), &asl.TaskCall{Service: "events", API: "putEvents", ExecutionArn: exec, Parameters: tc.params})
			if tc.errName != "" {
				var se *asl.StatesError
				if !errors.As(err, &se) || se.Name != tc.errName {
					t.Fatalf("got %v, %v; want %s", out, err, tc.errName)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			feed, err := svc.Feed()
			if err != nil || len(feed) != 1 {
				t.Fatalf("feed %v %v", feed, err)
			}
			if e := feed[0]; string(e.Detail) != tc.detail || !slices.Equal(e.Resources, []string{exec, machine}) {
				t.Fatalf("put detail %s resources %v", e.Detail, e.Resources)
			}
			if m := out.(map[string]any); m["FailedEntryCount"] != int64(0) {
				t.Fatalf("result %v", m)
			}
		})
	}
}
