package pyexpr

import (
	"fmt"
	"math"
	"sort"

	"go.starlark.net/starlark"
)

// Julep's statistics members in Eval: mean, median, median_low, median_high, mode, stdev.

func floats(b *starlark.Builtin, a starlark.Tuple, kw []starlark.Tuple) ([]float64, []starlark.Value, error) {
	var xs starlark.Iterable
	if err := starlark.UnpackPositionalArgs(b.Name(), a, kw, 1, &xs); err != nil {
		return nil, nil, err
	}
	var out []float64
	var vals []starlark.Value
	it := xs.Iterate()
	defer it.Done()
	var e starlark.Value
	for it.Next(&e) {
		f, ok := starlark.AsFloat(e)
		if !ok {
			return nil, nil, fmt.Errorf("%s: %s is not a number", b.Name(), e.Type())
		}
		out = append(out, f)
		vals = append(vals, e)
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("StatisticsError: %s requires at least one data point", b.Name())
	}
	return out, vals, nil
}

func statsMembers() starlark.StringDict {
	num := func(f float64) starlark.Value { return starlark.Float(f) }
	return starlark.StringDict{
		"mean": fn("mean", func(_ *starlark.Thread, b *starlark.Builtin, a starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
			xs, vals, err := floats(b, a, kw)
			if err != nil {
				return nil, err
			}
			s := 0.0
			allInt := true
			for i, x := range xs {
				s += x
				_, isInt := vals[i].(starlark.Int)
				allInt = allInt && isInt
			}
			m := s / float64(len(xs))
			if allInt && m == math.Trunc(m) {
				return starlark.NumberToInt(starlark.Float(m))
			}
			return num(m), nil
		}),
		"median":      fn("median", median(0)),
		"median_low":  fn("median_low", median(-1)),
		"median_high": fn("median_high", median(1)),
		"stdev": fn("stdev", func(_ *starlark.Thread, b *starlark.Builtin, a starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
			xs, _, err := floats(b, a, kw)
			if err != nil || len(xs) < 2 {
				return nil, fmt.Errorf("StatisticsError: stdev requires at least two data points")
			}
			m := 0.0
			for _, x := range xs {
				m += x
			}
			m /= float64(len(xs))
			ss := 0.0
			for _, x := range xs {
				ss += (x - m) * (x - m)
			}
			return num(math.Sqrt(ss / float64(len(xs)-1))), nil
		}),
		"mode": fn("mode", func(_ *starlark.Thread, b *starlark.Builtin, a starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
			var xs starlark.Iterable
			if err := starlark.UnpackPositionalArgs(b.Name(), a, kw, 1, &xs); err != nil {
				return nil, err
			}
			counts := map[string]int{}
			var best starlark.Value
			bestN := 0
			it := xs.Iterate()
			defer it.Done()
			var e starlark.Value
			for it.Next(&e) {
				k := pyRepr(e)
				counts[k]++
				if counts[k] > bestN {
					best, bestN = e, counts[k]
				}
			}
			if best == nil {
				return nil, fmt.Errorf("StatisticsError: no mode for empty data")
			}
			return best, nil
		}),
	}
}

func median(which int) builtinFn {
	return func(_ *starlark.Thread, b *starlark.Builtin, a starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
		xs, vals, err := floats(b, a, kw)
		if err != nil {
			return nil, err
		}
		idx := make([]int, len(xs))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(i, j int) bool { return xs[idx[i]] < xs[idx[j]] })
		n := len(xs)
		if n%2 == 1 {
			return vals[idx[n/2]], nil
		}
		switch which {
		case -1:
			return vals[idx[n/2-1]], nil
		case 1:
			return vals[idx[n/2]], nil
		}
		return starlark.Float((xs[idx[n/2-1]] + xs[idx[n/2]]) / 2), nil
	}
}
