package secrets

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
)

// RedactedText replaces a known secret value in a log line.
const RedactedText = "<redacted>"

// MinRedactLen is the shortest value a Redactor registers. A shorter value ("1", "abc") would
// redact every log line that happens to contain those characters, and is too short to be a
// credential worth hiding; such values still never reach a log through sinew's own code (setup is
// never logged), this is only the second line of defence.
const MinRedactLen = 4

// Redactor is the set of secret values known to this process, and the slog handler wrapper that
// hides them. Executors register the values they open (setup values, resolved references) for the
// duration of a call with a Scope, so a warm Lambda does not keep every value it ever saw. The
// process-wide set is for the operator's log only: what a call answers (its error) is redacted
// with the call's own Scope, since one process (local mode, a warm Lambda) serves many
// developers, and an answer redacted with their secrets would tell a caller which of its guesses
// is another's secret. Only
// literal occurrences are found: a value that a library logs transformed (base64 in an SMTP AUTH
// line, URL-escaped) is not. It is safe for concurrent use.
type Redactor struct {
	mu     sync.RWMutex
	counts map[string]int
	rep    *strings.Replacer // rebuilt lazily when the set changes; nil when empty or stale
	stale  bool
}

// NewRedactor is an empty redactor.
func NewRedactor() *Redactor { return &Redactor{counts: map[string]int{}} }

// Add registers values for the life of the process (shorter than MinRedactLen: ignored).
func (r *Redactor) Add(values ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range values {
		if len(v) >= MinRedactLen {
			r.counts[v]++
			r.stale = true
		}
	}
}

func (r *Redactor) remove(values []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range values {
		if n, ok := r.counts[v]; ok {
			if n <= 1 {
				delete(r.counts, v)
			} else {
				r.counts[v] = n - 1
			}
			r.stale = true
		}
	}
}

// Scope registers values for one call: Close forgets them (a value also registered by another
// live scope stays until that one closes too).
type Scope struct {
	r      *Redactor
	mu     sync.Mutex
	values []string
}

// Scope starts a call's scope.
func (r *Redactor) Scope() *Scope { return &Scope{r: r} }

// Add registers values until Close.
func (s *Scope) Add(values ...string) {
	var keep []string
	for _, v := range values {
		if len(v) >= MinRedactLen {
			keep = append(keep, v)
		}
	}
	if len(keep) == 0 {
		return
	}
	s.r.Add(keep...)
	s.mu.Lock()
	s.values = append(s.values, keep...)
	s.mu.Unlock()
}

// AddJSON registers every string found in v (a JSON value: a setup map, resolved headers).
func (s *Scope) AddJSON(v any) { s.Add(Strings(v)...) }

// Redact is s with the scope's own values replaced by RedactedText: what a call's error may be
// checked against. Unlike Redactor.Redact it knows nothing of the other calls in flight, so the
// text a call answers never depends on another call's (or another developer's) secrets, and an
// error that echoes a guess cannot tell whether the guess is someone else's secret.
func (s *Scope) Redact(text string) string {
	s.mu.Lock()
	vals := slices.Clone(s.values)
	s.mu.Unlock()
	if len(vals) == 0 {
		return text
	}
	return replacerOf(vals).Replace(text)
}

// replacerOf replaces each of vals, longest first: where one value contains another, the whole of
// the longer one goes.
func replacerOf(vals []string) *strings.Replacer {
	slices.SortFunc(vals, func(a, b string) int { return len(b) - len(a) })
	args := make([]string, 0, 2*len(vals))
	for _, v := range vals {
		args = append(args, v, RedactedText)
	}
	return strings.NewReplacer(args...)
}

// Close forgets the scope's values.
func (s *Scope) Close() {
	s.mu.Lock()
	vals := s.values
	s.values = nil
	s.mu.Unlock()
	s.r.remove(vals)
}

