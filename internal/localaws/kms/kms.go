// Package kms is local mode's stand-in for AWS KMS.
//
// It speaks the JSON 1.1 protocol (`X-Amz-Target: TrentService.<Op>`) for the operations sinew's
// envelope encryption and its rotation command use — GenerateDataKey,
// GenerateDataKeyWithoutPlaintext, Encrypt, Decrypt, ReEncrypt, DescribeKey, CreateKey,
// CreateAlias, RotateKeyOnDemand — so the same SDK code runs against AWS and against this endpoint
// (AWS_ENDPOINT_URL_KMS).
//
// Keys live in a key file (.local/kms-keys.json, 0600) created with one random 256-bit key when
// missing. A key has versions: new encryptions use the newest, and a ciphertext names the version
// that made it, so values encrypted before a rotation still decrypt. The cryptography is real:
// AES-256-GCM with the encryption context as additional authenticated data, so a wrong context fails
// with InvalidCiphertextException as it does in AWS.
package kms

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"sinew/internal/localaws/awsjson"
)

// DefaultAlias is the alias of the key a new key file is created with; local mode points
// SINEW_SECRETS_KEY at it.
const DefaultAlias = "alias/sinew-secrets"

// maxBody bounds a request: the largest legal one (a 6144-byte ciphertext, base64, with contexts)
// is far below it.
const maxBody = 64 << 10

// Options configure a Service.
type Options struct {
	Dir     string   // the local directory holding the key file (required)
	Region  string   // default us-east-1
	Account string   // default 000000000000
	Aliases []string // aliases of the key created with a new key file; default [DefaultAlias]
	Logger  *slog.Logger
	Now     func() time.Time
}

// Service is the KMS endpoint. It is safe for concurrent use.
type Service struct {
	mu      sync.Mutex
	path    string
	keys    *keyFile
	stamp   os.FileInfo // the key file as last read or written, to notice another process's changes
	region  string
	account string
	log     *slog.Logger
	now     func() time.Time
	http    *awsjson.Service
}

