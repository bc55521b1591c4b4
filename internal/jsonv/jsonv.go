// Package jsonv is the one in-memory form of a JSON value that the engine and its path, intrinsic
// and JSONata code share.
//
// Its types are nil, bool, string, int64 (an integer literal that fits), float64 (any other
// number), []any and map[string]any. Keeping integers apart from floats matches what Step Functions
// (Java) prints: 3 stays 3, 3.0 stays a double. Strict is the one strict decoding of the documents
// clients send to sinew (HTTP request bodies, Lambda events) into Go values.
package jsonv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Decode parses one JSON document into the package's value form.
func Decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("unexpected data after the JSON value")
	}
	return Normalize(v), nil
}

// DecodeString is Decode of a string.
func DecodeString(s string) (any, error) { return Decode([]byte(s)) }

// Normalize turns json.Number (and other Go numeric types) into int64 or float64, recursively.
func Normalize(v any) any {
	switch x := v.(type) {
	case json.Number:
		return number(string(x))
	case map[string]any:
		for k, e := range x {
			x[k] = Normalize(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = Normalize(e)
		}
		return x
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case float32:
		return float64(x)
	default:
		return v
	}
}

func number(s string) any {
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.Inf(1)
	}
	return f
}

// Encode writes v as compact JSON without HTML escaping (Step Functions does not escape <, > or &).
func Encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// EncodeString is Encode to a string; it panics never: values of this package always encode, and
// anything else yields its error text.
func EncodeString(v any) string {
	b, err := Encode(v)
	if err != nil {
		return "<unencodable: " + err.Error() + ">"
	}
	return string(b)
}

// Clone deep-copies a value.
func Clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = Clone(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = Clone(e)
		}
		return s
	default:
		return v
	}
}

// Equal reports deep equality; numbers compare by value across int64 and float64.
func Equal(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, e := range x {
			f, ok := y[k]
			if !ok || !Equal(e, f) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case int64, float64:
		fa, oka := ToFloat(a)
		fb, okb := ToFloat(b)
		return oka && okb && fa == fb
	default:
		return a == b
	}
}

// ToFloat gives a number's value as float64.
func ToFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// TypeName names a value's JSON type as AWS's messages do.
func TypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case int64, float64:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// Convert decodes the JSON form of in into out (a pointer): a typed value to a generic one or
// back, as the value travels between a state machine's JSON and sinew's types.
func Convert(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
