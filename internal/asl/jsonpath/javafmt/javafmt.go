// Package javafmt renders JSON values the way Step Functions (a Java service) prints them.
//
// Doubles come out as Java's Double.toString (1.0, 1.1, 1.0E20), compact JSON as Jackson writes
// it, and objects in messages and States.Format as Java's Map.toString ({Arg1=1, Arg2=[]}). Values are those of
// sinew/internal/jsonv. Object keys come out sorted: Go maps keep no order, and sorted is stable.
package javafmt

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"sinew/internal/jsonout"
)

// Double is Java's Double.toString: the shortest digits that round-trip, plain between 1e-3 and
// 1e7 ("100.0", "0.001"), computerized scientific notation outside ("1.0E7", "1.5E-4").
func Double(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	sign := ""
	if f < 0 {
		sign = "-"
		f = -f
	}
	// strconv gives the shortest round-trip digits: d.ddde±xx.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	if f >= 1e-3 && f < 1e7 {
		var s string
		switch {
		case exp >= 0:
			if len(digits) <= exp+1 {
				s = digits + strings.Repeat("0", exp+1-len(digits)) + ".0"
			} else {
				s = digits[:exp+1] + "." + digits[exp+1:]
			}
		default:
			s = "0." + strings.Repeat("0", -exp-1) + digits
		}
		return sign + s
	}
	frac := digits[1:]
	if frac == "" {
		frac = "0"
	}
	return sign + digits[:1] + "." + frac + "E" + strconv.Itoa(exp)
}

// Number renders an int64 or float64 as Java prints it; other values give "" and false.
func Number(v any) (string, bool) {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		return Double(x), true
	case int:
		return strconv.Itoa(x), true
	}
	return "", false
}

// JSON is compact JSON as Jackson writes it: no spaces, Java number forms, non-ASCII kept as is.
func JSON(v any) string {
	var b strings.Builder
	writeJSON(&b, v)
	return b.String()
}

func writeJSON(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case string:
		jsonout.WriteString(b, x, jsonout.Jackson)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for i, k := range SortedKeys(x) {
			if i > 0 {
				b.WriteByte(',')
			}
			jsonout.WriteString(b, k, jsonout.Jackson)
			b.WriteByte(':')
			writeJSON(b, x[k])
		}
		b.WriteByte('}')
	default:
		if s, ok := Number(v); ok {
			b.WriteString(s)
			return
		}
		b.WriteString("null")
	}
}

// String is Java's toString of the value as Step Functions holds it: strings bare, null as "null",
// lists as "[a, b]" and objects as "{k=v, k2=v2}" (recorded for States.Format in
// v2/intrinsic_functions/test_generic test_format_2).
func String(v any) string {
	var b strings.Builder
	writeString(&b, v)
	return b.String()
}

func writeString(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		b.WriteString(x)
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeString(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for i, k := range SortedKeys(x) {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(k)
			b.WriteByte('=')
			writeString(b, x[k])
		}
		b.WriteByte('}')
	default:
		if s, ok := Number(v); ok {
			b.WriteString(s)
		}
	}
}

// SortedKeys gives m's keys in order.
func SortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
