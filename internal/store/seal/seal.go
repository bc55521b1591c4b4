// Package seal is an AES-256-GCM Sealer for the store's setup secrets, with the key given as bytes.
// The deployed Sealer will be a KMS envelope (a data key per value); this one is for tests and
// local mode, and has the same contract: the encryption context is authenticated (as GCM's
// additional data), so a value opened under another context fails.
package seal

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"

	"sinew/internal/fault"
)

// version prefixes every sealed value, so the format can change without guessing.
const version byte = 1

// AESGCM seals with one 32-byte key.
type AESGCM struct{ aead cipher.AEAD }

// NewAESGCM makes a sealer from a 32-byte key.
func NewAESGCM(key []byte) (*AESGCM, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("seal: key must be 32 bytes, not %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	return &AESGCM{aead: aead}, nil
}

// Seal encrypts plaintext bound to encCtx: version, random nonce, ciphertext and tag.
func (a *AESGCM) Seal(_ context.Context, encCtx map[string]string, plaintext []byte) ([]byte, error) {
	nonce := make([]byte, a.aead.NonceSize(), 1+a.aead.NonceSize()+len(plaintext)+a.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fault.Wrap(fault.Internal, err, "seal a secret")
	}
	out := append([]byte{version}, nonce...)
	return a.aead.Seal(out, nonce, plaintext, aad(encCtx)), nil
}

// Open decrypts a value sealed by Seal under the same encCtx.
func (a *AESGCM) Open(_ context.Context, encCtx map[string]string, sealed []byte) ([]byte, error) {
	ns := a.aead.NonceSize()
	if len(sealed) < 1+ns+a.aead.Overhead() || sealed[0] != version {
		return nil, fault.New(fault.Internal, "open a secret: not a sealed value of this format")
	}
	pt, err := a.aead.Open(nil, sealed[1:1+ns], sealed[1+ns:], aad(encCtx))
	if err != nil {
		// Never say more: the message must not help an attacker, and carries no secret.
		return nil, fault.Wrap(fault.Internal, errors.New("authentication failed"), "open a secret: wrong key or context")
	}
	return pt, nil
}

// aad encodes encCtx canonically: keys sorted, each key and value length-prefixed, so no two
// contexts share an encoding.
func aad(encCtx map[string]string) []byte {
	var b []byte
	for _, k := range slices.Sorted(maps.Keys(encCtx)) {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		b = binary.AppendUvarint(b, uint64(len(encCtx[k])))
		b = append(b, encCtx[k]...)
	}
	return b
}
