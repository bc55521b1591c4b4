package envelope_test

import (
	"testing"

	"sinew/internal/fault"
	"sinew/internal/secrets/secretstest"
)

// FuzzOpen: any blob fails with a typed fault or opens, never panics.
func FuzzOpen(f *testing.F) {
	e := secretstest.StartKMS(f).Envelope(f)
	good, err := e.Seal(bg(), toolCtx, []byte("seed"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte{3})
	f.Add([]byte{3, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01})
	f.Fuzz(func(t *testing.T, blob []byte) {
		pt, err := e.Open(bg(), toolCtx, blob)
		if err != nil && fault.KindOf(err) == "" {
			t.Fatalf("untyped error %v", err)
		}
		if err == nil && string(pt) != "seed" {
			t.Fatalf("a forged blob opened: %q", pt)
		}
	})
}