// Strings lists every string inside a JSON value (maps, slices, strings; map keys are not values).
func Strings(v any) []string {
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]string:
			for _, e := range x {
				out = append(out, e)
			}
		case []string:
			out = append(out, x...)
		}
	}
	walk(v)
	return out
}

// Redact is s with every registered value replaced by RedactedText.
func (r *Redactor) Redact(s string) string {
	rep := r.replacer()
	if rep == nil {
		return s
	}
	return rep.Replace(s)
}

func (r *Redactor) replacer() *strings.Replacer {
	r.mu.RLock()
	rep, stale, n := r.rep, r.stale, len(r.counts)
	r.mu.RUnlock()
	if n == 0 {
		return nil
	}
	if !stale {
		return rep
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stale {
		vals := make([]string, 0, len(r.counts))
		for v := range r.counts {
			vals = append(vals, v)
		}
		r.rep, r.stale = nil, false
		if len(vals) > 0 {
			r.rep = replacerOf(vals)
		}
	}
	return r.rep
}

// Handler wraps next so that no record it handles carries a registered value: in the message, in
// any attribute (strings, errors, Stringers, values of any kind that print one), inside groups, in
// attributes bound with WithAttrs before the value was registered. Values are matched when a
// record is handled, so a logger made at start-up still redacts values registered later.
func (r *Redactor) Handler(next slog.Handler) slog.Handler { return &handler{r: r, next: next} }

type handler struct {
	r    *Redactor
	next slog.Handler
	ops  []op // WithAttrs and WithGroup calls, in order, applied at Handle time
}

// op is one WithGroup (group != "") or WithAttrs (attrs) call.
type op struct {
	group string
	attrs []slog.Attr
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	return &handler{r: h.r, next: h.next, ops: append(slices.Clip(h.ops), op{attrs: attrs})}
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &handler{r: h.r, next: h.next, ops: append(slices.Clip(h.ops), op{group: name})}
}

func (h *handler) Handle(ctx context.Context, rec slog.Record) error {
	rep := h.r.replacer()
	var attrs []slog.Attr
	rec.Attrs(func(a slog.Attr) bool { attrs = append(attrs, a); return true })
	// Nest the record's attributes in the bound groups, innermost last, with the bound attributes
	// where they were bound: what the wrapped handler would have built itself.
	for i := len(h.ops) - 1; i >= 0; i-- {
		if o := h.ops[i]; o.group != "" {
			attrs = []slog.Attr{{Key: o.group, Value: slog.GroupValue(attrs...)}}
		} else {
			attrs = append(slices.Clip(o.attrs), attrs...)
		}
	}
	out := slog.NewRecord(rec.Time, rec.Level, rec.Message, rec.PC)
	if rep != nil {
		out.Message = rep.Replace(rec.Message)
		for i := range attrs {
			attrs[i] = redactAttr(rep, attrs[i])
		}
	}
	out.AddAttrs(attrs...)
	return h.next.Handle(ctx, out)
}

func redactAttr(rep *strings.Replacer, a slog.Attr) slog.Attr {
	a.Key = rep.Replace(a.Key)
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		a.Value = slog.StringValue(rep.Replace(v.String()))
	case slog.KindGroup:
		g := v.Group()
		out := make([]slog.Attr, len(g))
		for i, x := range g {
			out[i] = redactAttr(rep, x)
		}
		a.Value = slog.GroupValue(out...)
	case slog.KindAny:
		// Errors, Stringers, maps, structs: what a handler would print, checked as text. A value
		// that carries no secret keeps its own form (an error stays an error for the handler).
		var text string
		switch x := v.Any().(type) {
		case error:
			text = x.Error()
		case []byte:
			text = string(x)
		case json.RawMessage:
			text = string(x)
		case fmt.Stringer:
			text = x.String()
		default:
			text = fmt.Sprintf("%+v", x)
		}
		if red := rep.Replace(text); red != text {
			a.Value = slog.StringValue(red)
		} else {
			a.Value = v
		}
	default:
		a.Value = v
	}
	return a
}
