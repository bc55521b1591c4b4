package javafmt

import (
	"math"
	"testing"
)

// Expected strings are Java 17's Double.toString output for the same doubles.
func TestDouble(t *testing.T) {
	tests := []struct {
		f    float64
		want string
	}{
		{1, "1.0"}, {1.1, "1.1"}, {100, "100.0"}, {1e20, "1.0E20"}, {1e-5, "1.0E-5"}, {1234567, "1234567.0"},
		{12345678.9, "1.23456789E7"}, {0.001, "0.001"}, {0.0001, "1.0E-4"}, {-1.5e-7, "-1.5E-7"},
		{9007199254740993, "9.007199254740992E15"}, {0, "0.0"}, {math.Copysign(0, -1), "-0.0"}, {-2.5, "-2.5"},
		{1e7, "1.0E7"}, {9999999, "9999999.0"}, {0.5, "0.5"},
	}
	for _, tc := range tests {
		if got := Double(tc.f); got != tc.want {
			t.Errorf("Double(%v) = %s, want %s", tc.f, got, tc.want)
		}
	}
}

func TestJSONAndString(t *testing.T) {
	v := map[string]any{"b": []any{int64(1), 1.0, "x\"\n\u0001é", nil, true}, "a": map[string]any{}}
	if got, want := JSON(v), `{"a":{},"b":[1,1.0,"x\"\n\u0001é",null,true]}`; got != want {
		t.Errorf("JSON = %s, want %s", got, want)
	}
	if got, want := String(v), `{a={}, b=[1, 1.0, x"`+"\n\u0001"+`é, null, true]}`; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}
