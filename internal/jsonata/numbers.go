package jsonata

import (
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
)

func numFn(name string, f func(float64) (any, error)) {
	define(name, "<n-:n>", 1, func(_ *evaluator, _ *call, a []any) (any, error) {
		x, ok := a[0].(float64)
		if !ok {
			return nil, nil
		}
		return f(x)
	})
}

func defineNumbers() {
	define("number", "<(nsb)-:n>", 1, fnNumber)
	numFn("floor", func(x float64) (any, error) { return math.Floor(x), nil })
	numFn("ceil", func(x float64) (any, error) { return math.Ceil(x), nil })
	numFn("abs", func(x float64) (any, error) { return math.Abs(x), nil })
	numFn("sqrt", func(x float64) (any, error) {
		if x < 0 {
			return nil, &Error{Code: "D3060", Index: 1, Value: x}
		}
		return math.Sqrt(x), nil
	})
	define("round", "<n-n?:n>", 2, func(_ *evaluator, _ *call, a []any) (any, error) {
		x, ok := a[0].(float64)
		if !ok {
			return nil, nil
		}
		p, _ := arg(a, 1).(float64)
		return roundHalfEven(x, int(p)), nil
	})
	define("power", "<n-n:n>", 2, func(_ *evaluator, _ *call, a []any) (any, error) {
		x, ok := a[0].(float64)
		if !ok {
			return nil, nil
		}
		r := math.Pow(x, a[1].(float64))
		if math.IsInf(r, 0) || math.IsNaN(r) {
			return nil, &Error{Code: "D3061", Index: 1, Value: x, Exp: a[1]}
		}
		return r, nil
	})
	define("random", "<:n>", 0, func(_ *evaluator, _ *call, _ []any) (any, error) { return rand.Float64(), nil })
	define("formatNumber", "<n-so?:s>", 3, fnFormatNumber)
	define("formatBase", "<n-n?:s>", 2, func(_ *evaluator, _ *call, a []any) (any, error) {
		x, ok := a[0].(float64)
		if !ok {
			return nil, nil
		}
		x = roundHalfEven(x, 0)
		radix := 10.0
		if r, ok := arg(a, 1).(float64); ok {
			radix = roundHalfEven(r, 0)
		}
		if radix < 2 || radix > 36 {
			return nil, &Error{Code: "D3100", Value: radix}
		}
		if math.Abs(x) >= 1<<63 {
			return strconv.FormatFloat(x, 'f', 0, 64), nil
		}
		return strconv.FormatInt(int64(x), int(radix)), nil
	})
}

var (
	decimalRE = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?([Ee][-+]?[0-9]+)?$`)
	radixRE   = regexp.MustCompile(`^(0[xX][0-9A-Fa-f]+|0[oO][0-7]+|0[bB][0-1]+)$`)
)

func fnNumber(_ *evaluator, _ *call, a []any) (any, error) {
	switch x := a[0].(type) {
	case nil:
		return nil, nil
	case float64:
		return x, nil
	case bool:
		if x {
			return 1.0, nil
		}
		return 0.0, nil
	case string:
		if decimalRE.MatchString(x) {
			if f, err := strconv.ParseFloat(x, 64); err == nil && !math.IsInf(f, 0) {
				return f, nil
			}
		}
		if radixRE.MatchString(x) {
			base := map[byte]int{'x': 16, 'X': 16, 'o': 8, 'O': 8, 'b': 2, 'B': 2}[x[1]]
			if v, err := strconv.ParseUint(x[2:], base, 64); err == nil {
				return float64(v), nil
			}
		}
	}
	return nil, &Error{Code: "D3030", Value: a[0], Index: 1}
}

// roundHalfEven rounds x to p decimal places, a half to the even neighbour (banker's rounding),
// shifting the decimal point in the number's decimal form as JSONata does.
func roundHalfEven(x float64, p int) float64 {
	if p != 0 {
		x = shiftDecimal(x, p)
	}
	r := math.Floor(x) // JavaScript's Math.round: a half goes up
	if x-r >= 0.5 {
		r++
	}
	if math.Abs(r-x) == 0.5 && math.Mod(math.Abs(r), 2) == 1 {
		r--
	}
	if p != 0 {
		r = shiftDecimal(r, -p)
	}
	if r == 0 {
		return 0
	}
	return r
}

// shiftDecimal multiplies x by 10^p through its decimal representation (no binary error).
func shiftDecimal(x float64, p int) float64 {
	s := numberString(x)
	mant, exp := s, 0
	if i := strings.IndexByte(s, 'e'); i >= 0 {
		mant = s[:i]
		exp, _ = strconv.Atoi(s[i+1:])
	}
	f, err := strconv.ParseFloat(mant+"e"+strconv.Itoa(exp+p), 64)
	if err != nil {
		return x * math.Pow10(p)
	}
	return f
}
