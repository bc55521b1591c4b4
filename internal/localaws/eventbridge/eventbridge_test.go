package eventbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awseb "github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/smithy-go"
)

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

func start(t testing.TB, log *slog.Logger) (*Service, *awseb.Client, string) {
	t.Helper()
	if log == nil {
		log = quiet()
	}
	svc, err := Open(Options{Dir: t.TempDir(), Buses: []string{"sinew"}, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	srv := httptest.NewServer(svc)
	t.Cleanup(srv.Close)
	client := awseb.New(awseb.Options{
		Region:           "us-east-1",
		Credentials:      credentials.NewStaticCredentialsProvider("local", "local", ""),
		BaseEndpoint:     aws.String(srv.URL),
		HTTPClient:       srv.Client(),
		RetryMaxAttempts: 1,
	})
	return svc, client, srv.URL
}

func TestPutEventsToFeed(t *testing.T) {
	ctx := context.Background()
	svc, client, _ := start(t, nil)
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	out, err := client.PutEvents(ctx, &awseb.PutEventsInput{Entries: []types.PutEventsRequestEntry{
		{Source: aws.String("sinew"), DetailType: aws.String("ToolCallPending"), Detail: aws.String(`{"call_id": "call_1",  "tool": "ask_user"}`), EventBusName: aws.String("sinew"), Time: &at, Resources: []string{"arn:aws:states:us-east-1:000000000000:execution:tool_call:e1"}},
		{Source: aws.String("sinew"), DetailType: aws.String("ToolCallPending"), Detail: aws.String(`{}`)},
		{Source: aws.String("sinew"), DetailType: aws.String("ToolCallPending")},
		{Source: aws.String("sinew"), DetailType: aws.String("ToolCallPending"), Detail: aws.String(`{"n":1}`), EventBusName: aws.String("arn:aws:events:us-east-1:000000000000:event-bus/sinew")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if out.FailedEntryCount != 1 || len(out.Entries) != 4 {
		t.Fatalf("FailedEntryCount %d, %d entries", out.FailedEntryCount, len(out.Entries))
	}
	if aws.ToString(out.Entries[2].ErrorCode) != "InvalidArgument" || aws.ToString(out.Entries[2].ErrorMessage) != "Parameter Detail is not valid. Reason: Detail is a required argument." || out.Entries[2].EventId != nil {
		t.Errorf("entry 2 = %+v", out.Entries[2])
	}
	feed, err := svc.Feed()
	if err != nil {
		t.Fatal(err)
	}
	if len(feed) != 3 {
		t.Fatalf("feed has %d events, want 3", len(feed))
	}
	first := feed[0]
	want := FeedEntry{EventBusName: "sinew", Event: Event{
		Version: "0", ID: aws.ToString(out.Entries[0].EventId), DetailType: "ToolCallPending", Source: "sinew",
		Account: "000000000000", Time: "2026-03-04T05:06:07Z", Region: "us-east-1",
		Resources: []string{"arn:aws:states:us-east-1:000000000000:execution:tool_call:e1"},
		Detail:    json.RawMessage(`{"call_id":"call_1","tool":"ask_user"}`),
	}}
	if got, _ := json.Marshal(first); !bytes.Equal(got, mustJSON(t, want)) {
		t.Errorf("feed[0] = %s\nwant      %s", got, mustJSON(t, want))
	}
	if feed[1].EventBusName != "default" || feed[2].EventBusName != "sinew" || feed[1].ID != aws.ToString(out.Entries[1].EventId) {
		t.Errorf("feed buses/ids: %+v", feed[1:])
	}
	if feed[1].ID == feed[0].ID {
		t.Error("two events share an id")
	}
	// The file's lines are the envelope plus the bus: readable with jq, and 0600.
	fi, err := os.Stat(svc.FeedPath())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("feed permissions %o", fi.Mode().Perm())
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPutEventsEntryErrors(t *testing.T) {
	ctx := context.Background()
	svc, client, _ := start(t, nil)
	tests := []struct {
		name  string
		entry types.PutEventsRequestEntry
		code  string
		msg   string
	}{
		{"no source", types.PutEventsRequestEntry{DetailType: aws.String("x"), Detail: aws.String("{}")}, "InvalidArgument", "Parameter Source is not valid. Reason: Source is a required argument."},
		{"no detail type", types.PutEventsRequestEntry{Source: aws.String("s"), Detail: aws.String("{}")}, "InvalidArgument", "Parameter DetailType is not valid. Reason: DetailType is a required argument."},
		{"detail not JSON", types.PutEventsRequestEntry{Source: aws.String("s"), DetailType: aws.String("x"), Detail: aws.String("{nope")}, "MalformedDetail", "Detail is malformed."},
		{"detail a list", types.PutEventsRequestEntry{Source: aws.String("s"), DetailType: aws.String("x"), Detail: aws.String("[1]")}, "MalformedDetail", "Detail is malformed."},
		{"detail a string", types.PutEventsRequestEntry{Source: aws.String("s"), DetailType: aws.String("x"), Detail: aws.String(`"s"`)}, "MalformedDetail", "Detail is malformed."},
		{"detail with trailing data", types.PutEventsRequestEntry{Source: aws.String("s"), DetailType: aws.String("x"), Detail: aws.String(`{} {}`)}, "MalformedDetail", "Detail is malformed."},
		{"unknown bus", types.PutEventsRequestEntry{Source: aws.String("s"), DetailType: aws.String("x"), Detail: aws.String("{}"), EventBusName: aws.String("other")}, "InvalidArgument", "Event bus other does not exist."},
		{"other account's bus", types.PutEventsRequestEntry{Source: aws.String("s"), DetailType: aws.String("x"), Detail: aws.String("{}"), EventBusName: aws.String("arn:aws:events:us-east-1:111111111111:event-bus/sinew")}, "InvalidArgument", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := client.PutEvents(ctx, &awseb.PutEventsInput{Entries: []types.PutEventsRequestEntry{tc.entry}})
			if err != nil {
				t.Fatal(err)
			}
			if out.FailedEntryCount != 1 || aws.ToString(out.Entries[0].ErrorCode) != tc.code {
				t.Fatalf("got %d failed, entry %+v", out.FailedEntryCount, out.Entries[0])
			}
			if tc.msg != "" && aws.ToString(out.Entries[0].ErrorMessage) != tc.msg {
				t.Errorf("message %q, want %q", aws.ToString(out.Entries[0].ErrorMessage), tc.msg)
			}
		})
	}
	if feed, _ := svc.Feed(); len(feed) != 0 {
		t.Errorf("failed entries reached the feed: %d", len(feed))
	}
}

func TestPutEventsRequestErrors(t *testing.T) {
	ctx := context.Background()
	_, client, _ := start(t, nil)
	entry := types.PutEventsRequestEntry{Source: aws.String("s"), DetailType: aws.String("x"), Detail: aws.String("{}")}
	eleven := make([]types.PutEventsRequestEntry, 11)
	for i := range eleven {
		eleven[i] = entry
	}
	big := types.PutEventsRequestEntry{Source: aws.String("s"), DetailType: aws.String("x"), Detail: aws.String(`{"a":"` + strings.Repeat("x", 100_000) + `"}`)}
	exact := types.PutEventsRequestEntry{Source: aws.String("s"), DetailType: aws.String("x"), Detail: aws.String(`{"a":"` + strings.Repeat("x", MaxTotalSize-2-8) + `"}`)}
	tests := []struct {
		name    string
		entries []types.PutEventsRequestEntry
		code    string
		msg     string
	}{
		{"eleven entries", eleven, "ValidationException", "1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length less than or equal to 10"},
		{"over 256 KB", []types.PutEventsRequestEntry{big, big, big}, "ValidationException", "Total size of the entries in the request is over the limit."},
		{"one byte over", []types.PutEventsRequestEntry{exact, entry}, "ValidationException", "Total size of the entries in the request is over the limit."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := client.PutEvents(ctx, &awseb.PutEventsInput{Entries: tc.entries})
			var apiErr smithy.APIError
			if !errors.As(err, &apiErr) || apiErr.ErrorCode() != tc.code || apiErr.ErrorMessage() != tc.msg {
				t.Fatalf("err = %v, want %s %q", err, tc.code, tc.msg)
			}
		})
	}
	// Exactly 256 KB is accepted.
	out, err := client.PutEvents(ctx, &awseb.PutEventsInput{Entries: []types.PutEventsRequestEntry{exact}})
	if err != nil || out.FailedEntryCount != 0 {
		t.Fatalf("an entry of exactly 256 KB: %v", err)
	}
}

func TestRawProtocol(t *testing.T) {
	_, _, url := start(t, nil)
	tests := []struct {
		name, target, body string
		status             int
		typ                string
	}{
		{"malformed JSON", "AWSEvents.PutEvents", `{"Entries": [`, 400, "SerializationException"},
		{"entries not a list", "AWSEvents.PutEvents", `{"Entries": {}}`, 400, "SerializationException"},
		{"no entries", "AWSEvents.PutEvents", `{}`, 400, "ValidationException"},
		{"empty entries", "AWSEvents.PutEvents", `{"Entries": []}`, 400, "ValidationException"},
		{"unknown operation", "AWSEvents.PutRule", `{}`, 400, "UnknownOperationException"},
		{"oversized", "AWSEvents.PutEvents", `{"Entries":[{"Detail":"` + strings.Repeat("x", maxBody) + `"}]}`, 413, "ValidationException"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", url, strings.NewReader(tc.body))
			req.Header.Set("X-Amz-Target", tc.target)
			req.Header.Set("Content-Type", "application/x-amz-json-1.1")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			var e struct {
				Type    string `json:"__type"`
				Message string `json:"message"`
			}
			if resp.StatusCode != tc.status || json.Unmarshal(body, &e) != nil || e.Type != tc.typ || e.Message == "" {
				t.Errorf("status %d body %s, want %d %s", resp.StatusCode, body, tc.status, tc.typ)
			}
		})
	}
}

// TestPutEventsRefusesAWSSources: a caller of PutEvents cannot put an event as an AWS service, so
// it cannot forge the Execution Status Change that settles another developer's execution; the
// entry fails as in AWS and no subscriber sees it.
func TestPutEventsRefusesAWSSources(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	svc, client, _ := start(t, nil)
	settle := svc.Subscribe(ctx, Rule{Pattern: MustParsePattern(`{"detail-type": ["Step Functions Execution Status Change"]}`)})
	forged := `{"status":"SUCCEEDED","executionArn":"arn:aws:states:us-east-1:000000000000:execution:tool_call:victim","output":"{}"}`
	for _, source := range []string{"aws.states", "aws.lambda", "aws."} {
		out, err := client.PutEvents(ctx, &awseb.PutEventsInput{Entries: []types.PutEventsRequestEntry{
			{Source: aws.String(source), DetailType: aws.String("Step Functions Execution Status Change"), Detail: aws.String(forged)},
			{Source: aws.String("sinew.test"), DetailType: aws.String("Step Functions Execution Status Change"), Detail: aws.String(`{"marker":"` + source + `"}`)}}})
		if err != nil {
			t.Fatalf("PutEvents(%s): %v", source, err)
		}
		if out.FailedEntryCount != 1 || aws.ToString(out.Entries[0].ErrorCode) != "NotAuthorizedForSourceException" || out.Entries[1].EventId == nil {
			t.Fatalf("PutEvents(%s) = %d failed, entries %+v; want the aws.* entry refused with NotAuthorizedForSourceException and the other put", source, out.FailedEntryCount, out.Entries)
		}
		e := receive(t, settle)
		if e.Source != "sinew.test" {
			t.Fatalf("a subscriber got an event from %q: the forged entry was delivered", e.Source)
		}
	}
}

func TestSubscribe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	svc, client, _ := start(t, nil)
	settle := svc.Subscribe(ctx, Rule{Pattern: MustParsePattern(`{
		"source": ["aws.states"],
		"detail-type": ["Step Functions Execution Status Change"],
		"detail": {"status": ["FAILED", "TIMED_OUT", "ABORTED"]}}`)})
	pending := svc.Subscribe(ctx, Rule{Bus: "sinew", Pattern: MustParsePattern(`{"detail-type": ["ToolCallPending"]}`)})
	put := func(bus, source, detailType, detail string) {
		t.Helper()
		out, err := client.PutEvents(ctx, &awseb.PutEventsInput{Entries: []types.PutEventsRequestEntry{{
			Source: aws.String(source), DetailType: aws.String(detailType), Detail: aws.String(detail), EventBusName: aws.String(bus)}}})
		if err != nil || out.FailedEntryCount != 0 {
			t.Fatalf("PutEvents: %v", err)
		}
	}
	// "aws.*" sources are AWS's own: local mode's engine emits them through Put, never PutEvents.
	emit := func(bus, detail string) {
		t.Helper()
		if _, err := svc.Put(ctx, bus, "aws.states", "Step Functions Execution Status Change", json.RawMessage(detail), nil); err != nil {
			t.Fatalf("Put: %v", err)
		}
	}
	emit("default", `{"status":"SUCCEEDED","name":"e0"}`)
	emit("default", `{"status":"FAILED","name":"e1"}`)
	emit("sinew", `{"status":"FAILED","name":"wrong-bus"}`)
	put("default", "sinew", "ToolCallPending", `{"call_id":"on-default-bus"}`)
	put("sinew", "sinew", "ToolCallPending", `{"call_id":"c1"}`)
	id, err := svc.Put(ctx, "", "aws.states", "Step Functions Execution Status Change", json.RawMessage(`{"status":"TIMED_OUT","name":"e2"}`), nil)
	if err != nil || id == "" {
		t.Fatalf("Put: %q %v", id, err)
	}
	if _, err := svc.Put(ctx, "", "aws.states", "x", json.RawMessage(`[]`), nil); err == nil {
		t.Error("Put accepted a malformed detail")
	}
	for _, want := range []string{"e1", "e2"} {
		e := receive(t, settle)
		var d struct{ Name string }
		_ = json.Unmarshal(e.Detail, &d)
		if d.Name != want {
			t.Errorf("settle got %s, want %s", d.Name, want)
		}
	}
	e := receive(t, pending)
	if string(e.Detail) != `{"call_id":"c1"}` {
		t.Errorf("pending got %s", e.Detail)
	}
	select {
	case e := <-settle:
		t.Errorf("settle got an extra event %s", e.Detail)
	case e := <-pending:
		t.Errorf("pending got an extra event %s", e.Detail)
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	for _, ch := range []<-chan Event{settle, pending} {
		select {
		case _, open := <-ch:
			if open {
				t.Error("event after cancel")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("channel not closed after cancel")
		}
	}
}

func receive(t *testing.T, ch <-chan Event) Event {
	t.Helper()
	select {
	case e := <-ch:
		return e
	case <-time.After(10 * time.Second):
		t.Fatal("no event delivered")
	}
	return Event{}
}

// TestSlowSubscriber: a subscriber that reads nothing never blocks PutEvents, and later gets every
// event in order.
func TestSlowSubscriber(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	svc, err := Open(Options{Dir: t.TempDir(), Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	ch := svc.Subscribe(ctx, Rule{Pattern: MustParsePattern(`{"source": ["s"]}`)})
	const n = 500
	for i := range n {
		if _, err := svc.Put(ctx, "", "s", "x", json.RawMessage(`{"i":`+strconv.Itoa(i)+`}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		e := receive(t, ch)
		if string(e.Detail) != `{"i":`+strconv.Itoa(i)+`}` {
			t.Fatalf("event %d: %s", i, e.Detail)
		}
	}
}

// TestFeedAcrossClose: events put before and after Close are all in the feed, in order, and a
// second Close is harmless.
func TestFeedAcrossClose(t *testing.T) {
	svc, err := Open(Options{Dir: t.TempDir(), Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	put := func(i int) {
		t.Helper()
		if _, err := svc.Put(t.Context(), "", "s", "x", json.RawMessage(`{"i":`+strconv.Itoa(i)+`}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	put(0)
	put(1)
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}
	put(2)
	for range 2 {
		if err := svc.Close(); err != nil {
			t.Fatal(err)
		}
	}
	feed, err := svc.Feed()
	if err != nil {
		t.Fatal(err)
	}
	if len(feed) != 3 {
		t.Fatalf("%d events in the feed, want 3", len(feed))
	}
	for i, e := range feed {
		if string(e.Detail) != `{"i":`+strconv.Itoa(i)+`}` {
			t.Errorf("event %d: %s", i, e.Detail)
		}
	}
}

func TestReadFeed(t *testing.T) {
	good := `{"event-bus-name":"default","version":"0","id":"1","detail-type":"x","source":"s","account":"000000000000","time":"2026-01-01T00:00:00Z","region":"us-east-1","resources":[],"detail":{}}`
	tests := []struct {
		name    string
		in      string
		n       int
		wantErr bool
	}{
		{"empty", "", 0, false},
		{"two", good + "\n" + good + "\n", 2, false},
		{"torn last line", good + "\n" + good[:40], 1, false},
		{"blank lines", "\n" + good + "\n\n", 1, false},
		{"corrupt middle", good + "\n{oops\n" + good + "\n", 1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadFeed(strings.NewReader(tc.in))
			if (err != nil) != tc.wantErr || len(got) != tc.n {
				t.Errorf("got %d events, err %v; want %d, error %v", len(got), err, tc.n, tc.wantErr)
			}
		})
	}
	if got, err := ReadFeedFile(t.TempDir() + "/missing.jsonl"); err != nil || got != nil {
		t.Errorf("missing file: %v %v", got, err)
	}
}

func TestLogsCarryNoDetail(t *testing.T) {
	var logs bytes.Buffer
	_, client, _ := start(t, slog.New(slog.NewJSONHandler(&logs, nil)))
	_, err := client.PutEvents(context.Background(), &awseb.PutEventsInput{Entries: []types.PutEventsRequestEntry{
		{Source: aws.String("s"), DetailType: aws.String("x"), Detail: aws.String(`{"token":"secret-task-token-123"}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	if logs.Len() == 0 || strings.Contains(logs.String(), "secret-task-token-123") {
		t.Errorf("logs: %s", logs.String())
	}
}

// TestCLI puts events with the AWS CLI, as a user of local mode would.
func TestCLI(t *testing.T) {
	awsCLI, err := exec.LookPath("aws")
	if err != nil {
		t.Fatal("the `aws` command is not on PATH: install the AWS CLI (make deps, or apt-get install awscli)")
	}
	svc, _, url := start(t, nil)
	cmd := exec.Command(awsCLI, "events", "put-events", "--endpoint-url", url, "--output", "json", "--entries",
		`[{"Source":"cli.test","DetailType":"Hello","Detail":"{\"a\":1}","EventBusName":"sinew"},{"Source":"cli.test","DetailType":"Hello","Detail":"nope"}]`)
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "AWS_DEFAULT_REGION=us-east-1",
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_PAGER=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("put-events: %v: %s", err, stderr.String())
	}
	var res struct {
		FailedEntryCount int
		Entries          []struct{ EventId, ErrorCode string }
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	if res.FailedEntryCount != 1 || len(res.Entries) != 2 || res.Entries[0].EventId == "" || res.Entries[1].ErrorCode != "MalformedDetail" {
		t.Errorf("put-events answered %s", out)
	}
	feed, err := svc.Feed()
	if err != nil || len(feed) != 1 || feed[0].Source != "cli.test" || feed[0].EventBusName != "sinew" {
		t.Errorf("feed after the CLI: %+v %v", feed, err)
	}
}

// TestEndpointFromEnvironment: the default SDK configuration finds this endpoint through
// AWS_ENDPOINT_URL_EVENTBRIDGE.
func TestEndpointFromEnvironment(t *testing.T) {
	svc, _, url := start(t, nil)
	t.Setenv("AWS_ENDPOINT_URL_EVENTBRIDGE", url)
	t.Setenv("AWS_ACCESS_KEY_ID", "local")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, err = awseb.NewFromConfig(cfg).PutEvents(context.Background(), &awseb.PutEventsInput{Entries: []types.PutEventsRequestEntry{
		{Source: aws.String("s"), DetailType: aws.String("x"), Detail: aws.String("{}")}}})
	if feed, _ := svc.Feed(); err != nil || len(feed) != 1 {
		t.Fatalf("PutEvents through AWS_ENDPOINT_URL_EVENTBRIDGE: %v", err)
	}
}
