package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestQuietRequests: a per-request line of a request answered without error is not printed at
// Info, and is at Debug; a failed request's line, a function error's and any other line are.
func TestQuietRequests(t *testing.T) {
	tests := []struct {
		name    string
		msg     string
		args    []any
		atInfo  bool // printed when the level is Info
		atDebug bool
	}{
		{"aws request answered", "aws request", []any{"service", "sfn", "status", 200}, false, true},
		{"aws request refused", "aws request", []any{"service", "sfn", "status", 400}, true, true},
		{"aws request failed", "aws request", []any{"service", "kms", "status", 500}, true, true},
		{"lambda invoke answered", "lambda invoke", []any{"status", 200, "outcome", "ok"}, false, true},
		{"lambda invoke queued", "lambda invoke", []any{"status", 202, "outcome", "queued"}, false, true},
		{"lambda invoke function error", "lambda invoke", []any{"status", 200, "outcome", "function error Sinew.Transient"}, true, true},
		{"another line", "state machine loaded", []any{"status", 200}, true, true},
		{"no status", "aws request", nil, true, true},
	}
	for _, tc := range tests {
		for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
			var buf bytes.Buffer
			log := slog.New(withQuietRequests(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level}))).With("pid", 1)
			log.Info(tc.msg, tc.args...)
			want := tc.atInfo
			if level == slog.LevelDebug {
				want = tc.atDebug
			}
			if got := strings.Contains(buf.String(), tc.msg); got != want {
				t.Errorf("%s at %s: printed %v, want %v (%q)", tc.name, level, got, want, buf.String())
			}
		}
	}
	t.Run("every line asked for", func(t *testing.T) {
		t.Setenv(envLogRequests, "1")
		var buf bytes.Buffer
		slog.New(withQuietRequests(slog.NewTextHandler(&buf, nil))).Info("aws request", "status", 200)
		if !strings.Contains(buf.String(), "aws request") {
			t.Errorf("the line was not printed")
		}
	})
}
