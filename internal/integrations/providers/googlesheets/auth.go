package googlesheets

import (
	"context"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"sinew/internal/fault"
	"sinew/internal/integrations"
)

// scope is the one OAuth scope the provider asks for, as Julep does.
const scope = "https://www.googleapis.com/auth/spreadsheets"

// defaultTokenURL is Google's OAuth token endpoint, used when the key names none.
const defaultTokenURL = "https://oauth2.googleapis.com/token"

// serviceAccount is the part of a service-account key file the JWT flow needs.
type serviceAccount struct {
	Type         string `json:"type"`
	ClientEmail  string `json:"client_email"`
	PrivateKeyID string `json:"private_key_id"`
	PrivateKey   string `json:"private_key"`
	TokenURI     string `json:"token_uri"`
}

// credentials picks the service account: the operator's (SINEW_GOOGLE_SHEETS_SERVICE_ACCOUNT_JSON,
// Julep's JULEP_GOOGLE_SHEETS_SERVICE_ACCOUNT_JSON) when use_julep_service is true, else the
// setup's. Both are base64 of the key file; missing padding is repaired, as Julep does. Errors never
// repeat the key.
func credentials(env integrations.Env, s Setup) (serviceAccount, *rsa.PrivateKey, []byte, error) {
	field := "setup.service_account_json"
	encoded := s.ServiceAccountJSON
	if s.UseJulepService {
		field = "setup.use_julep_service"
		encoded = env.Setting("SERVICE_ACCOUNT_JSON")
		if encoded == "" {
			return serviceAccount{}, nil, nil, fault.Invalid(field, "this deployment has no shared Google Sheets service account (SINEW_GOOGLE_SHEETS_SERVICE_ACCOUNT_JSON); set use_julep_service to false and give service_account_json")
		}
	} else if encoded == "" {
		return serviceAccount{}, nil, nil, fault.Invalid(field, "setup.service_account_json is required when use_julep_service is false (the base64 of a service-account key file)")
	}
	encoded = strings.TrimSpace(encoded)
	if m := len(encoded) % 4; m != 0 {
		encoded += strings.Repeat("=", 4-m)
	}
	raw, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		raw, err = base64.URLEncoding.DecodeString(encoded)
	}
	if err != nil {
		return serviceAccount{}, nil, nil, fault.Invalid(field, "%s is not base64", field)
	}
	var sa serviceAccount
	if err := json.Unmarshal(raw, &sa); err != nil {
		return serviceAccount{}, nil, nil, fault.Invalid(field, "%s does not hold a service-account key file (JSON)", field)
	}
	if sa.ClientEmail == "" || sa.PrivateKey == "" {
		return serviceAccount{}, nil, nil, fault.Invalid(field, "%s lacks client_email or private_key", field)
	}
	key, err := jwt.ParseRSAPrivateKeyFromPEM([]byte(sa.PrivateKey))
	if err != nil {
		return serviceAccount{}, nil, nil, fault.Invalid(field, "the private_key of %s is not an RSA key in PEM form", field)
	}
	return sa, key, raw, nil
}

// tokenURL is where the assertion is exchanged: SINEW_GOOGLE_SHEETS_TOKEN_URL, else the key's
// token_uri, else Google's.
func tokenURL(env integrations.Env, sa serviceAccount) string {
	def := sa.TokenURI
	if def == "" {
		def = defaultTokenURL
	}
	return env.Endpoint("TOKEN_URL", def)
}

type cachedToken struct {
	token   string
	expires time.Time
}

// tokens caches access tokens by a hash of (key file, token URL), so a warm Lambda does not sign and
// exchange an assertion on every call; the key itself is not kept.
var tokens sync.Map

// forgetToken drops a cached token the API refused.
func forgetToken(tok string) {
	tokens.Range(func(k, v any) bool {
		if v.(cachedToken).token == tok {
			tokens.Delete(k)
		}
		return true
	})
}

// accessToken signs a JWT assertion with the service account's key (RS256) and exchanges it at the
// token URL (RFC 7523), reusing a cached token until a minute before it expires.
func accessToken(ctx context.Context, env integrations.Env, s Setup) (string, error) {
	sa, key, raw, err := credentials(env, s)
	if err != nil {
		return "", err
	}
	aud := tokenURL(env, sa)
	h := sha256.Sum256(append(append([]byte{}, raw...), []byte("\x00"+aud)...))
	cacheKey := string(h[:])
	if c, ok := tokens.Load(cacheKey); ok && time.Now().Before(c.(cachedToken).expires) {
		return c.(cachedToken).token, nil
	}
	now := time.Now()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{
		"iss":   sa.ClientEmail,
		"scope": scope,
		"aud":   aud,
		"iat":   now.Unix(),
		"exp":   now.Add(time.Hour).Unix(),
	})
	if sa.PrivateKeyID != "" {
		tok.Header["kid"] = sa.PrivateKeyID
	}
	assertion, err := tok.SignedString(key)
	if err != nil {
		return "", fault.Wrap(fault.Internal, err, "could not sign the Google service-account assertion")
	}
	form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {assertion}}
	resp, err := env.Do(ctx, integrations.Request{Method: "POST", URL: aud, Body: []byte(form.Encode()), ContentType: "application/x-www-form-urlencoded"})
	if err != nil {
		// The token endpoint answers 400 invalid_grant for a key it does not accept.
		var fe *fault.Error
		if errors.As(err, &fe) && fe.Kind == fault.Provider {
			return "", &fault.Error{Kind: fault.Provider, Msg: "Google refused the service-account credentials when exchanging the token: " + fault.Message(err)}
		}
		return "", err
	}
	var t struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
		TokenType   string `json:"token_type"`
	}
	if err := json.Unmarshal(resp.Body, &t); err != nil || t.AccessToken == "" {
		return "", fault.New(fault.Provider, "Google's token endpoint answered without an access token")
	}
	if t.ExpiresIn <= 0 {
		t.ExpiresIn = 3600
	}
	if ttl := time.Duration(t.ExpiresIn)*time.Second - time.Minute; ttl > 0 {
		tokens.Store(cacheKey, cachedToken{token: t.AccessToken, expires: now.Add(ttl)})
	}
	return t.AccessToken, nil
}