// Open loads (or creates) the key file under opts.Dir.
func Open(opts Options) (*Service, error) {
	if opts.Dir == "" {
		return nil, errors.New("kms: Options.Dir is required")
	}
	s := &Service{
		path:    filepath.Join(opts.Dir, KeyFileName),
		region:  orDefault(opts.Region, "us-east-1"),
		account: orDefault(opts.Account, "000000000000"),
		log:     opts.Logger,
		now:     opts.Now,
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	aliases := opts.Aliases
	if aliases == nil {
		aliases = []string{DefaultAlias}
	}
	for _, a := range aliases {
		if err := checkAliasName(a); err != nil {
			return nil, fmt.Errorf("kms: alias %q: %s", a, err.Message)
		}
	}
	kf, err := loadKeyFile(s.path, aliases, s.now().UTC())
	if err != nil {
		return nil, fmt.Errorf("kms: %w", err)
	}
	s.keys = kf
	if s.stamp, err = os.Stat(s.path); err != nil {
		return nil, fmt.Errorf("kms: %w", err)
	}
	if s.stamp.Mode().Perm()&0o077 != 0 {
		// Key material readable by others is a leak waiting to happen: tighten it, and say so.
		s.log.Warn("the KMS key file was readable by other users; setting its permissions to 0600", "path", s.path)
		if err := os.Chmod(s.path, 0o600); err != nil {
			return nil, fmt.Errorf("kms: tighten key file permissions: %w", err)
		}
	}
	s.http = &awsjson.Service{
		Name:         "kms",
		TargetPrefix: "TrentService",
		ContentType:  "application/x-amz-json-1.1",
		MaxBody:      maxBody,
		TooLargeType: "ValidationException",
		InternalType: "KMSInternalException",
		Log:          s.log,
		Ops: map[string]awsjson.Op{
			"GenerateDataKey":                 s.generateDataKey(true),
			"GenerateDataKeyWithoutPlaintext": s.generateDataKey(false),
			"Encrypt":                         s.encrypt,
			"Decrypt":                         s.decrypt,
			"ReEncrypt":                       s.reEncrypt,
			"DescribeKey":                     s.describeKey,
			"CreateKey":                       s.createKey,
			"CreateAlias":                     s.createAlias,
			"RotateKeyOnDemand":               s.rotateKeyOnDemand,
		},
	}
	return s, nil
}

// ServeHTTP answers KMS API requests.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.http.ServeHTTP(w, r) }

// Path is the key file's path.
func (s *Service) Path() string { return s.path }

// Rotate adds a new version to the key named by keyRef (id, ARN, alias or alias ARN) and returns its
// number: what RotateKeyOnDemand does, for local-mode commands that hold the Service directly.
func (s *Service) Rotate(ctx context.Context, keyRef string) (uint32, error) {
	s.lockFresh()
	defer s.mu.Unlock()
	k, aerr := s.resolve(keyRef)
	if aerr != nil {
		return 0, aerr
	}
	if err := k.rotate(s.now().UTC()); err != nil {
		return 0, err
	}
	if err := s.save(); err != nil {
		k.Versions = k.Versions[:len(k.Versions)-1]
		return 0, err
	}
	s.log.InfoContext(ctx, "kms key rotated", "key_id", k.ID, "version", k.newest().Version)
	return k.newest().Version, nil
}

// lockFresh takes s.mu and re-reads the key file if another process (a rotation command run beside
// local mode) replaced it since this one last read or wrote it.
func (s *Service) lockFresh() {
	s.mu.Lock()
	fi, err := os.Stat(s.path)
	if err != nil || (os.SameFile(fi, s.stamp) && fi.ModTime().Equal(s.stamp.ModTime()) && fi.Size() == s.stamp.Size()) {
		return
	}
	kf, err := loadKeyFile(s.path, nil, s.now().UTC())
	if err != nil {
		s.log.Warn("the key file changed but cannot be read; keeping the keys in memory", "path", s.path, "error", err)
		return
	}
	s.keys, s.stamp = kf, fi
}

// save writes the key file. The caller holds s.mu.
func (s *Service) save() error {
	if err := saveKeyFile(s.path, s.keys); err != nil {
		return err
	}
	if fi, err := os.Stat(s.path); err == nil {
		s.stamp = fi
	}
	return nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func (s *Service) keyARN(id string) string {
	return "arn:aws:kms:" + s.region + ":" + s.account + ":key/" + id
}

func (s *Service) aliasARN(alias string) string {
	return "arn:aws:kms:" + s.region + ":" + s.account + ":" + alias
}

// Errors in KMS's codes and HTTP statuses.
func notFound(format string, args ...any) *awsjson.Error {
	return awsjson.Errorf(http.StatusBadRequest, "NotFoundException", format, args...)
}

func invalidCiphertext() *awsjson.Error {
	// AWS says nothing more, so a caller cannot probe which part (context, key, blob) was wrong.
	return awsjson.Errorf(http.StatusBadRequest, "InvalidCiphertextException", "the ciphertext is invalid, or the encryption context does not match the one it was encrypted with")
}

func required(member string) *awsjson.Error {
	return awsjson.Validation("1 validation error detected: Value null at '%s' failed to satisfy constraint: Member must not be null", member)
}

// resolve finds the key a KeyId names: a key id, a key ARN, an alias name or an alias ARN. The
// caller holds s.mu.
func (s *Service) resolve(ref string) (*key, *awsjson.Error) {
	if ref == "" {
		return nil, required("keyId")
	}
	if len(ref) > 2048 {
		return nil, awsjson.Validation("1 validation error detected: Value at 'keyId' failed to satisfy constraint: Member must have length less than or equal to 2048")
	}
	name := ref
	if strings.HasPrefix(ref, "arn:") {
		// arn:<partition>:kms:<region>:<account>:key/<id> or :alias/<name>
		parts := strings.SplitN(ref, ":", 6)
		if len(parts) != 6 || parts[2] != "kms" {
			return nil, notFound("Invalid arn %s", ref)
		}
		if parts[3] != s.region || parts[4] != s.account {
			// Another region's or account's key does not exist here.
			return nil, notFound("Invalid arn %s", ref)
		}
		name = parts[5]
		if id, ok := strings.CutPrefix(name, "key/"); ok {
			name = id
		} else if !strings.HasPrefix(name, "alias/") {
			return nil, notFound("Invalid arn %s", ref)
		}
	}
	if strings.HasPrefix(name, "alias/") {
		if k := s.keys.byAlias(name); k != nil {
			return k, nil
		}
		return nil, notFound("Alias %s is not found.", s.aliasARN(name))
	}
	if _, err := uuid.Parse(name); err != nil {
		return nil, notFound("Invalid keyId '%s'", ref)
	}
	if k := s.keys.byID(strings.ToLower(name)); k != nil {
		return k, nil
	}
	return nil, notFound("Key '%s' does not exist", s.keyARN(strings.ToLower(name)))
}

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

// KeyMetadata is the subset of KMS's KeyMetadata that a symmetric, AWS_KMS-origin key has.
type KeyMetadata struct {
	AWSAccountID          string   `json:"AWSAccountId"`
	KeyID                 string   `json:"KeyId"`
	Arn                   string   `json:"Arn"`
	CreationDate          float64  `json:"CreationDate"` // epoch seconds, as the JSON protocol sends timestamps
	Enabled               bool     `json:"Enabled"`
	Description           string   `json:"Description"`
	KeyUsage              string   `json:"KeyUsage"`
	KeyState              string   `json:"KeyState"`
	Origin                string   `json:"Origin"`
	KeyManager            string   `json:"KeyManager"`
	CustomerMasterKeySpec string   `json:"CustomerMasterKeySpec"`
	KeySpec               string   `json:"KeySpec"`
	EncryptionAlgorithms  []string `json:"EncryptionAlgorithms"`
	MultiRegion           bool     `json:"MultiRegion"`
}

func (s *Service) metadata(k *key) KeyMetadata {
	return KeyMetadata{
		AWSAccountID: s.account, KeyID: k.ID, Arn: s.keyARN(k.ID),
		CreationDate: float64(k.Created.UnixMilli()) / 1000, Enabled: true, Description: k.Description,
		KeyUsage: "ENCRYPT_DECRYPT", KeyState: "Enabled", Origin: "AWS_KMS", KeyManager: "CUSTOMER",
		CustomerMasterKeySpec: "SYMMETRIC_DEFAULT", KeySpec: "SYMMETRIC_DEFAULT",
		EncryptionAlgorithms: []string{"SYMMETRIC_DEFAULT"},
	}
}

type keyMetadataResponse struct {
	KeyMetadata KeyMetadata `json:"KeyMetadata"`
}

func (s *Service) describeKey(ctx context.Context, body []byte) (any, error) {
	var req struct {
		KeyID       string   `json:"KeyId"`
		GrantTokens []string `json:"GrantTokens"`
	}
	if err := awsjson.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	s.lockFresh()
	defer s.mu.Unlock()
	k, aerr := s.resolve(req.KeyID)
	if aerr != nil {
		return nil, aerr
	}
	return keyMetadataResponse{KeyMetadata: s.metadata(k)}, nil
}

func (s *Service) createKey(ctx context.Context, body []byte) (any, error) {
	var req struct {
		Description string `json:"Description"`
		KeyUsage    string `json:"KeyUsage"`
		KeySpec     string `json:"KeySpec"`
		CMKSpec     string `json:"CustomerMasterKeySpec"`
		Origin      string `json:"Origin"`
	}
	if err := awsjson.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	if len(req.Description) > 8192 {
		return nil, awsjson.Validation("1 validation error detected: Value at 'description' failed to satisfy constraint: Member must have length less than or equal to 8192")
	}
	// Local mode makes symmetric AWS_KMS keys only: refuse what it cannot honour rather than
	// pretend.
	for member, v := range map[string]string{"keyUsage": req.KeyUsage, "keySpec": req.KeySpec, "customerMasterKeySpec": req.CMKSpec, "origin": req.Origin} {
		switch v {
		case "", "ENCRYPT_DECRYPT", "SYMMETRIC_DEFAULT", "AWS_KMS":
		default:
			return nil, awsjson.Errorf(http.StatusBadRequest, "UnsupportedOperationException", "local mode's KMS makes only symmetric ENCRYPT_DECRYPT keys; %s %s is not supported", member, awsjson.Clip(v, 64))
		}
	}
	k, err := newKey(req.Description, nil, s.now().UTC())
	if err != nil {
		return nil, err
	}
	s.lockFresh()
	defer s.mu.Unlock()
	s.keys.Keys = append(s.keys.Keys, k)
	if err := s.save(); err != nil {
		s.keys.Keys = s.keys.Keys[:len(s.keys.Keys)-1]
		return nil, err
	}
	s.log.InfoContext(ctx, "kms key created", "key_id", k.ID)
	return keyMetadataResponse{KeyMetadata: s.metadata(k)}, nil
}

func checkAliasName(name string) *awsjson.Error {
	switch {
	case name == "":
		return required("aliasName")
	case len(name) > 256:
		return awsjson.Validation("1 validation error detected: Value at 'aliasName' failed to satisfy constraint: Member must have length less than or equal to 256")
	case !strings.HasPrefix(name, "alias/") || len(name) == len("alias/"):
		return awsjson.Validation("Alias must start with the prefix \"alias/\". Please see https://docs.aws.amazon.com/kms/latest/developerguide/kms-alias.html")
	case strings.HasPrefix(name, "alias/aws/"):
		return awsjson.Errorf(http.StatusBadRequest, "NotAuthorizedException", "Cannot create alias with prefix 'alias/aws/'")
	}
	for _, r := range name[len("alias/"):] {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/_-", r)) {
			return awsjson.Validation("1 validation error detected: Value '%s' at 'aliasName' failed to satisfy constraint: Member must satisfy regular expression pattern: ^[a-zA-Z0-9:/_-]+$", awsjson.Clip(name, 64))
		}
	}
	return nil
}

func (s *Service) createAlias(ctx context.Context, body []byte) (any, error) {
	var req struct {
		AliasName   string `json:"AliasName"`
		TargetKeyID string `json:"TargetKeyId"`
	}
	if err := awsjson.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	if aerr := checkAliasName(req.AliasName); aerr != nil {
		return nil, aerr
	}
	s.lockFresh()
	defer s.mu.Unlock()
	if s.keys.byAlias(req.AliasName) != nil {
		return nil, awsjson.Errorf(http.StatusBadRequest, "AlreadyExistsException", "An alias with the name %s already exists", s.aliasARN(req.AliasName))
	}
	if strings.HasPrefix(req.TargetKeyID, "alias/") || strings.Contains(req.TargetKeyID, ":alias/") {
		return nil, awsjson.Validation("Aliases must refer to keys. Not aliases")
	}
	k, aerr := s.resolve(req.TargetKeyID)
	if aerr != nil {
		return nil, aerr
	}
	k.Aliases = append(k.Aliases, req.AliasName)
	if err := s.save(); err != nil {
		k.Aliases = k.Aliases[:len(k.Aliases)-1]
		return nil, err
	}
	return struct{}{}, nil
}

func (s *Service) rotateKeyOnDemand(ctx context.Context, body []byte) (any, error) {
	var req struct {
		KeyID string `json:"KeyId"`
	}
	if err := awsjson.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	s.lockFresh()
	k, aerr := s.resolve(req.KeyID)
	s.mu.Unlock()
	if aerr != nil {
		return nil, aerr
	}
	if _, err := s.Rotate(ctx, k.ID); err != nil {
		return nil, err
	}
	return struct {
		KeyID string `json:"KeyId"`
	}{s.keyARN(k.ID)}, nil
}

// KeyOf names the key a request's KeyId (id, ARN, alias or alias ARN) or, with ref empty, a
// ciphertext blob's header selects, as KMS resolves it before authorizing: its ARN and its aliases.
// ok is false when neither names a key. The IAM recording of local mode (infra/local) asks it, so a
// request made through an alias is checked against the key's policy, as KMS checks it.
func (s *Service) KeyOf(ref string, blob []byte) (arn string, aliases []string, ok bool) {
	s.lockFresh()
	defer s.mu.Unlock()
	var k *key
	if ref != "" {
		k, _ = s.resolve(ref)
	} else if h, err := parseHeader(blob); err == nil {
		k = s.keys.byID(h.keyID)
	}
	if k == nil {
		return "", nil, false
	}
	return s.keyARN(k.ID), slices.Clone(k.Aliases), true
}
