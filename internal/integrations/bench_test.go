package integrations_test

import (
	"context"
	"testing"
)

// BenchmarkExecuteDummy measures the registry's own cost for a call that does no I/O: defaults,
// schema validation of setup and arguments, decoding into the Go types, and the output's JSON form.
func BenchmarkExecuteDummy(b *testing.B) {
	r := newRegistry(b, nil)
	args := map[string]any{"a": int64(1), "b": "two", "c": []any{true, nil}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Execute(ctx, "dummy", "", nil, args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExecuteTyped is the same for a typed method with a setup, defaults, enums and bounds.
func BenchmarkExecuteTyped(b *testing.B) {
	r := newRegistry(b, nil)
	setup := map[string]any{"api_key": "k"}
	args := map[string]any{"query": "q", "tags": []any{"x", "y"}, "items": []any{map[string]any{"range": "A1", "major_dimension": "ROWS"}}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Execute(ctx, "testprov", "", setup, args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkToolSchema measures building a model-facing function schema.
func BenchmarkToolSchema(b *testing.B) {
	r := newRegistry(b, nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.ToolSchema("testprov", "", "my_tool"); err != nil {
			b.Fatal(err)
		}
	}
}
