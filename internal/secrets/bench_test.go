package secrets_test

import (
	"fmt"
	"io"
	"log/slog"
	"testing"

	"sinew/internal/secrets"
)

// The redacting handler's cost per log line over a JSON handler, with n registered values.
func BenchmarkLogLine(b *testing.B) {
	for _, n := range []int{0, 10, 100} {
		b.Run(fmt.Sprintf("values=%d", n), func(b *testing.B) {
			r := secrets.NewRedactor()
			for i := range n {
				r.Add(fmt.Sprintf("secret-value-%04d", i))
			}
			l := slog.New(r.Handler(slog.NewJSONHandler(io.Discard, nil))).With("call_id", "call_abc")
			b.ReportAllocs()
			for b.Loop() {
				l.Info("api_call done", "method", "GET", "host", "api.example.com", "status", 200, "ms", 41)
			}
		})
	}
	b.Run("plain JSON handler", func(b *testing.B) {
		l := slog.New(slog.NewJSONHandler(io.Discard, nil)).With("call_id", "call_abc")
		b.ReportAllocs()
		for b.Loop() {
			l.Info("api_call done", "method", "GET", "host", "api.example.com", "status", 200, "ms", 41)
		}
	})
}
