package jwtlocal

import (
	"testing"
	"time"

	"sinew/internal/fault"
)

// FuzzVerify: arbitrary tokens never panic and are refused as Unauthorized (a fuzzer cannot forge
// an Ed25519 signature; a mutation of a valid token must fail too).
func FuzzVerify(f *testing.F) {
	s, err := Open(Options{Dir: f.TempDir()})
	if err != nil {
		f.Fatal(err)
	}
	good, err := s.Issue("dev-1", time.Hour)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good[:len(good)-2] + "AA")
	f.Fuzz(func(t *testing.T, token string) {
		if token == good {
			return
		}
		claims, err := s.Verify(token)
		if err == nil {
			// Base64url has equivalent encodings only for the signature's padding bits; anything
			// else accepted is a forgery.
			if claims["sub"] != "dev-1" {
				t.Fatalf("Verify accepted a forged token: %v", claims)
			}
			return
		}
		if !fault.Is(err, fault.Unauthorized) {
			t.Fatalf("kind %s for %q", fault.KindOf(err), token)
		}
	})
}
