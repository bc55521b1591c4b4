package jsonata

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"sinew/internal/jsonout"
)

// orderedKeys gives a Go map's keys in a fixed order, as JavaScript would hold them had they been
// inserted sorted: array indexes first, in ascending order, then the rest in byte order.
func orderedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	indexes := 0
	for k := range m {
		ks = append(ks, k)
		if _, ok := arrayIndex(k); ok {
			indexes++
		}
	}
	slices.Sort(ks)
	if indexes > 0 {
		slices.SortStableFunc(ks, func(a, b string) int {
			ia, oka := arrayIndex(a)
			ib, okb := arrayIndex(b)
			switch {
			case oka && okb:
				return cmp.Compare(ia, ib)
			case oka:
				return -1
			case okb:
				return 1
			}
			return 0
		})
	}
	return ks
}

// ParseJSON decodes JSON into the evaluator's form, keeping the order of object keys.
func ParseJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("unexpected data after the JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch x := t.(type) {
	case json.Delim:
		switch x {
		case '{':
			o := NewObject(4)
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				o.Set(kt.(string), v)
			}
			_, err := dec.Token()
			return o, err
		case '[':
			a := &Array{Items: []any{}}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				a.Items = append(a.Items, v)
			}
			_, err := dec.Token()
			return a, err
		}
	case json.Number:
		f, err := x.Float64()
		if err != nil && !math.IsInf(f, 0) {
			return nil, err
		}
		return f, nil
	case nil:
		return Null, nil
	}
	return t, nil
}

// stringifyExact writes v as JSON with numbers as JavaScript prints them (no 15-digit rounding).
func stringifyExact(v any) (string, error) {
	var b strings.Builder
	if err := writeExact(&b, v); err != nil {
		return "", err
	}
	return b.String(), nil
}

func writeExact(b *strings.Builder, v any) error {
	switch x := v.(type) {
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return &Error{Code: "D1001", Value: x}
		}
		b.WriteString(numberString(x))
	case *Array:
		b.WriteByte('[')
		for i, it := range x.Items {
			if i > 0 {
				b.WriteByte(',')
			}
			if it == nil {
				b.WriteString("null")
				continue
			}
			if err := writeExact(b, it); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case *Object:
		b.WriteByte('{')
		n := 0
		for _, k := range x.Keys() {
			if x.vals[k] == nil {
				continue
			}
			if n > 0 {
				b.WriteByte(',')
			}
			n++
			jsonout.WriteString(b, k, jsonout.JavaScript)
			b.WriteByte(':')
			if err := writeExact(b, x.vals[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		return writeJSON(b, v, false, 0)
	}
	return nil
}
