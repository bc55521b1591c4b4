package main

import (
	"context"
	"log/slog"
	"os"
	"strings"
)

// envLogRequests set to 1 keeps a line for every AWS request local mode answers without error.
const envLogRequests = "SINEW_LOCAL_LOG_REQUESTS"

// perRequest are the messages local mode's AWS APIs log once for every request they answer.
var perRequest = map[string]bool{"aws request": true, "lambda invoke": true}

// quietRequests lowers to Debug, which local mode does not print, the line logged for each AWS
// request answered without error (a status under 400, no function error): under make soak's load those lines, each
// through the redactor and a write to stderr, were a share of the process's CPU and said nothing
// a failure would need. Failed requests keep their line.
type quietRequests struct{ next slog.Handler }

// withQuietRequests wraps h, unless envLogRequests asks for every request's line.
func withQuietRequests(h slog.Handler) slog.Handler {
	if os.Getenv(envLogRequests) == "1" {
		return h
	}
	return quietRequests{next: h}
}

func (h quietRequests) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h quietRequests) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelInfo && perRequest[r.Message] && answered(r) {
		if !h.next.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		r.Level = slog.LevelDebug
	}
	return h.next.Handle(ctx, r)
}

func (h quietRequests) WithAttrs(as []slog.Attr) slog.Handler {
	return quietRequests{next: h.next.WithAttrs(as)}
}

func (h quietRequests) WithGroup(name string) slog.Handler {
	return quietRequests{next: h.next.WithGroup(name)}
}

// answered reports whether a per-request line has a status under 400 and no function error.
func answered(r slog.Record) bool {
	ok := false
	r.Attrs(func(a slog.Attr) bool {
		v := a.Value.Resolve()
		switch a.Key {
		case "status":
			ok = v.Kind() == slog.KindInt64 && v.Int64() < 400
		case "outcome":
			if strings.HasPrefix(v.String(), "function error") {
				ok = false
				return false
			}
		}
		return true
	})
	return ok
}
