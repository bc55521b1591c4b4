package kms

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	"github.com/google/uuid"
)

// A ciphertext blob is
//
//	format (1 byte, blobFormat) | key id (16 bytes, the UUID) | key version (4 bytes, big endian) |
//	nonce (12 bytes) | AES-256-GCM ciphertext and tag
//
// and its header (everything before the sealed part) is authenticated together with the
// encryption context, so a changed key id, version or context fails to open as
// InvalidCiphertextException, as AWS KMS does.
const (
	blobFormat  = 0x01
	headerLen   = 1 + 16 + 4 + 12
	gcmTagLen   = 16
	minBlobLen  = headerLen + gcmTagLen
	maxBlobLen  = 6144 // KMS's limit on CiphertextBlob
	nonceOffset = 1 + 16 + 4
)

var errBadBlob = errors.New("malformed ciphertext blob")

type blobHeader struct {
	keyID   string
	version uint32
}

func parseHeader(blob []byte) (blobHeader, error) {
	if len(blob) < minBlobLen || blob[0] != blobFormat {
		return blobHeader{}, errBadBlob
	}
	id, err := uuid.FromBytes(blob[1:17])
	if err != nil {
		return blobHeader{}, errBadBlob
	}
	return blobHeader{keyID: id.String(), version: binary.BigEndian.Uint32(blob[17:21])}, nil
}

func seal(k *key, kv keyVersion, plaintext []byte, ctx map[string]string) ([]byte, error) {
	id, err := uuid.Parse(k.ID)
	if err != nil {
		return nil, fmt.Errorf("key id: %w", err)
	}
	aead, err := newGCM(kv.Material)
	if err != nil {
		return nil, err
	}
	blob := make([]byte, headerLen, headerLen+len(plaintext)+gcmTagLen)
	blob[0] = blobFormat
	copy(blob[1:17], id[:])
	binary.BigEndian.PutUint32(blob[17:21], kv.Version)
	if _, err := rand.Read(blob[nonceOffset:headerLen]); err != nil {
		return nil, fmt.Errorf("nonce: %w", err)
	}
	return aead.Seal(blob, blob[nonceOffset:headerLen], plaintext, aad(blob[:headerLen], ctx)), nil
}

func open(kv keyVersion, blob []byte, ctx map[string]string) ([]byte, error) {
	aead, err := newGCM(kv.Material)
	if err != nil {
		return nil, err
	}
	pt, err := aead.Open(nil, blob[nonceOffset:headerLen], blob[headerLen:], aad(blob[:headerLen], ctx))
	if err != nil {
		return nil, errBadBlob
	}
	return pt, nil
}

func newGCM(material []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(material)
	if err != nil {
		return nil, fmt.Errorf("aes: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("gcm: %w", err)
	}
	return aead, nil
}

// aad is the header followed by the encryption context in a canonical form (pairs sorted by key,
// each string length-prefixed), so the order a client sends the pairs in does not matter and no two
// different contexts encode alike.
func aad(header []byte, ctx map[string]string) []byte {
	keys := make([]string, 0, len(ctx))
	for k := range ctx {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := append([]byte(nil), header...)
	for _, k := range keys {
		out = binary.BigEndian.AppendUint32(out, uint32(len(k)))
		out = append(out, k...)
		out = binary.BigEndian.AppendUint32(out, uint32(len(ctx[k])))
		out = append(out, ctx[k]...)
	}
	return out
}
