// Package jwtlocal signs and verifies local mode's JWTs: the
// stand-in for the Cognito user pool that API Gateway's JWT authorizer trusts when deployed. The
// signing key is an Ed25519 key in a PEM file under the local directory (0600, created when
// missing); `go run ./infra/local token DEVELOPER_ID` prints Issue's token, and local mode's HTTP
// front door verifies each request with Verify and hands the claims to the handlers as API Gateway
// does (StringClaims).
package jwtlocal

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"sinew/internal/fault"
)

// KeyFileName is the signing key's file under the local directory.
const KeyFileName = "jwt-signing-key.pem"

// Defaults of Options.
const (
	DefaultIssuer   = "sinew-local"
	DefaultAudience = "sinew"
	DefaultClaim    = "sub" // SINEW_JWT_CLAIM's default
	// MaxTTL bounds a token's life: local tokens are for development, not for keeps.
	MaxTTL = 366 * 24 * time.Hour
	// maxTokenLen refuses absurd inputs before any parsing.
	maxTokenLen = 8 << 10
	leeway      = 30 * time.Second
)

// Options configure a Signer.
type Options struct {
	Dir      string // the local directory holding the key file (required)
	Issuer   string // default DefaultIssuer
	Audience string // default DefaultAudience
	Claim    string // the claim that carries the developer id (SINEW_JWT_CLAIM); default "sub"
	Now      func() time.Time
}

// Signer issues and verifies tokens with the local signing key.
type Signer struct {
	priv     ed25519.PrivateKey
	pub      ed25519.PublicKey
	kid      string
	issuer   string
	audience string
	claim    string
	now      func() time.Time
	verified verifiedCache
}

// Open loads the signing key under opts.Dir, creating it when missing.
func Open(opts Options) (*Signer, error) {
	if opts.Dir == "" {
		return nil, errors.New("jwtlocal: Options.Dir is required")
	}
	s := &Signer{issuer: opts.Issuer, audience: opts.Audience, claim: opts.Claim, now: opts.Now}
	if s.issuer == "" {
		s.issuer = DefaultIssuer
	}
	if s.audience == "" {
		s.audience = DefaultAudience
	}
	if s.claim == "" {
		s.claim = DefaultClaim
	}
	if s.now == nil {
		s.now = time.Now
	}
	priv, err := loadOrCreateKey(filepath.Join(opts.Dir, KeyFileName))
	if err != nil {
		return nil, fmt.Errorf("jwtlocal: %w", err)
	}
	s.priv = priv
	s.pub = priv.Public().(ed25519.PublicKey)
	sum := sha256.Sum256(s.pub)
	s.kid = hex.EncodeToString(sum[:8])
	return s, nil
}

func loadOrCreateKey(path string) (ed25519.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return createKey(path)
	}
	if err != nil {
		return nil, fmt.Errorf("read signing key: %w", err)
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("signing key %s is not a PEM private key", path)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", path, err)
	}
	priv, ok := key.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("signing key %s is a %T, want an Ed25519 key", path, key)
	}
	return priv, nil
}

// createKey writes a new key atomically with 0600 permissions: no other user can read it, and a
// crash never leaves half a key behind.
func createKey(path string) (ed25519.PrivateKey, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate signing key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("encode signing key: %w", err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create key directory: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".jwt-key-*.pem")
	if err != nil {
		return nil, fmt.Errorf("create signing key file: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	werr := tmp.Chmod(0o600)
	if werr == nil {
		werr = pem.Encode(tmp, &pem.Block{Type: "PRIVATE KEY", Bytes: der})
	}
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return nil, fmt.Errorf("write signing key: %w", werr)
	}
	// Link, not rename: if another process created the key meanwhile, keep theirs so tokens it
	// issued stay valid.
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return loadOrCreateKey(path)
		}
		return nil, fmt.Errorf("install signing key: %w", err)
	}
	return priv, nil
}

// Issue signs a token for developerID that lives for ttl.
func (s *Signer) Issue(developerID string, ttl time.Duration) (string, error) {
	if err := checkDeveloperID(developerID); err != nil {
		return "", err
	}
	if ttl <= 0 || ttl > MaxTTL {
		return "", fault.Invalid("ttl", "ttl must be more than 0 and at most %s, got %s", MaxTTL, ttl)
	}
	now := s.now().UTC().Truncate(time.Second)
	claims := jwt.MapClaims{
		"iss": s.issuer,
		"aud": s.audience,
		"sub": developerID,
		"iat": now.Unix(),
		"nbf": now.Unix(),
		"exp": now.Add(ttl).Unix(),
		"jti": uuid.NewString(),
	}
	claims[s.claim] = developerID
	tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims)
	tok.Header["kid"] = s.kid
	signed, err := tok.SignedString(s.priv)
	if err != nil {
		return "", fmt.Errorf("jwtlocal: sign token: %w", err)
	}
	return signed, nil
}

