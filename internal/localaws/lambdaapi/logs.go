package lambdaapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"sinew/internal/localaws/awsjson"
)

// maxLogResult is how much of an invocation's log Invoke with LogType Tail returns: its last 4 KB
// (https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html, LogResult).
const maxLogResult = 4096

// invocationLog is one synchronous invocation's log: Lambda's START, END and REPORT lines around
// what the function logged with the invocation's context.
type invocationLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *invocationLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// tail is the log's last 4 KB, base64-encoded as X-Amz-Log-Result carries it.
func (l *invocationLog) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buf.Bytes()
	if len(b) > maxLogResult {
		b = b[len(b)-maxLogResult:]
	}
	return base64.StdEncoding.EncodeToString(b)
}

type logKey struct{}

// InvocationLog is where a function run in-process writes its log lines so that Invoke with
// LogType Tail returns them; io.Discard outside an invocation.
func InvocationLog(ctx context.Context) io.Writer {
	if l, ok := ctx.Value(logKey{}).(*invocationLog); ok {
		return l
	}
	return io.Discard
}

// TeeLogs copies each record logged with an invocation's context into that invocation's log, as
// a JSON line, then hands it to next. Put it inside any redacting handler, so the copy is the
// redacted record.
func TeeLogs(next slog.Handler) slog.Handler { return teeHandler{next: next} }

type teeHandler struct {
	next  slog.Handler
	attrs []slog.Attr
	group string
}

// Enabled: an invocation's log takes Info and above whatever next takes.
func (h teeHandler) Enabled(ctx context.Context, l slog.Level) bool {
	if _, ok := ctx.Value(logKey{}).(*invocationLog); ok && l >= slog.LevelInfo {
		return true
	}
	return h.next.Enabled(ctx, l)
}

func (h teeHandler) Handle(ctx context.Context, r slog.Record) error {
	if l, ok := ctx.Value(logKey{}).(*invocationLog); ok {
		var jh slog.Handler = slog.NewJSONHandler(l, nil)
		if len(h.attrs) > 0 {
			jh = jh.WithAttrs(h.attrs)
		}
		if h.group != "" {
			jh = jh.WithGroup(h.group)
		}
		_ = jh.Handle(ctx, r.Clone())
	}
	if !h.next.Enabled(ctx, r.Level) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

func (h teeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return teeHandler{next: h.next.WithAttrs(as), attrs: append(append([]slog.Attr(nil), h.attrs...), as...), group: h.group}
}

func (h teeHandler) WithGroup(name string) slog.Handler {
	// A second group nests under the first only in next; the copy keeps the innermost name.
	return teeHandler{next: h.next.WithGroup(name), attrs: h.attrs, group: name}
}

// logType reads X-Amz-Log-Type: None (the default) or Tail.
func logType(r *http.Request) (bool, *apiError) {
	switch v := r.Header.Get("X-Amz-Log-Type"); v {
	case "", "None":
		return false, nil
	case "Tail":
		return true, nil
	default:
		return false, errorf(http.StatusBadRequest, "ValidationException",
			"1 validation error detected: Value '%s' at 'logType' failed to satisfy constraint: Member must satisfy enum value set: [Tail, None]", awsjson.Clip(v, 200))
	}
}

// runLogged runs a synchronous invocation with its own log, framed as Lambda frames it, and gives
// the log's tail with the result.
func (s *Service) runLogged(ctx context.Context, reqID, name string, inv Invoker, payload []byte) ([]byte, *FunctionError, string, error) {
	l := &invocationLog{}
	fmt.Fprintf(l, "START RequestId: %s Version: $LATEST\n", reqID)
	start := time.Now()
	out, ferr, err := s.run(context.WithValue(ctx, logKey{}, l), name, inv, payload)
	d := time.Since(start)
	if ferr != nil {
		fmt.Fprintf(l, "%s: %s\n", ferr.Type, ferr.Message)
	}
	fmt.Fprintf(l, "END RequestId: %s\nREPORT RequestId: %s\tDuration: %.2f ms\tBilled Duration: %d ms\t\n",
		reqID, reqID, float64(d.Microseconds())/1000, max(1, d.Milliseconds()+1))
	return out, ferr, l.tail(), err
}
