package kms

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"

	"sinew/internal/localaws/awsjson"
)

// The operations on data: GenerateDataKey (with and without the plaintext), Encrypt, Decrypt and
// ReEncrypt, with the checks of their members AWS makes.

// symmetricOnly checks an EncryptionAlgorithm member: these keys are SYMMETRIC_DEFAULT keys.
func symmetricOnly(member, alg string) *awsjson.Error {
	switch alg {
	case "", "SYMMETRIC_DEFAULT":
		return nil
	case "RSAES_OAEP_SHA_1", "RSAES_OAEP_SHA_256", "SM2PKE":
		return awsjson.Errorf(http.StatusBadRequest, "InvalidKeyUsageException", "%s is not supported by a SYMMETRIC_DEFAULT key", alg)
	}
	return awsjson.Validation("1 validation error detected: Value '%s' at '%s' failed to satisfy constraint: Member must satisfy enum value set: [SYMMETRIC_DEFAULT, RSAES_OAEP_SHA_1, RSAES_OAEP_SHA_256, SM2PKE]", awsjson.Clip(alg, 64), member)
}

func dryRun() *awsjson.Error {
	return awsjson.Errorf(http.StatusPreconditionFailed, "DryRunOperationException", "The request would have succeeded, but the DryRun option is set.")
}

type generateDataKeyRequest struct {
	KeyID             string            `json:"KeyId"`
	KeySpec           string            `json:"KeySpec"`
	NumberOfBytes     *int              `json:"NumberOfBytes"`
	EncryptionContext map[string]string `json:"EncryptionContext"`
	GrantTokens       []string          `json:"GrantTokens"`
	DryRun            bool              `json:"DryRun"`
}

type generateDataKeyResponse struct {
	CiphertextBlob []byte `json:"CiphertextBlob"`
	Plaintext      []byte `json:"Plaintext,omitempty"`
	KeyID          string `json:"KeyId"`
}

func (s *Service) generateDataKey(withPlaintext bool) awsjson.Op {
	return func(ctx context.Context, body []byte) (any, error) {
		var req generateDataKeyRequest
		if err := awsjson.Unmarshal(body, &req); err != nil {
			return nil, err
		}
		n := 0
		switch {
		case req.KeySpec != "" && req.NumberOfBytes != nil, req.KeySpec == "" && req.NumberOfBytes == nil:
			return nil, awsjson.Validation("Please specify either number of bytes or key spec.")
		case req.KeySpec == "AES_256":
			n = 32
		case req.KeySpec == "AES_128":
			n = 16
		case req.KeySpec != "":
			return nil, awsjson.Validation("1 validation error detected: Value '%s' at 'keySpec' failed to satisfy constraint: Member must satisfy enum value set: [AES_256, AES_128]", awsjson.Clip(req.KeySpec, 64))
		case *req.NumberOfBytes < 1:
			return nil, awsjson.Validation("1 validation error detected: Value '%d' at 'numberOfBytes' failed to satisfy constraint: Member must have value greater than or equal to 1", *req.NumberOfBytes)
		case *req.NumberOfBytes > 1024:
			return nil, awsjson.Validation("1 validation error detected: Value '%d' at 'numberOfBytes' failed to satisfy constraint: Member must have value less than or equal to 1024", *req.NumberOfBytes)
		default:
			n = *req.NumberOfBytes
		}
		s.lockFresh()
		defer s.mu.Unlock()
		k, aerr := s.resolve(req.KeyID)
		if aerr != nil {
			return nil, aerr
		}
		if req.DryRun {
			return nil, dryRun()
		}
		dataKey := make([]byte, n)
		if _, err := rand.Read(dataKey); err != nil {
			return nil, fmt.Errorf("generate data key: %w", err)
		}
		blob, err := seal(k, k.newest(), dataKey, req.EncryptionContext)
		if err != nil {
			return nil, err
		}
		out := generateDataKeyResponse{CiphertextBlob: blob, KeyID: s.keyARN(k.ID)}
		if withPlaintext {
			out.Plaintext = dataKey
		}
		return out, nil
	}
}

