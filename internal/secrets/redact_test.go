package secrets_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"sinew/internal/secrets"
	"sinew/internal/secrets/secretstest"
)

type lazy struct{ v string }

func (l lazy) LogValue() slog.Value { return slog.StringValue("lazy " + l.v) }

type point struct{ Pass string }

func TestRedactingHandler(t *testing.T) {
	const pw = "pa55w0rd-smtp"
	const key = "sk-live-ABCDEFGH"
	tests := []struct {
		name string
		log  func(l *slog.Logger)
	}{
		{"message", func(l *slog.Logger) { l.Info("login as alice with " + pw) }},
		{"string attribute", func(l *slog.Logger) { l.Info("x", "password", pw) }},
		{"attribute key", func(l *slog.Logger) { l.Info("x", pw, 1) }},
		{"nested groups", func(l *slog.Logger) {
			l.Info("x", slog.Group("setup", slog.Group("smtp", slog.String("password", "pre-"+pw+"-post"))))
		}},
		{"error value", func(l *slog.Logger) { l.Error("x", "err", fmt.Errorf("auth: %w", errors.New("535 bad "+pw))) }},
		{"bytes", func(l *slog.Logger) { l.Info("x", "body", []byte("Authorization: Bearer "+key)) }},
		{"raw json", func(l *slog.Logger) { l.Info("x", "body", json.RawMessage(`{"k":"`+key+`"}`)) }},
		{"struct", func(l *slog.Logger) { l.Info("x", "setup", point{Pass: pw}) }},
		{"map", func(l *slog.Logger) { l.Info("x", "setup", map[string]any{"password": pw}) }},
		{"log valuer", func(l *slog.Logger) { l.Info("x", "v", lazy{pw}) }},
		{"bound before the value was known", func(l *slog.Logger) { l.Info("late") }},
		{"bound group then attrs", func(l *slog.Logger) { l.WithGroup("call").With("hdr", "Bearer "+key).Info("x", "n", 1) }},
		{"two values, one inside the other's text", func(l *slog.Logger) { l.Info(pw + key) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := secrets.NewRedactor()
			var logs secretstest.Logs
			base := logs.Logger(r)
			// Bound before the values are registered: redaction happens when a line is written.
			l := base
			if tc.name == "bound before the value was known" {
				l = base.With("password", pw).WithGroup("g").With("key", key)
			}
			sc := r.Scope()
			sc.Add(pw, key)
			tc.log(l)
			sc.Close()
			out := logs.String()
			if out == "" {
				t.Fatal("nothing logged")
			}
			secretstest.AssertNoLeak(t, map[string]string{"log": out}, []string{pw, key})
			if !strings.Contains(out, secrets.RedactedText) {
				t.Errorf("no %s marker in %s", secrets.RedactedText, out)
			}
		})
	}
}

func TestRedactingHandlerKeepsStructure(t *testing.T) {
	r := secrets.NewRedactor()
	r.Add("topsecretvalue")
	var logs secretstest.Logs
	logs.Logger(r).With("a", 1).WithGroup("g").With("b", "x-topsecretvalue").Info("m", "c", errors.New("plain error"), "d", 2.5)
	var line map[string]any
	if err := json.Unmarshal([]byte(logs.String()), &line); err != nil {
		t.Fatalf("%v: %s", err, logs.String())
	}
	g, _ := line["g"].(map[string]any)
	if line["a"] != 1.0 || g == nil || g["b"] != "x-<redacted>" || g["c"] != "plain error" || g["d"] != 2.5 || line["msg"] != "m" {
		t.Errorf("line = %v", line)
	}
}

func TestRedactorRegistration(t *testing.T) {
	r := secrets.NewRedactor()
	r.Add("abc", "")                                    // under MinRedactLen: ignored
	if got := r.Redact("abc abcd"); got != "abc abcd" { // nothing registered
		t.Errorf("short value redacted: %q", got)
	}
	s1, s2 := r.Scope(), r.Scope()
	s1.Add("shared-value", "only-one")
	s2.Add("shared-value")
	s1.Close()
	if got := r.Redact("shared-value only-one"); got != "<redacted> only-one" {
		t.Errorf("after one scope closed: %q", got)
	}
	s2.Close()
	if got := r.Redact("shared-value"); got != "shared-value" {
		t.Errorf("after both closed: %q", got)
	}
	r.Add("forever-value")
	s3 := r.Scope()
	s3.AddJSON(map[string]any{"a": []any{"nested-value", 42, map[string]any{"b": "deeper-value"}}})
	if got := r.Redact("forever-value nested-value deeper-value"); got != "<redacted> <redacted> <redacted>" {
		t.Errorf("json values: %q", got)
	}
	s3.Close()
	if got := r.Redact("forever-value nested-value"); got != "<redacted> nested-value" {
		t.Errorf("after close: %q", got)
	}
}

func TestRedactorLongestFirst(t *testing.T) {
	r := secrets.NewRedactor()
	r.Add("secret", "secret-and-more")
	if got := r.Redact("x secret-and-more y secret"); got != "x <redacted> y <redacted>" {
		t.Errorf("got %q", got)
	}
}

// Calls running at once in one process (local mode's in-process executors) each register and
// forget their values while others log.
func TestRedactorConcurrentScopes(t *testing.T) {
	r := secrets.NewRedactor()
	var logs secretstest.Logs
	l := logs.Logger(r)
	done := make(chan struct{})
	for i := range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for j := range 50 {
				v := fmt.Sprintf("call-%d-secret-%03d", i, j)
				sc := r.Scope()
				sc.Add(v)
				l.Info("using " + v)
				sc.Close()
			}
		}()
	}
	for range 8 {
		<-done
	}
	var values []string
	for i := range 8 {
		for j := range 50 {
			values = append(values, fmt.Sprintf("call-%d-secret-%03d", i, j))
		}
	}
	secretstest.AssertNoLeak(t, map[string]string{"log": logs.String()}, values)
	if got := strings.Count(logs.String(), "using <redacted>"); got != 400 {
		t.Errorf("%d redacted lines, want 400", got)
	}
}

// TestScopeRedactOwnValuesOnly: a scope redacts the values it registered and no other scope's, so
// one call's answer never depends on what another call (another developer's) has opened.
func TestScopeRedactOwnValuesOnly(t *testing.T) {
	r := secrets.NewRedactor()
	a, b := r.Scope(), r.Scope()
	defer a.Close()
	defer b.Close()
	a.Add("alpha-secret", "alpha-secret-longer")
	b.Add("bravo-secret")
	tests := []struct{ in, want string }{
		{"x alpha-secret-longer y", "x " + secrets.RedactedText + " y"},
		{"x alpha-secret y", "x <redacted> y"},
		{"x bravo-secret y", "x bravo-secret y"},
		{"nothing", "nothing"},
	}
	for _, tt := range tests {
		if got := a.Redact(tt.in); got != tt.want {
			t.Errorf("a.Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := r.Redact("bravo-secret alpha-secret"); got != "<redacted> <redacted>" {
		t.Errorf("the process's log redactor: %q, want both hidden", got)
	}
}
