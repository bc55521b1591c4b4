package store

import (
	"context"
	"maps"
	"slices"
)

// AnswerInlineLimit is how much an HTTP answer carries inline: references to values
// up to this many bytes in all are read back and answered as the values; larger ones stay
// references that GET /payloads/{ref} returns.
const AnswerInlineLimit = 1 << 20

// InlineRefs answers v with each reference it holds (at any depth) replaced by its value, while
// their sizes together stay within budget bytes; references past the budget are left as they are.
// v itself is not changed.
func (s *Store) InlineRefs(ctx context.Context, dev string, v any, budget int64) (any, error) {
	left := budget
	var walk func(v any) (any, error)
	walk = func(v any) (any, error) {
		switch x := v.(type) {
		case map[string]any:
			if n, ok := RefSize(x); ok {
				if n <= 0 || n > left {
					return x, nil
				}
				left -= n
				return s.LoadValue(ctx, dev, x)
			}
			out := make(map[string]any, len(x))
			for _, k := range slices.Sorted(maps.Keys(x)) { // the budget goes in a stable order
				e := x[k]
				w, err := walk(e)
				if err != nil {
					return nil, err
				}
				out[k] = w
			}
			return out, nil
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				w, err := walk(e)
				if err != nil {
					return nil, err
				}
				out[i] = w
			}
			return out, nil
		}
		return v, nil
	}
	return walk(v)
}

// RefSize gives the size in bytes that a reference stands for, if v is one.
func RefSize(v any) (int64, bool) {
	if _, ok := RefOf(v); !ok {
		return 0, false
	}
	switch n := v.(map[string]any)["bytes"].(type) {
	case int64:
		return n, true
	case float64:
		return int64(n), true
	}
	return 0, true
}
