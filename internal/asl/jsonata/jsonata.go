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
		return nil, errors.New("T1006: Attempted to invoke a non-function. $eval is not supported")
	}
	if t := strings.TrimSpace(src); bareRE.MatchString(t) && !isKeyword(t) {
		name := bareRE.FindString(t)
		return nil, fmt.Errorf("UNSUPPORTED_JSONATA_EXPRESSION: Reference to '%s' at the top level is not supported", strings.TrimSuffix(name, "."))
	}
	if _, err := jsonatalib.Compile(src); err != nil {
		return nil, err
	}
	return &expr{src: src}, nil
}

func isKeyword(s string) bool {
	for _, k := range []string{"true", "false", "null", "function", "and", "or", "in"} {
		if s == k || strings.HasPrefix(s, k+" ") || strings.HasPrefix(s, k+"(") {
			return true
		}
	}
	return false
}

type expr struct {
	src string
}

// Eval runs the expression with vars bound as $name. The library keeps variables on the compiled
// expression, so each evaluation compiles its own copy: expressions are shared by concurrent
// executions.
// TODO(perf): cache parsed trees once the library can bind variables per evaluation.
func (e *expr) Eval(ctx context.Context, vars map[string]any) (any, bool, error) {
	x, err := jsonatalib.Compile(e.src)
	if err != nil {
		return nil, false, err
	}
	if err := x.RegisterExts(awsFunctions); err != nil {
		return nil, false, err
	}
	in := make(map[string]any, len(vars))
	for k, v := range vars {
		in[k] = toLib(v)
	}
	if err := x.RegisterVars(in); err != nil {
		return nil, false, err
	}
	v, err := x.Eval(nil)
	if errors.Is(err, jsonatalib.ErrUndefined) {
		return nil, false, nil
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

// toLib gives the library float64 numbers, as JSON decoding would.
func toLib(v any) any {
	switch x := v.(type) {
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
