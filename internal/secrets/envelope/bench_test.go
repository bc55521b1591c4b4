package envelope_test

import (
	"testing"

	"sinew/internal/secrets/secretstest"
)

// Seal and Open include one KMS request each, to local mode's KMS over loopback HTTP.
func BenchmarkSeal(b *testing.B) {
	e := secretstest.StartKMS(b).Envelope(b)
	pt := []byte(`{"password":"a-typical-smtp-password","user":"alice@example.com"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Seal(bg(), toolCtx, pt); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpen(b *testing.B) {
	e := secretstest.StartKMS(b).Envelope(b)
	sealed, err := e.Seal(bg(), toolCtx, []byte(`{"password":"a-typical-smtp-password"}`))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Open(bg(), toolCtx, sealed); err != nil {
			b.Fatal(err)
		}
	}
}
