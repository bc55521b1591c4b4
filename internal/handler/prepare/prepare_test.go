package prepare

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"sinew/internal/lambdaboundary"
	"sinew/internal/workflow"
)

// TestWaitForClientAtTheBoundary: Prepare's answer for a function call is named
// Sinew.WaitForClient, which tool_call's Catch matches, and is not logged as a failure.
func TestWaitForClientAtTheBoundary(t *testing.T) {
	if e := lambdaboundary.Error(waitForClient{}); e.Type != workflow.ErrWaitForClient || e.Message != waitMessage {
		t.Errorf("boundary error = %+v, want %s", e, workflow.ErrWaitForClient)
	}
	var buf bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	defer slog.SetDefault(prev)
	h := lambdaboundary.Wrap(func(context.Context, struct{}) (any, error) { return nil, waitForClient{} })
	if _, err := h(context.Background(), struct{}{}); err == nil {
		t.Fatal("no error")
	}
	if strings.Contains(buf.String(), "handler failed") {
		t.Errorf("logged as a failure: %s", buf.String())
	}
}

// TestRequest: prepare takes the request bare (the Prepare state; Dispatch before its envelope,
// with the token beside it) or inside Dispatch's envelope, and refuses an envelope without one.
func TestRequest(t *testing.T) {
	const req = `"developer_id":"dev","agent_id":"a","task_id":null,"session_id":null,"tool":"echo","arguments":{"n":1},"execution_id":"e"`
	for _, tc := range []struct {
		name, event, token, wantErr string
	}{
		{"the Prepare state", `{` + req + `}`, "", ""},
		{"Dispatch before its envelope", `{` + req + `,"task_token":"t"}`, "t", ""},
		{"Dispatch's envelope", `{"call":null,"tool":null,"context":null,"request":{` + req + `},"task_token":"t","held":false}`, "t", ""},
		{"an envelope with a call", `{"call":{},"tool":null,"context":{},"request":null,"task_token":"t"}`, "", "Sinew.InvalidInput"},
		{"an unknown field", `{` + req + `,"held":true}`, "", "Sinew.InvalidInput"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := request([]byte(tc.event))
			if tc.wantErr != "" {
				if e := lambdaboundary.Error(err); err == nil || e.Type != tc.wantErr {
					t.Fatalf("error %v, want %s", err, tc.wantErr)
				}
				return
			}
			if err != nil || in.Tool != "echo" || in.ExecutionID != "e" || in.TaskToken != tc.token || in.Arguments == nil {
				t.Errorf("request = %+v, %v", in, err)
			}
		})
	}
}