type encryptRequest struct {
	KeyID               string            `json:"KeyId"`
	Plaintext           []byte            `json:"Plaintext"`
	EncryptionContext   map[string]string `json:"EncryptionContext"`
	EncryptionAlgorithm string            `json:"EncryptionAlgorithm"`
	GrantTokens         []string          `json:"GrantTokens"`
	DryRun              bool              `json:"DryRun"`
}

type encryptResponse struct {
	CiphertextBlob      []byte `json:"CiphertextBlob"`
	KeyID               string `json:"KeyId"`
	EncryptionAlgorithm string `json:"EncryptionAlgorithm"`
}

func (s *Service) encrypt(ctx context.Context, body []byte) (any, error) {
	var req encryptRequest
	if err := awsjson.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	switch {
	case req.Plaintext == nil:
		return nil, required("plaintext")
	case len(req.Plaintext) == 0:
		return nil, awsjson.Validation("1 validation error detected: Value at 'plaintext' failed to satisfy constraint: Member must have length greater than or equal to 1")
	case len(req.Plaintext) > 4096:
		return nil, awsjson.Validation("1 validation error detected: Value at 'plaintext' failed to satisfy constraint: Member must have length less than or equal to 4096")
	}
	if aerr := symmetricOnly("encryptionAlgorithm", req.EncryptionAlgorithm); aerr != nil {
		return nil, aerr
	}
	s.lockFresh()
	defer s.mu.Unlock()
	k, aerr := s.resolve(req.KeyID)
	if aerr != nil {
		return nil, aerr
	}
	if req.DryRun {
		return nil, dryRun()
	}
	blob, err := seal(k, k.newest(), req.Plaintext, req.EncryptionContext)
	if err != nil {
		return nil, err
	}
	return encryptResponse{CiphertextBlob: blob, KeyID: s.keyARN(k.ID), EncryptionAlgorithm: "SYMMETRIC_DEFAULT"}, nil
}

type decryptRequest struct {
	CiphertextBlob      []byte            `json:"CiphertextBlob"`
	KeyID               string            `json:"KeyId"`
	EncryptionContext   map[string]string `json:"EncryptionContext"`
	EncryptionAlgorithm string            `json:"EncryptionAlgorithm"`
	GrantTokens         []string          `json:"GrantTokens"`
	DryRun              bool              `json:"DryRun"`
}

type decryptResponse struct {
	KeyID               string `json:"KeyId"`
	Plaintext           []byte `json:"Plaintext"`
	EncryptionAlgorithm string `json:"EncryptionAlgorithm"`
}

func checkBlob(member string, blob []byte) *awsjson.Error {
	switch {
	case blob == nil:
		return required(member)
	case len(blob) == 0:
		return awsjson.Validation("1 validation error detected: Value at '%s' failed to satisfy constraint: Member must have length greater than or equal to 1", member)
	case len(blob) > maxBlobLen:
		return awsjson.Validation("1 validation error detected: Value at '%s' failed to satisfy constraint: Member must have length less than or equal to %d", member, maxBlobLen)
	}
	return nil
}

// openBlob decrypts blob under ctx; keyRef, when set, must name the key that made it. The caller
// holds s.mu.
func (s *Service) openBlob(blob []byte, keyRef string, ctx map[string]string) (*key, []byte, *awsjson.Error) {
	h, err := parseHeader(blob)
	if err != nil {
		return nil, nil, invalidCiphertext()
	}
	if keyRef != "" {
		want, aerr := s.resolve(keyRef)
		if aerr != nil {
			return nil, nil, aerr
		}
		if want.ID != h.keyID {
			return nil, nil, awsjson.Errorf(http.StatusBadRequest, "IncorrectKeyException", "The key ID in the request does not identify a CMK that can perform this operation.")
		}
	}
	k := s.keys.byID(h.keyID)
	if k == nil {
		return nil, nil, invalidCiphertext()
	}
	kv, ok := k.version(h.version)
	if !ok {
		return nil, nil, invalidCiphertext()
	}
	pt, err := open(kv, blob, ctx)
	if err != nil {
		return nil, nil, invalidCiphertext()
	}
	return k, pt, nil
}

