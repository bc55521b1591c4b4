package seal

import (
	"bytes"
	"context"
	"testing"
)

func TestSealOpen(t *testing.T) {
	ctx := context.Background()
	key := bytes.Repeat([]byte{7}, 32)
	s, err := NewAESGCM(key)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewAESGCM(bytes.Repeat([]byte{8}, 32))
	encCtx := map[string]string{"developer": "d1", "owner": "agent/1", "tool": "t"}
	sealed, err := s.Seal(ctx, encCtx, []byte("hunter2"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("hunter2")) {
		t.Fatal("sealed value holds the plaintext")
	}
	again, _ := s.Seal(ctx, encCtx, []byte("hunter2"))
	if bytes.Equal(sealed, again) {
		t.Error("two seals of one value are equal: the nonce is not random")
	}
	pt, err := s.Open(ctx, encCtx, sealed)
	if err != nil || string(pt) != "hunter2" {
		t.Fatalf("Open = %q, %v", pt, err)
	}
	flipped := bytes.Clone(sealed)
	flipped[len(flipped)-1] ^= 1
	tests := []struct {
		name   string
		s      *AESGCM
		encCtx map[string]string
		sealed []byte
	}{
		{"other developer", s, map[string]string{"developer": "d2", "owner": "agent/1", "tool": "t"}, sealed},
		{"other tool", s, map[string]string{"developer": "d1", "owner": "agent/1", "tool": "u"}, sealed},
		{"extra key", s, map[string]string{"developer": "d1", "owner": "agent/1", "tool": "t", "x": ""}, sealed},
		{"shifted boundary", s, map[string]string{"developer": "d1o", "wner": "agent/1", "tool": "t"}, sealed},
		{"other key", other, encCtx, sealed},
		{"tampered", s, encCtx, flipped},
		{"truncated", s, encCtx, sealed[:10]},
		{"empty", s, encCtx, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.s.Open(ctx, tc.encCtx, tc.sealed); err == nil {
				t.Error("Open succeeded")
			}
		})
	}
}

func TestKeyLength(t *testing.T) {
	for _, n := range []int{0, 16, 31, 33} {
		if _, err := NewAESGCM(make([]byte, n)); err == nil {
			t.Errorf("a %d-byte key was accepted", n)
		}
	}
}
