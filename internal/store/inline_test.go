package store_test

import (
	"context"
	"strings"
	"testing"

	"sinew/internal/store"
	"sinew/internal/testenv/ddblocal"
)

func TestInlineRefs(t *testing.T) {
	db := ddblocal.Client(t)
	s := store.New(db, ddblocal.NewTable(t, db), nil)
	ctx := context.Background()
	stored := func(text string) any {
		v, err := s.StoreValue(ctx, "dev-1", map[string]any{"text": text}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := store.RefOf(v); !ok {
			t.Fatalf("a %d-byte value was not stored by reference", len(text))
		}
		return v
	}
	a, b := strings.Repeat("a", 40<<10), strings.Repeat("b", 50<<10)
	refA, refB := stored(a), stored(b)
	in := map[string]any{"first": refA, "list": []any{refB, "plain"}, "n": int64(1)}
	tests := []struct {
		name         string
		budget       int64
		wantA, wantB bool // inlined
	}{
		{"both fit", 1 << 20, true, true},
		{"only the first (in key order) fits", 45 << 10, true, false},
		{"none fits", 1 << 10, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := s.InlineRefs(ctx, "dev-1", in, tt.budget)
			if err != nil {
				t.Fatal(err)
			}
			m := out.(map[string]any)
			gotA := m["first"].(map[string]any)["text"] == a
			gotB := m["list"].([]any)[0].(map[string]any)["text"] == b
			if gotA != tt.wantA || gotB != tt.wantB || m["list"].([]any)[1] != "plain" || m["n"] != int64(1) {
				t.Errorf("inlined a=%v b=%v, want %v %v", gotA, gotB, tt.wantA, tt.wantB)
			}
			if _, ok := store.RefOf(in["first"]); !ok {
				t.Error("the input was changed")
			}
		})
	}
	// Another developer's reference is not found, not read.
	if _, err := s.InlineRefs(ctx, "dev-2", refA, 1<<20); err == nil {
		t.Error("another developer's reference was read")
	}
}

func TestRefSize(t *testing.T) {
	for _, tt := range []struct {
		v     any
		n     int64
		isRef bool
	}{
		{map[string]any{store.RefKey: "r", "bytes": int64(40)}, 40, true},
		{map[string]any{store.RefKey: "r", "bytes": float64(41)}, 41, true}, // as JSON decodes it
		{map[string]any{store.RefKey: "r", "other": 1}, 0, false},
		{map[string]any{"text": "x"}, 0, false},
		{"plain", 0, false},
	} {
		if n, ok := store.RefSize(tt.v); n != tt.n || ok != tt.isRef {
			t.Errorf("RefSize(%v) = %d %v, want %d %v", tt.v, n, ok, tt.n, tt.isRef)
		}
	}
}
