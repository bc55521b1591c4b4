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
