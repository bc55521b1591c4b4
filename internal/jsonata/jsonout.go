package jsonata

import (
	"math"
	"strings"

	"sinew/internal/jsonout"
)

// toJSString is $string without prettify: a string as it is, a function as "", anything else as
// JSON with numbers rounded to 15 significant digits.
func toJSString(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case *Lambda, *Native, *partialNative:
		return "", nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return "", &Error{Code: "D3001", Value: x}
		}
	}
	return stringify(v, false)
}

// stringify writes v as JavaScript's JSON.stringify does, with $string's number rounding.
func stringify(v any, pretty bool) (string, error) {
	var b strings.Builder
	if a, ok := v.(*Array); ok && a.outerWrapper && len(a.Items) > 0 {
		v = a.Items[0]
	}
	if err := writeJSON(&b, v, pretty, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

func writeJSON(b *strings.Builder, v any, pretty bool, indent int) error {
	switch x := v.(type) {
	case nil, nullT:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case float64:
		if math.IsInf(x, 0) {
			return &Error{Code: "D1001", Value: x}
		}
		if math.IsNaN(x) {
			b.WriteString("null")
			return nil
		}
		b.WriteString(numberString(toPrecision15(x)))
	case string:
		jsonout.WriteString(b, x, jsonout.JavaScript)
	case *Lambda, *Native, *partialNative:
		b.WriteString(`""`)
	case *Array:
		return writeJSONArray(b, x, pretty, indent)
	case *Object:
		return writeJSONObject(b, x, pretty, indent)
	case tuple:
		b.WriteString("{}")
	default:
		b.WriteString("null")
	}
	return nil
}

func newline(b *strings.Builder, pretty bool, indent int) {
	if pretty {
		b.WriteByte('\n')
		b.WriteString(strings.Repeat("  ", indent))
	}
}

func writeJSONArray(b *strings.Builder, a *Array, pretty bool, indent int) error {
	if len(a.Items) == 0 {
		b.WriteString("[]")
		return nil
	}
	b.WriteByte('[')
	for i, it := range a.Items {
		if err := stringTooLong(b.Len()); err != nil {
			return err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		newline(b, pretty, indent+1)
		if err := writeJSON(b, it, pretty, indent+1); err != nil {
			return err
		}
	}
	newline(b, pretty, indent)
	b.WriteByte(']')
	return nil
}

func writeJSONObject(b *strings.Builder, o *Object, pretty bool, indent int) error {
	n := 0
	b.WriteByte('{')
	for _, k := range o.Keys() {
		v := o.vals[k]
		if v == nil {
			continue // JSON.stringify leaves out undefined members
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		newline(b, pretty, indent+1)
		jsonout.WriteString(b, k, jsonout.JavaScript)
		b.WriteByte(':')
		if pretty {
			b.WriteByte(' ')
		}
		if err := writeJSON(b, v, pretty, indent+1); err != nil {
			return err
		}
	}
	if n > 0 {
		newline(b, pretty, indent)
	}
	b.WriteByte('}')
	return nil
}