func (s *Service) decrypt(ctx context.Context, body []byte) (any, error) {
	var req decryptRequest
	if err := awsjson.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	if aerr := checkBlob("ciphertextBlob", req.CiphertextBlob); aerr != nil {
		return nil, aerr
	}
	if aerr := symmetricOnly("encryptionAlgorithm", req.EncryptionAlgorithm); aerr != nil {
		return nil, aerr
	}
	s.lockFresh()
	defer s.mu.Unlock()
	k, pt, aerr := s.openBlob(req.CiphertextBlob, req.KeyID, req.EncryptionContext)
	if aerr != nil {
		return nil, aerr
	}
	if req.DryRun {
		return nil, dryRun()
	}
	return decryptResponse{KeyID: s.keyARN(k.ID), Plaintext: pt, EncryptionAlgorithm: "SYMMETRIC_DEFAULT"}, nil
}

type reEncryptRequest struct {
	CiphertextBlob                 []byte            `json:"CiphertextBlob"`
	SourceEncryptionContext        map[string]string `json:"SourceEncryptionContext"`
	SourceKeyID                    string            `json:"SourceKeyId"`
	DestinationKeyID               string            `json:"DestinationKeyId"`
	DestinationEncryptionContext   map[string]string `json:"DestinationEncryptionContext"`
	SourceEncryptionAlgorithm      string            `json:"SourceEncryptionAlgorithm"`
	DestinationEncryptionAlgorithm string            `json:"DestinationEncryptionAlgorithm"`
	GrantTokens                    []string          `json:"GrantTokens"`
	DryRun                         bool              `json:"DryRun"`
}

type reEncryptResponse struct {
	CiphertextBlob                 []byte `json:"CiphertextBlob"`
	SourceKeyID                    string `json:"SourceKeyId"`
	KeyID                          string `json:"KeyId"`
	SourceEncryptionAlgorithm      string `json:"SourceEncryptionAlgorithm"`
	DestinationEncryptionAlgorithm string `json:"DestinationEncryptionAlgorithm"`
}

// reEncrypt opens a ciphertext and seals its plaintext under the destination key's newest version:
// the rotation command's way to move stored values to a new key version without the plaintext
// leaving KMS.
func (s *Service) reEncrypt(ctx context.Context, body []byte) (any, error) {
	var req reEncryptRequest
	if err := awsjson.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	if aerr := checkBlob("ciphertextBlob", req.CiphertextBlob); aerr != nil {
		return nil, aerr
	}
	if req.DestinationKeyID == "" {
		return nil, required("destinationKeyId")
	}
	if aerr := symmetricOnly("sourceEncryptionAlgorithm", req.SourceEncryptionAlgorithm); aerr != nil {
		return nil, aerr
	}
	if aerr := symmetricOnly("destinationEncryptionAlgorithm", req.DestinationEncryptionAlgorithm); aerr != nil {
		return nil, aerr
	}
	s.lockFresh()
	defer s.mu.Unlock()
	src, pt, aerr := s.openBlob(req.CiphertextBlob, req.SourceKeyID, req.SourceEncryptionContext)
	if aerr != nil {
		return nil, aerr
	}
	dst, aerr := s.resolve(req.DestinationKeyID)
	if aerr != nil {
		return nil, aerr
	}
	if req.DryRun {
		return nil, dryRun()
	}
	blob, err := seal(dst, dst.newest(), pt, req.DestinationEncryptionContext)
	if err != nil {
		return nil, err
	}
	return reEncryptResponse{
		CiphertextBlob: blob, SourceKeyID: s.keyARN(src.ID), KeyID: s.keyARN(dst.ID),
		SourceEncryptionAlgorithm: "SYMMETRIC_DEFAULT", DestinationEncryptionAlgorithm: "SYMMETRIC_DEFAULT",
	}, nil
}
