// Package jsonata is a JSONata 2.0.6 evaluator in pure Go.
//
// It has a lexer, a Pratt parser, the tree pass of paths and bindings, an evaluator of sequences,
// lambdas, closures and partial application, and the function library of jsonata-js 2.0.6
// (https://github.com/jsonata-js/jsonata/tree/v2.0.6), whose behaviour it follows.
// testdata/jsonata-test-suite holds that version's official test suite, which TestSuite runs; the
// engine's Step Functions flavour of it is internal/asl/jsonata.
//
// Every evaluation is bounded: in time (Options.Timeout and the context, checked as it runs), in
// depth (Options.MaxDepth nested evaluation steps) and in memory (Options.MaxItems values
// allocated, strings up to 64 MiB). A bound ends it with U1001; no goroutine outlives a call.
// An Expr holds only its parsed tree, so evaluations share nothing and run in parallel.
//
// Differences from jsonata-js, each forced by Go or chosen to keep an evaluation bounded:
//   - Regular expressions are Go's RE2, linear in time. JavaScript syntax RE2 lacks is refused at
//     compile time with S0303: lookahead (?= (?!, lookbehind (?<= (?<!, backreferences \1 and
//     [^]. \uXXXX is rewritten for RE2, and the flags i and m map to (?i) and (?m). \s is ASCII
//     whitespace in RE2 (JavaScript adds the Unicode spaces); \d, \w and \b are ASCII in both.
//   - Strings are UTF-8, so a lone UTF-16 surrogate cannot exist (JSON input turns it into
//     U+FFFD); the offsets JSONata shows ($match's index, a matcher's start and end) are counted in
//     UTF-16 units as in JavaScript.
//   - $toMillis reads an ISO 8601 date-time without an offset as UTC (JavaScript: local time).
//   - $formatNumber with an exponent picture formats 0 as 0e0 (jsonata-js never returns), roman
//     numerals stop at 10,000,000 and built strings at 64 MiB (U1001).
//   - Deep recursion ends with U1001 at MaxDepth (JavaScript: a stack overflow RangeError).
package jsonata

import (
	"context"
	"encoding/json"
	"math"
	"time"
)

// Options bound an evaluation and give it its variables.
type Options struct {
	// Bindings are variables ($name) the expression sees, in Go form (see FromGo).
	Bindings map[string]any
	// Functions are further functions the expression can call ($name).
	Functions map[string]*Native
	// Timeout ends an evaluation running longer (0: none beyond the context).
	Timeout time.Duration
	// MaxDepth bounds nested evaluation steps (0: DefaultMaxDepth).
	MaxDepth int
	// MaxItems bounds the values an evaluation allocates (0: DefaultMaxItems).
	MaxItems int
	// Now fixes $now() and $millis() (zero: the time the evaluation starts).
	Now time.Time
}

// Defaults of Options.
const (
	DefaultMaxDepth = 10000
	DefaultMaxItems = 50_000_000
)

// Expr is a compiled expression, safe for concurrent evaluations.
type Expr struct {
	ast *node
	src string
}

// Compile parses an expression. A fault of the parser's own is an error (U1001), not a panic.
func Compile(src string) (x *Expr, err error) {
	defer func() {
		if r := recover(); r != nil {
			x, err = nil, &Error{Code: "U1001", Msg: "the expression could not be parsed: " + panicText(r)}
		}
	}()
	ast, err := parse(src)
	if err != nil {
		return nil, err
	}
	return &Expr{ast: ast, src: src}, nil
}

// Source gives the expression's text.
func (e *Expr) Source() string { return e.src }

// Eval evaluates the expression with input (in Go form, see FromGo) as the context item. It gives
// the result in the evaluator's form (see ToGo), or nil and false when the result is undefined.
func (e *Expr) Eval(ctx context.Context, input any, opts Options) (any, bool, error) {
	return e.evalAny(ctx, FromGo(input), opts)
}

