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
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
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