func checkDeveloperID(id string) error {
	switch {
	case id == "":
		return fault.Invalid("developer_id", "developer_id is required")
	case len(id) > 256:
		return fault.Invalid("developer_id", "developer_id must be at most 256 bytes")
	case strings.ContainsFunc(id, func(r rune) bool { return unicode.IsControl(r) || r == unicode.ReplacementChar }):
		return fault.Invalid("developer_id", "developer_id must be valid UTF-8 without control characters")
	}
	return nil
}

// Verify checks a token's signature (EdDSA with the local key only), issuer, audience, expiry and
// not-before, and that it names a developer; it returns the claims. Failures are Unauthorized
// errors whose message says what was wrong, never the token.
func (s *Signer) Verify(token string) (map[string]any, error) {
	if token == "" {
		return nil, fault.New(fault.Unauthorized, "a bearer token is required")
	}
	if len(token) > maxTokenLen {
		return nil, fault.New(fault.Unauthorized, "the token is longer than %d bytes", maxTokenLen)
	}
	now := s.now()
	if claims, ok := s.verified.get(token, now); ok {
		return claims, nil
	}
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(token, claims, func(*jwt.Token) (any, error) { return s.pub, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodEdDSA.Alg()}),
		jwt.WithIssuer(s.issuer),
		jwt.WithAudience(s.audience),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(leeway),
		jwt.WithTimeFunc(s.now),
	)
	if err != nil {
		return nil, fault.Wrap(fault.Unauthorized, err, "%s", reason(err))
	}
	dev, _ := claims[s.claim].(string)
	if checkDeveloperID(dev) != nil {
		return nil, fault.New(fault.Unauthorized, "the token's %q claim does not name a developer", s.claim)
	}
	s.verified.put(token, claims, now)
	return claims, nil
}

// Claims authenticates an HTTP request as API Gateway's JWT authorizer does: the bearer token in
// its Authorization header, verified, with the claims as strings (StringClaims). Its signature is
// httpapi.ClaimsFunc's, so local mode's front door can use it directly.
func (s *Signer) Claims(r *http.Request) (map[string]string, error) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return nil, fault.New(fault.Unauthorized, "the Authorization header must be \"Bearer <token>\"")
	}
	claims, err := s.Verify(strings.TrimSpace(token))
	if err != nil {
		return nil, err
	}
	return StringClaims(claims), nil
}

// DeveloperID is the developer a verified token's claims name.
func (s *Signer) DeveloperID(claims map[string]any) string {
	dev, _ := claims[s.claim].(string)
	return dev
}

func reason(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "the token is malformed"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		return "the token's signature is not valid for this server"
	case errors.Is(err, jwt.ErrTokenExpired):
		return "the token has expired; issue a new one with `go run ./infra/local token DEVELOPER_ID`"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return "the token lacks a required claim (exp)"
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return "the token is not valid yet"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return "the token was not issued by this server"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return "the token is not meant for this API"
	}
	return "the token is not valid"
}

// JWKS is the public key as a JSON Web Key Set, for clients that verify tokens themselves.
func (s *Signer) JWKS() []byte {
	data, _ := json.Marshal(map[string]any{"keys": []map[string]string{{
		"kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "use": "sig", "kid": s.kid,
		"x": base64.RawURLEncoding.EncodeToString(s.pub),
	}}})
	return data
}

// StringClaims renders claims as API Gateway's JWT authorizer puts them in a payload 2.0 event's
// requestContext.authorizer.jwt.claims: every value a string — numbers in plain decimal, booleans
// as true/false, lists as "[a b]", objects as compact JSON.
func StringClaims(claims map[string]any) map[string]string {
	out := make(map[string]string, len(claims))
	for k, v := range claims {
		out[k] = claimString(v)
	}
	return out
}

func claimString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1e15 {
			return strconv.FormatInt(int64(v), 10)
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	case json.Number:
		return v.String()
	case int64:
		return strconv.FormatInt(v, 10)
	case int:
		return strconv.Itoa(v)
	case nil:
		return ""
	case []any:
		parts := make([]string, len(v))
		for i, item := range v {
			parts[i] = claimString(item)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case []string:
		return "[" + strings.Join(v, " ") + "]"
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}