func (e *Expr) evalAny(ctx context.Context, in any, opts Options) (result any, defined bool, err error) {
	if _, ok := in.(undefinedInput); ok {
		in = nil
	}
	ev := &evaluator{ctx: ctx, maxDepth: opts.MaxDepth, maxItems: opts.MaxItems, now: opts.Now}
	if ev.maxDepth == 0 {
		ev.maxDepth = DefaultMaxDepth
	}
	if ev.maxItems == 0 {
		ev.maxItems = DefaultMaxItems
	}
	if ev.now.IsZero() {
		ev.now = time.Now()
	}
	if opts.Timeout > 0 {
		ev.deadline = time.Now().Add(opts.Timeout)
	}
	root := &frame{}
	if len(opts.Functions) > 0 {
		root.global = make(map[string]any, len(opts.Functions))
		for name, fn := range opts.Functions {
			if fn == nil {
				root.global[name] = nil // Disabled
			} else {
				root.global[name] = fn
			}
		}
	}
	env := newFrame(root)
	for name, v := range opts.Bindings {
		env.bind(name, FromGo(v))
	}
	env.bind("$", in)
	if a, ok := in.(*Array); ok {
		in = &Array{Items: []any{a}, seq: true, outerWrapper: true}
	}
	defer func() {
		if r := recover(); r != nil {
			result, defined, err = nil, false, &Error{Code: "U1001", Msg: "the evaluation failed: " + panicText(r)}
		}
	}()
	v, err := ev.evaluate(e.ast, in, env)
	if err != nil {
		return nil, false, err
	}
	if v == nil {
		return nil, false, nil
	}
	return v, true, nil
}

func panicText(r any) string {
	if e, ok := r.(error); ok {
		return e.Error()
	}
	if s, ok := r.(string); ok {
		return s
	}
	return "unexpected value"
}

// FromGo converts a Go value into the evaluator's form: nil is null, numbers become float64,
// map[string]any becomes an *Object (keys sorted), []any an *Array. Values already in the
// evaluator's form pass through.
func FromGo(v any) any {
	switch x := v.(type) {
	case nil:
		return Null
	case float64, string, bool, nullT, *Array, *Object, *Lambda, *Native, *partialNative:
		return v
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case int32:
		return float64(x)
	case float32:
		return float64(x)
	case json.Number:
		f, _ := x.Float64()
		return f
	case map[string]any:
		o := &Object{vals: make(map[string]any, len(x)), lazy: true}
		for k, e := range x {
			o.vals[k] = FromGo(e)
		}
		return o
	case []any:
		a := &Array{Items: make([]any, len(x))}
		for i, it := range x {
			a.Items[i] = FromGo(it)
		}
		return a
	}
	// other Go shapes (typed maps and slices, structs) go through JSON
	b, err := json.Marshal(v)
	if err != nil {
		return Null
	}
	out, err := ParseJSON(b)
	if err != nil {
		return Null
	}
	return out
}

// NewFunction makes a function for Options.Functions. sig is a JSONata function signature such as
// "<a<n>n:a>" ("" for none): arguments that do not match it fail with T0410 before fn runs. fn
// receives the arguments in the evaluator's form (nil for undefined) and returns a result in it;
// arity is the number of arguments a higher-order function passes it.
func NewFunction(name, sig string, arity int, fn func(args []any) (any, error)) (*Native, error) {
	n := &Native{name: name, arity: arity, fn: func(_ *evaluator, _ *call, a []any) (any, error) { return fn(a) }}
	if sig != "" {
		s, err := parseSignature(sig)
		if err != nil {
			return nil, err
		}
		n.sig = s
	}
	return n, nil
}

// NewSequence gives a sequence of items: a single item stands for itself and none for undefined,
// as the results of JSONata's own functions do.
func NewSequence(items []any) *Array { return &Array{Items: items, seq: true} }

// NewArray gives a JSON array.
func NewArray(items []any) *Array { return &Array{Items: items} }

// Disabled, as a value of Options.Functions, removes a built-in function: calling it fails with
// T1006 as calling any non-function does.
var Disabled *Native

// ToGo converts a result into plain Go: nil for null, float64 (int64 when integral and
// WithInts), string, bool, []any, map[string]any. A function becomes "" as in JSON output.
func ToGo(v any, ints bool) any {
	switch x := v.(type) {
	case nil, nullT:
		return nil
	case float64:
		if ints && x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
		return x
	case *Array:
		out := make([]any, len(x.Items))
		for i, it := range x.Items {
			out[i] = ToGo(it, ints)
		}
		return out
	case *Object:
		out := make(map[string]any, x.Len())
		for _, k := range x.Keys() {
			if x.vals[k] != nil {
				out[k] = ToGo(x.vals[k], ints)
			}
		}
		return out
	case *Lambda, *Native, *partialNative:
		return ""
	}
	return v
}

// MarshalJSON writes a result as JSON, as JavaScript's JSON.stringify does (keys in order).
func MarshalJSON(v any) ([]byte, error) {
	s, err := stringifyExact(v)
	return []byte(s), err
}

// undefinedInput is an input that is undefined (no context item), as opposed to JSON null.
type undefinedInput struct{}

// EvalUndefined is Eval with no input at all: the context item is undefined, not null.
func (e *Expr) EvalUndefined(ctx context.Context, opts Options) (any, bool, error) {
	return e.evalAny(ctx, undefinedInput{}, opts)
}

// IsFunction reports a function value.
func IsFunction(v any) bool { return isFunction(v) }
