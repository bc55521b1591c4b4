package asl

import (
	"math"
	"testing"

	"sinew/internal/jsonv"
)

// TestEncodeMatchesJSONV checks the fast encoder against encoding/json's output.
func TestEncodeMatchesJSONV(t *testing.T) {
	values := []any{
		nil, true, false, "", "plain", "quote\" back\\ slash", "ctl\n\r\t\b\f\x01\x1f", "<html>&", "caf\u00e9 \u2028\u2029 \U0001F600", "bad\xffutf8",
		int64(0), int64(-42), int64(math.MaxInt64), 0.0, 1.5, -0.000001, 1e-7, 1.234e-9, 1e20, 1e21, 123456789.125, math.SmallestNonzeroFloat64, math.MaxFloat64,
		[]any{}, []any{int64(1), "a", nil, []any{map[string]any{}}},
		map[string]any{"b": int64(1), "a": []any{true}, "": "empty", "é": 2.5, "z": map[string]any{"y": nil}},
	}
	for _, v := range values {
		want := jsonv.EncodeString(v)
		if got := encodeJSON(v); got != want {
			t.Errorf("encode %#v = %s, want %s", v, got, want)
		}
		if n, ok := jsonSize(v, 1<<20); !ok || n != len(want) {
			t.Errorf("size of %#v = %d %v, want %d", v, n, ok, len(want))
		}
		if len(want) > 1 && !jsonOver(v, len(want)-1) || jsonOver(v, len(want)) {
			t.Errorf("jsonOver of %#v is wrong at its length %d", v, len(want))
		}
	}
}
