package dummy_test

import (
	"context"
	"reflect"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/integrations"
	"sinew/internal/integrations/providers/dummy"
)

// TestEcho: dummy returns the merged arguments unchanged, whatever the setup, and opens no
// connection (its registry has a guard that refuses everything and no base URL).
func TestEcho(t *testing.T) {
	r := integrations.New(nil)
	r.MustRegister(dummy.Provider)
	tests := []struct {
		name   string
		method string
		setup  map[string]any
		args   map[string]any
		want   any
		kind   fault.Kind
	}{
		{name: "nested values", setup: map[string]any{"api_key": "x"}, args: map[string]any{"a": int64(1), "b": []any{"c", 2.5, nil, true}, "d": map[string]any{"e": "f"}},
			want: map[string]any{"a": int64(1), "b": []any{"c", 2.5, nil, true}, "d": map[string]any{"e": "f"}}},
		{name: "named default method", method: "echo", args: map[string]any{"q": "x"}, want: map[string]any{"q": "x"}},
		{name: "no arguments", want: map[string]any{}},
		// Julep's dummy answers every method with its arguments.
		{name: "any other method", method: "send", args: map[string]any{"to": "a@b"}, want: map[string]any{"to": "a@b"}},
		{name: "a made-up method", method: "whatever_1", args: map[string]any{}, want: map[string]any{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Execute(context.Background(), "dummy", tc.method, tc.setup, tc.args)
			if tc.kind != "" {
				if fault.KindOf(err) != tc.kind {
					t.Fatalf("err %v, want %s", err, tc.kind)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %#v, want %#v", got, tc.want)
			}
		})
	}
	for _, method := range []string{"", "echo", "send"} {
		f, err := r.ToolSchema("dummy", method, "my_echo")
		if err != nil || f.Name != "my_echo" || f.Parameters["type"] != "object" {
			t.Fatalf("tool schema of method %q: %+v %v", method, f, err)
		}
	}
}
