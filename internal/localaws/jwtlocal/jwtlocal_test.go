package jwtlocal

import (
	"crypto/ed25519"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"sinew/internal/fault"
	"sinew/internal/httpapi"
)

func TestIssueVerify(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".local")
	s, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, KeyFileName))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file permissions %o, want 600", fi.Mode().Perm())
	}
	tok, err := s.Issue("dev-42", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	// A restarted local mode (a second Open on the same directory) accepts earlier tokens.
	s2, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	claims, err := s2.Verify(tok)
	if err != nil {
		t.Fatal(err)
	}
	if claims["sub"] != "dev-42" || claims["iss"] != DefaultIssuer || claims["aud"] != DefaultAudience || s2.DeveloperID(claims) != "dev-42" {
		t.Errorf("claims = %v", claims)
	}
	exp, _ := claims["exp"].(float64)
	iat, _ := claims["iat"].(float64)
	if exp-iat != 3600 {
		t.Errorf("exp - iat = %v, want 3600", exp-iat)
	}
	// A configured developer claim (SINEW_JWT_CLAIM) carries the id too.
	c, err := Open(Options{Dir: dir, Claim: "custom:developer_id"})
	if err != nil {
		t.Fatal(err)
	}
	tok, err = c.Issue("dev-7", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	claims, err = c.Verify(tok)
	if err != nil || c.DeveloperID(claims) != "dev-7" || claims["custom:developer_id"] != "dev-7" {
		t.Errorf("custom claim: %v %v", claims, err)
	}
}

func TestVerifyRejects(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	s, err := Open(Options{Dir: dir, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	good, err := s.Issue("dev-1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	otherKey, _ := Open(Options{Dir: t.TempDir(), Now: clock})
	foreign, _ := otherKey.Issue("dev-1", time.Hour)
	otherIssuer, _ := Open(Options{Dir: dir, Issuer: "someone-else", Now: clock})
	wrongIss, _ := otherIssuer.Issue("dev-1", time.Hour)
	otherAud, _ := Open(Options{Dir: dir, Audience: "another-api", Now: clock})
	wrongAud, _ := otherAud.Issue("dev-1", time.Hour)
	later, _ := Open(Options{Dir: dir, Now: func() time.Time { return now.Add(2 * time.Hour) }})
	earlier, _ := Open(Options{Dir: dir, Now: func() time.Time { return now.Add(-time.Hour) }})

	sign := func(method jwt.SigningMethod, key any, claims jwt.MapClaims) string {
		tok, err := jwt.NewWithClaims(method, claims).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	base := func() jwt.MapClaims {
		return jwt.MapClaims{"iss": DefaultIssuer, "aud": DefaultAudience, "sub": "dev-1", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	}
	noExp := base()
	delete(noExp, "exp")
	noSub := base()
	delete(noSub, "sub")
	numericSub := base()
	numericSub["sub"] = 42
	unsigned := sign(jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, base())
	// Algorithm confusion: an HMAC token keyed with the public key's bytes.
	hmac := sign(jwt.SigningMethodHS256, []byte(s.pub), base())
	parts := strings.Split(good, ".")
	tampered := parts[0] + "." + strings.TrimRight(parts[1], "=") + "x." + parts[2]

	tests := []struct {
		name   string
		signer *Signer
		token  string
		msg    string
	}{
		{"empty", s, "", "a bearer token is required"},
		{"garbage", s, "not.a.token", "the token is malformed"},
		{"too long", s, strings.Repeat("a", maxTokenLen+1), "the token is longer than 8192 bytes"},
		{"other key", s, foreign, "the token's signature is not valid for this server"},
		{"tampered", s, tampered, ""},
		{"alg none", s, unsigned, ""},
		{"alg confusion", s, hmac, ""},
		{"wrong issuer", s, wrongIss, "the token was not issued by this server"},
		{"wrong audience", s, wrongAud, "the token is not meant for this API"},
		{"expired", later, good, "the token has expired; issue a new one with `go run ./infra/local token DEVELOPER_ID`"},
		{"not yet valid", earlier, good, "the token is not valid yet"},
		{"no exp", s, sign(jwt.SigningMethodEdDSA, s.priv, noExp), "the token lacks a required claim (exp)"},
		{"no developer", s, sign(jwt.SigningMethodEdDSA, s.priv, noSub), `the token's "sub" claim does not name a developer`},
		{"numeric developer", s, sign(jwt.SigningMethodEdDSA, s.priv, numericSub), `the token's "sub" claim does not name a developer`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			claims, err := tc.signer.Verify(tc.token)
			if err == nil {
				t.Fatalf("Verify accepted it: %v", claims)
			}
			if !fault.Is(err, fault.Unauthorized) {
				t.Errorf("kind = %s, want Unauthorized", fault.KindOf(err))
			}
			if tc.msg != "" && fault.Message(err) != tc.msg {
				t.Errorf("message = %q, want %q", fault.Message(err), tc.msg)
			}
			if tc.token != "" && strings.Contains(fault.Message(err), tc.token) {
				t.Error("the message carries the token")
			}
		})
	}
	if _, err := s.Verify(good); err != nil {
		t.Errorf("the good token was refused: %v", err)
	}
}

// TestVerifyRemembered: a token verified once is answered again with the same claims (a copy the
// caller may change), but only while it is valid: before its iat or past its exp, with the leeway,
// it fails as it would the first time.
func TestVerifyRemembered(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := start
	s, err := Open(Options{Dir: t.TempDir(), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.Issue("dev-1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.Verify(tok)
	if err != nil {
		t.Fatal(err)
	}
	first["sub"] = "changed by the caller"
	tests := []struct {
		name string
		at   time.Duration // after the first Verify
		msg  string        // "" when valid
	}{
		{"again", time.Minute, ""},
		{"within the leeway past exp", time.Hour + leeway - time.Second, ""},
		{"past exp", time.Hour + leeway, "the token has expired; issue a new one with `go run ./infra/local token DEVELOPER_ID`"},
		{"before iat", -leeway - time.Second, "the token is not valid yet"},
		{"within the leeway before iat", -leeway, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			now = start.Add(tc.at)
			claims, err := s.Verify(tok)
			if tc.msg != "" {
				if err == nil || fault.Message(err) != tc.msg {
					t.Errorf("Verify = %v, %v; want %q", claims, err, tc.msg)
				}
				return
			}
			if err != nil || s.DeveloperID(claims) != "dev-1" {
				t.Errorf("Verify = %v, %v", claims, err)
			}
		})
	}
}

func TestIssueRejects(t *testing.T) {
	s, err := Open(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		dev   string
		ttl   time.Duration
		field string
	}{
		{"empty developer", "", time.Hour, "developer_id"},
		{"long developer", strings.Repeat("d", 257), time.Hour, "developer_id"},
		{"control character", "dev\n1", time.Hour, "developer_id"},
		{"invalid UTF-8", "dev\xff", time.Hour, "developer_id"},
		{"zero ttl", "dev", 0, "ttl"},
		{"negative ttl", "dev", -time.Second, "ttl"},
		{"ttl too long", "dev", MaxTTL + time.Second, "ttl"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Issue(tc.dev, tc.ttl)
			if !fault.Is(err, fault.InvalidInput) || fault.FieldOf(err) != tc.field {
				t.Errorf("err = %v (kind %s, field %q), want InvalidInput on %s", err, fault.KindOf(err), fault.FieldOf(err), tc.field)
			}
		})
	}
}

func TestOpenRejectsBadKeyFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, KeyFileName)
	for name, content := range map[string]string{
		"not PEM":    "hello",
		"wrong type": "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
		"bad DER":    "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
	} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(Options{Dir: dir}); err == nil {
			t.Errorf("%s: Open accepted it", name)
		}
	}
	if _, err := Open(Options{}); err == nil {
		t.Error("Open accepted an empty Dir")
	}
}

func TestJWKS(t *testing.T) {
	s, err := Open(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var set struct {
		Keys []struct{ Kty, Crv, X, Kid string }
	}
	if err := json.Unmarshal(s.JWKS(), &set); err != nil || len(set.Keys) != 1 {
		t.Fatalf("JWKS %s: %v", s.JWKS(), err)
	}
	tok, _ := s.Issue("d", time.Minute)
	parsed, _, err := jwt.NewParser().ParseUnverified(tok, jwt.MapClaims{})
	if err != nil || parsed.Header["kid"] != set.Keys[0].Kid || set.Keys[0].Crv != "Ed25519" || set.Keys[0].X == "" {
		t.Errorf("kid %v vs JWKS %+v", parsed.Header["kid"], set.Keys[0])
	}
}

func TestStringClaims(t *testing.T) {
	got := StringClaims(map[string]any{
		"sub": "dev-1", "exp": float64(1767225600), "ratio": 0.5, "admin": true,
		"groups": []any{"a", "b"}, "nested": map[string]any{"k": "v"}, "none": nil, "big": json.Number("12345678901234567890"),
	})
	want := map[string]string{
		"sub": "dev-1", "exp": "1767225600", "ratio": "0.5", "admin": "true",
		"groups": "[a b]", "nested": `{"k":"v"}`, "none": "", "big": "12345678901234567890",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d claims, want %d", len(got), len(want))
	}
}

// TestKeyRace: two local-mode processes starting at once end up with one key.
func TestKeyRace(t *testing.T) {
	dir := t.TempDir()
	signers := make(chan *Signer, 8)
	for range 8 {
		go func() {
			s, err := Open(Options{Dir: dir})
			if err != nil {
				t.Error(err)
			}
			signers <- s
		}()
	}
	var first ed25519.PublicKey
	for range 8 {
		s := <-signers
		if s == nil {
			continue
		}
		if first == nil {
			first = s.pub
		} else if !first.Equal(s.pub) {
			t.Fatal("concurrent Opens made different keys")
		}
	}
}

func TestClaims(t *testing.T) {
	s, err := Open(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	// Local mode's front door takes it as httpapi's ClaimsFunc.
	var _ httpapi.ClaimsFunc = s.Claims
	tok, err := s.Issue("dev-9", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, header string
		ok           bool
	}{
		{"bearer", "Bearer " + tok, true},
		{"lower-case scheme", "bearer " + tok, true},
		{"missing", "", false},
		{"basic", "Basic " + tok, false},
		{"no token", "Bearer ", false},
		{"bad token", "Bearer " + tok + "x", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/agents", nil)
			if tc.header != "" {
				r.Header.Set("Authorization", tc.header)
			}
			claims, err := s.Claims(r)
			if tc.ok {
				if err != nil || claims["sub"] != "dev-9" || claims["aud"] != DefaultAudience || claims["exp"] == "" {
					t.Errorf("claims %v, err %v", claims, err)
				}
				return
			}
			if !fault.Is(err, fault.Unauthorized) {
				t.Errorf("err = %v, want Unauthorized", err)
			}
		})
	}
}
