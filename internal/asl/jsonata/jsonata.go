// Package jsonata gives the engine JSONata (the QueryLanguage "JSONata" of Step Functions) behind
// asl.JSONataCompiler, with the functions AWS adds: $partition, $range, $hash, $random, $uuid and
// $parse. The library underneath is github.com/blues/jsonata-go (JSONata 1.5 semantics plus most
// later functions); README.md of this folder records how it was chosen.
package jsonata

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"math"
	mrand "math/rand/v2"
	"regexp"
	"strings"
	"sync"
	"time"

	jsonatalib "github.com/blues/jsonata-go"

	"sinew/internal/asl"
	"sinew/internal/jsonv"
)

// Compiler compiles JSONata for the engine. The zero value is ready to use.
type Compiler struct{}

// New gives a Compiler.
func New() *Compiler { return &Compiler{} }

var (
	// AWS refuses $eval (floci-io/floci#2737, measured on AWS).
	evalRE = regexp.MustCompile(`\$eval\s*\(`)
	// Bare top-level references (a path not starting with $) are refused by CreateStateMachine.
	bareRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.|$)`)
)

// Compile checks the expression's syntax and AWS's own restrictions.
func (c *Compiler) Compile(src string) (asl.JSONataExpr, error) {
	if evalRE.MatchString(src) {
		return nil, &Error{Msg: "T1006: Attempted to invoke a non-function. $eval is not supported"}
	}
	if t := strings.TrimSpace(src); bareRE.MatchString(t) && !isKeyword(t) {
		name := bareRE.FindString(t)
		return nil, &Error{Msg: fmt.Sprintf("UNSUPPORTED_JSONATA_EXPRESSION: Reference to '%s' at the top level is not supported", strings.TrimSuffix(name, "."))}
	}
	if _, err := compile(src); err != nil {
		return nil, err
	}
	guarded := guardLambdas(src)
	if _, err := compile(guarded); err != nil {
		return nil, &Error{Msg: fmt.Sprintf("the expression compiles, but not once its functions are guarded (a fault of sinew's own): %v", err), Err: err}
	}
	return &expr{src: src, guarded: guarded}, nil
}

// Error is a failure to compile or evaluate an expression: the library's error (Err), a panic
// inside the library, or the evaluation's time bound. Its message is the library's own, which the
// engine quotes in States.QueryEvaluationError.
type Error struct {
	Msg string
	Err error
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

func typed(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(*Error); ok {
		return err
	}
	return &Error{Msg: err.Error(), Err: err}
}

// compile is the library's Compile with a panic in its parser turned into an Error.
func compile(src string) (x *jsonatalib.Expr, err error) {
	defer func() {
		if r := recover(); r != nil {
			x, err = nil, &Error{Msg: fmt.Sprintf("the expression cannot be compiled: %v", r)}
		}
	}()
	x, err = jsonatalib.Compile(src)
	return x, typed(err)
}

// MaxEvalTime bounds one evaluation. The library cannot be interrupted, so an expression that runs
// longer (a range of millions of items, a product of ranges) fails with an Error when the bound or
// the context ends first; its goroutine finishes its work on its own and its result is dropped.
var MaxEvalTime = 10 * time.Second

func isKeyword(s string) bool {
	for _, k := range []string{"true", "false", "null", "function", "and", "or", "in"} {
		if s == k || strings.HasPrefix(s, k+" ") || strings.HasPrefix(s, k+"(") {
			return true
		}
	}
	return false
}

type expr struct {
	src     string
	guarded string // src with every lambda body run through the guard (guard.go)
}

// Eval runs the expression with vars bound as $name. The library keeps variables on the compiled
// expression, so each evaluation compiles its own copy: expressions are shared by concurrent
// executions.
// TODO(perf): cache parsed trees once the library can bind variables per evaluation.
func (e *expr) Eval(ctx context.Context, vars map[string]any) (any, bool, error) {
	in := make(map[string]any, len(vars))
	for k, v := range vars {
		in[k] = toLib(v)
	}
	type outcome struct {
		v       any
		defined bool
		err     error
	}
	done := make(chan outcome, 1)
	b := &budget{}
	go func() {
		var o outcome
		defer func() {
			if r := recover(); r != nil {
				o = outcome{err: &Error{Msg: fmt.Sprintf("the expression failed: %v", r)}}
			}
			done <- o
		}()
		o.v, o.defined, o.err = e.eval(in, b)
	}()
	timer := time.NewTimer(MaxEvalTime)
	defer timer.Stop()
	select {
	case o := <-done:
		return o.v, o.defined, typed(o.err)
	case <-timer.C:
		b.stopped.Store(true)
		return nil, false, &Error{Msg: fmt.Sprintf("the expression did not finish within %s", MaxEvalTime)}
	case <-ctx.Done():
		b.stopped.Store(true)
		return nil, false, &Error{Msg: "the evaluation was cancelled: " + ctx.Err().Error(), Err: ctx.Err()}
	}
}

func (e *expr) eval(in map[string]any, b *budget) (any, bool, error) {
	x, err := compile(e.guarded)
	if err != nil {
		return nil, false, err
	}
	if err := x.RegisterExts(awsFunctions); err != nil {
		return nil, false, err
	}
	if err := x.RegisterExts(map[string]jsonatalib.Extension{guardName: b.ext()}); err != nil {
		return nil, false, err
	}
	if err := x.RegisterVars(in); err != nil {
		return nil, false, err
	}
	if strings.Contains(e.guarded, "(") {
		// The library's built-in functions are shared by every expression, and a call sets its
		// evaluation context on the shared function (SetContext) before running it: two
		// evaluations at once could each run with the other's context (a data race, seen with
		// -race in concurrent Map iterations). A call needs "(", so only those evaluations take
		// turns. A runaway one holding the lock makes the others time out, not hang.
		libCalls.Lock()
		defer libCalls.Unlock()
	}
	v, err := x.Eval(nil)
	if errors.Is(err, jsonatalib.ErrUndefined) {
		return nil, false, nil
	}
	var ee *jsonatalib.EvalError
	if errors.As(err, &ee) && ee.Type == jsonatalib.ErrNonCallable {
		// JSONata's own code and text for it, which AWS reports (recorded:
		// test_math_operations_jsonata test_math_random_seeded).
		return nil, false, &Error{Msg: "T1006: Attempted to invoke a non-function", Err: err}
	}
	if err != nil {
		return nil, false, err
	}
	out, err := fromLib(v)
	if err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// libCalls serializes evaluations that may call the library's shared built-in functions.
var libCalls sync.Mutex

// libNull is how the library represents JSON null.
var libNull *any

// toLib gives the library float64 numbers, as JSON decoding would, and its own null.
func toLib(v any) any {
	switch x := v.(type) {
	case nil:
		// The library's JSON null (its own `null` literal); a Go nil is undefined to it, which made
		// a variable or field holding null "return nothing" (recorded: AWS sees null).
		return libNull
	case int64:
		return float64(x)
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = toLib(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = toLib(e)
		}
		return a
	}
	return v
}

// fromLib turns a result into a jsonv value: integral numbers become int64 (AWS prints 3, not 3.0),
// and a function or other non-JSON result is an error.
func fromLib(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, string:
		return x, nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), nil
		}
		return x, nil
	case int:
		return int64(x), nil
	case int64:
		return x, nil
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			c, err := fromLib(e)
			if err != nil {
				return nil, err
			}
			m[k] = c
		}
		return m, nil
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			c, err := fromLib(e)
			if err != nil {
				return nil, err
			}
			a[i] = c
		}
		return a, nil
	}
	// Other Go shapes (typed slices and maps from extensions) go through JSON.
	b, err := jsonv.Encode(v)
	if err != nil {
		return nil, fmt.Errorf("the expression returned a value that is not JSON (%T)", v)
	}
	return jsonv.Decode(b)
}

// awsFunctions are the functions Step Functions adds to JSONata.
var awsFunctions = map[string]jsonatalib.Extension{
	"partition": {Func: partition},
	"range":     {Func: rangeFn},
	"hash":      {Func: hashFn},
	"random":    {Func: random},
	"uuid":      {Func: uuid},
	"parse":     {Func: parse},
}

func partition(arr []any, size float64) ([]any, error) {
	if size < 1 || size != math.Trunc(size) {
		return nil, fmt.Errorf("$partition: the chunk size must be a positive integer")
	}
	n := int(size)
	out := []any{}
	for i := 0; i < len(arr); i += n {
		end := min(i+n, len(arr))
		out = append(out, append([]any(nil), arr[i:end]...))
	}
	return out, nil
}

// rangeFn is $range; like any JSONata sequence, a single item comes back unwrapped (recorded:
// $range(1, 9, 9) is 1).
func rangeFn(start, end, step float64) (any, error) {
	if step == 0 {
		return nil, fmt.Errorf("$range: the step must not be zero")
	}
	out := []any{}
	for v := start; (step > 0 && v <= end) || (step < 0 && v >= end); v += step {
		out = append(out, v)
		if len(out) > 1000 {
			return nil, fmt.Errorf("$range: at most 1000 items")
		}
	}
	if len(out) == 1 {
		return out[0], nil
	}
	return out, nil
}

func hashFn(value any, algorithm string) (string, error) {
	var s string
	switch x := value.(type) {
	case string:
		s = x
	default:
		s = jsonv.EncodeString(jsonv.Normalize(x))
	}
	var h hash.Hash
	switch algorithm {
	case "MD5":
		h = md5.New()
	case "SHA-1":
		h = sha1.New()
	case "SHA-256":
		h = sha256.New()
	case "SHA-384":
		h = sha512.New384()
	case "SHA-512":
		h = sha512.New()
	default:
		return "", fmt.Errorf("$hash: the algorithm must be one of MD5, SHA-1, SHA-256, SHA-384, SHA-512")
	}
	h.Write([]byte(s))
	return hex.EncodeToString(h.Sum(nil)), nil
}

// random is $random([seed]): a seed makes the value repeatable.
func random(seed ...float64) float64 {
	if len(seed) > 0 {
		return mrand.New(mrand.NewPCG(uint64(int64(seed[0])), 0)).Float64()
	}
	return mrand.Float64()
}

func uuid() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func parse(s string) (any, error) {
	v, err := jsonv.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("$parse: %v", err)
	}
	return toLib(v), nil
}
