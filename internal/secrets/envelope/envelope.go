// Package envelope is the KMS envelope Sealer the store seals setup secrets with (package secrets
// tells where they are opened).
//
// It takes a data key from KMS per value, AES-256-GCM over the value, both bound to an encryption
// context naming the developer and the value's place. It is apart from package secrets, which every
// function links for its redactor, because only the functions that seal or open setup (api, system,
// integration, apicall) hold the key and link the KMS client.
package envelope

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	kmstypes "github.com/aws/aws-sdk-go-v2/service/kms/types"

	"sinew/internal/fault"
)

// KMS is the part of the KMS client the envelope uses: *kms.Client against AWS, or against local
// mode's endpoint through AWS_ENDPOINT_URL_KMS (one code path). Executors need GenerateDataKey and
// Decrypt; the API function only GenerateDataKey; the rotation command ReEncrypt.
type KMS interface {
	GenerateDataKey(context.Context, *kms.GenerateDataKeyInput, ...func(*kms.Options)) (*kms.GenerateDataKeyOutput, error)
	Decrypt(context.Context, *kms.DecryptInput, ...func(*kms.Options)) (*kms.DecryptOutput, error)
	ReEncrypt(context.Context, *kms.ReEncryptInput, ...func(*kms.Options)) (*kms.ReEncryptOutput, error)
}

var _ KMS = (*kms.Client)(nil)

// Format is the first byte of every envelope blob. The store's AES-GCM sealer (package seal) writes
// 1; this envelope writes 3, so a blob of one is never mistaken for the other.
const Format byte = 3

// A blob is
//
//	Format | uvarint n | encrypted data key (n bytes, KMS's CiphertextBlob) | nonce (12) | AES-256-GCM ciphertext and tag
//
// The GCM additional data is Format followed by the encryption context in a canonical form, so the
// value opens only under the context it was sealed with; the encrypted data key is bound to the
// same context by KMS. It is not part of the additional data, so rotation can replace it (KMS
// ReEncrypt) without touching the ciphertext.
const (
	nonceLen   = 12
	tagLen     = 16
	maxKeyBlob = 6144 // KMS's limit on a CiphertextBlob
)

// Envelope is a store.Sealer over one KMS key: a fresh AES-256 data key per sealed value. It is
// safe for concurrent use.
type Envelope struct {
	kms   KMS
	keyID string
}

// NewEnvelope is an envelope over the key keyID (an id, ARN, alias or alias ARN: SINEW_SECRETS_KEY).
func NewEnvelope(client KMS, keyID string) (*Envelope, error) {
	if client == nil {
		return nil, errors.New("secrets: a KMS client is required")
	}
	if keyID == "" {
		return nil, fault.New(fault.Internal, "SINEW_SECRETS_KEY is not set: setup secrets cannot be sealed or opened")
	}
	return &Envelope{kms: client, keyID: keyID}, nil
}

// KeyID is the key the envelope seals under.
func (e *Envelope) KeyID() string { return e.keyID }

// Seal encrypts plaintext bound to encCtx under a new data key.
func (e *Envelope) Seal(ctx context.Context, encCtx map[string]string, plaintext []byte) ([]byte, error) {
	if len(encCtx) == 0 {
		// An empty context would let a value be replayed anywhere: refuse it as a wiring fault.
		return nil, fault.New(fault.Internal, "seal a secret: the encryption context is empty")
	}
	dk, err := e.kms.GenerateDataKey(ctx, &kms.GenerateDataKeyInput{
		KeyId: &e.keyID, KeySpec: kmstypes.DataKeySpecAes256, EncryptionContext: encCtx,
	})
	if err != nil {
		return nil, kmsErr(err, "seal a secret: make a data key")
	}
	defer clear(dk.Plaintext)
	if len(dk.CiphertextBlob) == 0 || len(dk.CiphertextBlob) > maxKeyBlob {
		return nil, fault.New(fault.Internal, "seal a secret: KMS answered an encrypted data key of %d bytes", len(dk.CiphertextBlob))
	}
	aead, err := newGCM(dk.Plaintext)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, 1+binary.MaxVarintLen64+len(dk.CiphertextBlob)+nonceLen+len(plaintext)+tagLen)
	out = append(out, Format)
	out = binary.AppendUvarint(out, uint64(len(dk.CiphertextBlob)))
	out = append(out, dk.CiphertextBlob...)
	nonce := make([]byte, nonceLen)
	if _, err := rand.Read(nonce); err != nil {
		return nil, fault.Wrap(fault.Internal, err, "seal a secret: make a nonce")
	}
	out = append(out, nonce...)
	return aead.Seal(out, nonce, plaintext, aad(encCtx)), nil
}

