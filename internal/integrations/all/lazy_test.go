package all

import (
	"context"
	"slices"
	"strings"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/netguard"
)

// TestLazy: each use registers only the provider it names and answers as the full registry does;
// an unknown name registers them all, so its error lists every provider.
func TestLazy(t *testing.T) {
	ctx := context.Background()
	l := NewLazy(netguard.New())
	full, err := New(netguard.New())
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"a": float64(1)}
	got, err := l.Execute(ctx, "dummy", "echo", nil, args)
	if err != nil {
		t.Fatal(err)
	}
	want, err := full.Execute(ctx, "dummy", "echo", nil, args)
	if err != nil {
		t.Fatal(err)
	}
	if !jsonv.Equal(got, want) {
		t.Errorf("lazy echo %v, full %v", got, want)
	}
	fn, err := l.ToolSchema("wikipedia", "", "")
	if err != nil || fn.Name == "" {
		t.Errorf("ToolSchema(wikipedia) = %+v, %v", fn, err)
	}
	if b := l.SetupBinding("brave"); !slices.Equal(b.Secrets, full.SetupBinding("brave").Secrets) {
		t.Errorf("SetupBinding(brave) = %+v, want the full registry's", b)
	}
	if names := l.reg.Names(); !slices.Equal(names, []string{"brave", "dummy", "wikipedia"}) {
		t.Errorf("registered %v, want only the three used", names)
	}
	_, err = l.Execute(ctx, "nosuch", "", nil, nil)
	if fault.KindOf(err) != fault.InvalidInput || !strings.Contains(err.Error(), strings.Join(full.Names(), ", ")) {
		t.Errorf("unknown provider: %v", err)
	}
}

// TestLazyCatalogue: the catalogue routes' view of a lazy registry is the full registry's.
func TestLazyCatalogue(t *testing.T) {
	full, err := New(netguard.New())
	if err != nil {
		t.Fatal(err)
	}
	l := NewLazy(netguard.New())
	info, err := l.ProviderInfo("weather")
	if err != nil || info.Provider != "weather" {
		t.Errorf("ProviderInfo(weather) = %+v, %v", info, err)
	}
	if _, err := l.ProviderInfo("nosuch"); fault.KindOf(err) != fault.NotFound {
		t.Errorf("ProviderInfo(nosuch) = %v", err)
	}
	got, want := l.Catalogue(), full.Catalogue()
	if len(got) != len(want) {
		t.Fatalf("catalogue of %d providers, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].Provider != want[i].Provider {
			t.Errorf("catalogue[%d] = %s, want %s", i, got[i].Provider, want[i].Provider)
		}
	}
}
