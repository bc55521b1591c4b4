package pyexpr

import (
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"go.starlark.net/starlark"
)

type bigInt = big.Int

// fmtFn is one f-string field: __fmt(value, conversion, spec).
func fmtFn(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	v := args[0]
	conv, _ := starlark.AsString(args[1])
	spec, _ := starlark.AsString(args[2])
	if conv == "r" || conv == "a" {
		v = starlark.String(pyRepr(v))
	} else if conv == "s" {
		v = starlark.String(pyStr(v))
	}
	s, err := formatValue(v, spec)
	if err != nil {
		return nil, err
	}
	return starlark.String(s), nil
}

// The format-spec mini-language: https://docs.python.org/3/library/string.html#formatspec
var specFull = regexp.MustCompile(`^(?:(.)?([<>=^]))?([-+ ])?(#)?(0)?(\d+)?([,_])?(?:\.(\d+))?([bcdeEfFgGnosxX%])?$`)

// formatValue is Python's format(v, spec) for str, int, float and bool.
func formatValue(v starlark.Value, spec string) (string, error) {
	if spec == "" {
		return pyStr(v), nil
	}
	m := specFull.FindStringSubmatch(spec)
	if m == nil {
		return "", fmt.Errorf("invalid format specifier %q", spec)
	}
	fill, align, sign, zero, width, group, prec, typ := m[1], m[2], m[3], m[5], m[6], m[7], m[8], m[9]
	var body string
	numeric := false
	switch x := v.(type) {
	case starlark.String:
		if typ != "" && typ != "s" {
			return "", fmt.Errorf("unknown format code '%s' for object of type 'str'", typ)
		}
		body = string(x)
		if prec != "" {
			n, _ := strconv.Atoi(prec)
			if r := []rune(body); len(r) > n {
				body = string(r[:n])
			}
		}
	case starlark.Int, starlark.Float, starlark.Bool:
		numeric = true
		s, err := formatNumber(x, typ, prec, group)
		if err != nil {
			return "", err
		}
		if !strings.HasPrefix(s, "-") {
			switch sign {
			case "+":
				s = "+" + s
			case " ":
				s = " " + s
			}
		}
		body = s
	default:
		if typ != "" && typ != "s" {
			return "", fmt.Errorf("unsupported format string passed to %s.__format__", v.Type())
		}
		body = pyStr(v)
	}
	return pad(body, fill, align, zero, width, numeric), nil
}

func formatNumber(x starlark.Value, typ, prec, group string) (string, error) {
	f, _ := starlark.AsFloat(x)
	i, isInt := x.(starlark.Int)
	if b, ok := x.(starlark.Bool); ok {
		isInt, i = true, starlark.MakeInt(map[bool]int{true: 1, false: 0}[bool(b)])
		if typ == "" {
			return map[bool]string{true: "True", false: "False"}[bool(b)], nil
		}
	}
	p := 6
	if prec != "" {
		p, _ = strconv.Atoi(prec)
	}
	var s string
	switch typ {
	case "", "d", "n":
		if isInt {
			s = i.String()
		} else if typ == "" {
			if prec != "" {
				s = strconv.FormatFloat(f, 'g', p, 64)
			} else {
				s = pyFloat(f)
			}
		} else {
			return "", fmt.Errorf("unknown format code 'd' for object of type 'float'")
		}
	case "f", "F":
		s = strconv.FormatFloat(f, 'f', p, 64)
	case "e", "E":
		s = strconv.FormatFloat(f, byte(typ[0]), p, 64)
	case "g", "G":
		s = strconv.FormatFloat(f, byte(typ[0]), p, 64)
	case "%":
		s = strconv.FormatFloat(f*100, 'f', p, 64) + "%"
	case "x", "X", "o", "b", "c":
		if !isInt {
			return "", fmt.Errorf("unknown format code '%s' for object of type 'float'", typ)
		}
		base := map[string]int{"x": 16, "X": 16, "o": 8, "b": 2}[typ]
		if typ == "c" {
			n, _ := i.Int64()
			return string(rune(n)), nil
		}
		s = i.BigInt().Text(base)
		if typ == "X" {
			s = strings.ToUpper(s)
		}
	}
	if group != "" {
		s = groupDigits(s, group)
	}
	return s, nil
}

func groupDigits(s, sep string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, rest := s, ""
	if k := strings.IndexAny(s, ".e%"); k >= 0 {
		intPart, rest = s[:k], s[k:]
	}
	var b strings.Builder
	for k, r := range intPart {
		if k > 0 && (len(intPart)-k)%3 == 0 {
			b.WriteString(sep)
		}
		b.WriteRune(r)
	}
	out := b.String() + rest
	if neg {
		out = "-" + out
	}
	return out
}

func pad(body, fill, align, zero, width string, numeric bool) string {
	w, _ := strconv.Atoi(width)
	n := len([]rune(body))
	if n >= w {
		return body
	}
	if fill == "" {
		fill = " "
		if zero != "" && align == "" {
			fill, align = "0", "="
		}
	}
	if align == "" {
		align = "<"
		if numeric {
			align = ">"
		}
	}
	gap := w - n
	switch align {
	case "<":
		return body + strings.Repeat(fill, gap)
	case ">":
		return strings.Repeat(fill, gap) + body
	case "^":
		return strings.Repeat(fill, gap/2) + body + strings.Repeat(fill, gap-gap/2)
	}
	// "=": padding after the sign.
	if strings.HasPrefix(body, "-") || strings.HasPrefix(body, "+") || strings.HasPrefix(body, " ") {
		return body[:1] + strings.Repeat(fill, gap) + body[1:]
	}
	return strings.Repeat(fill, gap) + body
}