// Open decrypts a blob made by Seal under the same encCtx. Any failure is a fault.Internal (or
// Transient when KMS is busy) whose message says what failed and never carries key material or
// plaintext.
func (e *Envelope) Open(ctx context.Context, encCtx map[string]string, sealed []byte) ([]byte, error) {
	b, err := parse(sealed)
	if err != nil {
		return nil, err
	}
	dk, err := e.kms.Decrypt(ctx, &kms.DecryptInput{
		CiphertextBlob: b.keyBlob, EncryptionContext: encCtx, KeyId: &e.keyID,
	})
	if err != nil {
		return nil, kmsErr(err, "open a secret: decrypt its data key")
	}
	defer clear(dk.Plaintext)
	aead, err := newGCM(dk.Plaintext)
	if err != nil {
		return nil, err
	}
	pt, err := aead.Open(nil, b.nonce, b.ciphertext, aad(encCtx))
	if err != nil {
		return nil, fault.New(fault.Internal, "open a secret: wrong key or encryption context")
	}
	return pt, nil
}

// Reseal moves a blob's data key to the newest version of the envelope's key (or, when the blob
// was made under another key, to the envelope's key) with KMS ReEncrypt: the data key never leaves
// KMS in the clear and the ciphertext is kept. It is what rotation runs on every stored value.
func (e *Envelope) Reseal(ctx context.Context, encCtx map[string]string, sealed []byte) ([]byte, error) {
	b, err := parse(sealed)
	if err != nil {
		return nil, err
	}
	out, err := e.kms.ReEncrypt(ctx, &kms.ReEncryptInput{
		CiphertextBlob:               b.keyBlob,
		SourceEncryptionContext:      encCtx,
		DestinationKeyId:             &e.keyID,
		DestinationEncryptionContext: encCtx,
	})
	if err != nil {
		return nil, kmsErr(err, "reseal a secret: re-encrypt its data key")
	}
	if len(out.CiphertextBlob) == 0 || len(out.CiphertextBlob) > maxKeyBlob {
		return nil, fault.New(fault.Internal, "reseal a secret: KMS answered an encrypted data key of %d bytes", len(out.CiphertextBlob))
	}
	res := make([]byte, 0, len(sealed)+len(out.CiphertextBlob)-len(b.keyBlob)+binary.MaxVarintLen64)
	res = append(res, Format)
	res = binary.AppendUvarint(res, uint64(len(out.CiphertextBlob)))
	res = append(res, out.CiphertextBlob...)
	res = append(res, b.nonce...)
	return append(res, b.ciphertext...), nil
}

// KeyBlob is the encrypted data key inside a blob made by Seal: tests and tools read the key
// version from it where the KMS's ciphertext format is known (local mode's).
func KeyBlob(sealed []byte) ([]byte, error) {
	b, err := parse(sealed)
	if err != nil {
		return nil, err
	}
	return b.keyBlob, nil
}

type blob struct{ keyBlob, nonce, ciphertext []byte }

var errFormat = fault.New(fault.Internal, "open a secret: not a sealed value of the KMS envelope format")

func parse(sealed []byte) (blob, error) {
	if len(sealed) < 2 || sealed[0] != Format {
		return blob{}, errFormat
	}
	n, w := binary.Uvarint(sealed[1:])
	if w <= 0 || n == 0 || n > maxKeyBlob {
		return blob{}, errFormat
	}
	rest := sealed[1+w:]
	if uint64(len(rest)) < n+nonceLen+tagLen {
		return blob{}, errFormat
	}
	return blob{keyBlob: rest[:n], nonce: rest[n : n+nonceLen], ciphertext: rest[n+nonceLen:]}, nil
}

func newGCM(key []byte) (cipher.AEAD, error) {
	if len(key) != 32 {
		return nil, fault.New(fault.Internal, "the data key is %d bytes, not an AES-256 key", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "the data key is not an AES-256 key")
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "make AES-GCM")
	}
	return aead, nil
}

// aad is Format followed by encCtx canonically: keys sorted, each key and value length-prefixed, so
// no two contexts share an encoding.
func aad(encCtx map[string]string) []byte {
	b := []byte{Format}
	for _, k := range slices.Sorted(maps.Keys(encCtx)) {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		b = binary.AppendUvarint(b, uint64(len(encCtx[k])))
		b = append(b, encCtx[k]...)
	}
	return b
}

// kmsErr types a KMS failure (fault.FromAWS): throttling, KMS's own faults and no answer are
// Transient (the caller's Retry handles them); anything else (access denied, a wrong context, a
// disabled key) is Internal, a fault of sinew's deployment, not of the caller.
func kmsErr(err error, what string) error {
	switch fault.AWSCode(err) {
	case "InvalidCiphertextException", "IncorrectKeyException":
		return fault.Wrap(fault.Internal, err, "%s: the value does not open under this key and context", what)
	}
	return fault.FromAWS(err, what)
}

// NewEnvelopeFromConfig is an envelope over keyID with a KMS client made from cfg, which finds
// local mode's KMS through AWS_ENDPOINT_URL_KMS as the SDKs do.
func NewEnvelopeFromConfig(cfg aws.Config, keyID string) (*Envelope, error) {
	return NewEnvelope(kms.NewFromConfig(cfg), keyID)
}
