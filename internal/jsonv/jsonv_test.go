package jsonv

import (
	"math"
	"reflect"
	"testing"
)

func TestDecodeKeepsIntegersApart(t *testing.T) {
	tests := []struct {
		in   string
		want any
	}{
		{`3`, int64(3)},
		{`-0`, int64(0)},
		{`3.0`, float64(3)},
		{`1e2`, float64(100)},
		{`9223372036854775807`, int64(math.MaxInt64)},
		{`9223372036854775808`, float64(9223372036854775808)},
		{`"x"`, "x"},
		{`null`, nil},
		{`true`, true},
	}
	for _, tc := range tests {
		got, err := DecodeString(tc.in)
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if got != tc.want {
			t.Errorf("%s: got %#v, want %#v", tc.in, got, tc.want)
		}
	}
	v, err := DecodeString(`{"a":[1,2.5,{"b":7}]}`)
	if err != nil {
		t.Fatal(err)
	}
	arr := v.(map[string]any)["a"].([]any)
	if arr[0] != int64(1) || arr[1] != 2.5 || arr[2].(map[string]any)["b"] != int64(7) {
		t.Fatalf("nested numbers not normalised: %#v", v)
	}
	for _, bad := range []string{``, `{`, `1 2`, `{"a":1}x`} {
		if _, err := DecodeString(bad); err == nil {
			t.Errorf("%q decoded without error", bad)
		}
	}
}

func TestEncodeEqualClone(t *testing.T) {
	v := map[string]any{"h": "<a&b>", "n": int64(1), "f": 1.5, "l": []any{nil, true}}
	if got := EncodeString(v); got != `{"f":1.5,"h":"<a&b>","l":[null,true],"n":1}` {
		t.Fatalf("Encode = %s", got)
	}
	c := Clone(v).(map[string]any)
	c["l"].([]any)[0] = "changed"
	if v["l"].([]any)[0] != nil {
		t.Fatal("Clone shares nested arrays")
	}
	if !Equal(int64(2), 2.0) || Equal(int64(2), "2") || Equal(map[string]any{"a": 1.0}, map[string]any{"b": 1.0}) || !Equal(v, Clone(v)) {
		t.Fatal("Equal is wrong")
	}
	for want, val := range map[string]any{"null": nil, "number": int64(1), "object": map[string]any{}, "array": []any{}, "string": "", "boolean": false} {
		if TypeName(val) != want {
			t.Errorf("TypeName(%#v) = %s", val, TypeName(val))
		}
	}
}

func TestKindOf(t *testing.T) {
	var s *string
	for _, tt := range []struct {
		v    any
		want string
	}{
		{"x", "a string"}, {s, "a string"}, {true, "true or false"}, {int64(1), "an integer"}, {uint8(1), "an integer"},
		{1.5, "a number"}, {[]int{}, "an array"}, {[2]int{}, "an array"}, {map[string]any{}, "an object"},
		{struct{}{}, "an object"}, {make(chan int), "a chan int"},
	} {
		if got := KindOf(reflect.TypeOf(tt.v)); got != tt.want {
			t.Errorf("KindOf(%T) = %q, want %q", tt.v, got, tt.want)
		}
	}
}
