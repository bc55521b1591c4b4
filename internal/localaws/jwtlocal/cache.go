package jwtlocal

import (
	"maps"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// maxVerified bounds the verified tokens remembered; past it the cache starts again empty. A
// local mode's clients hold a few tokens each.
const maxVerified = 1024

// verifiedCache remembers tokens that passed Verify, by their exact bytes, with the span of time
// in which they stay valid: a client sends the same token with every request, and checking its
// Ed25519 signature and claims each time was a share of local mode's CPU under load. A token is
// answered from the cache only inside its span (from when it was verified to its exp with the
// leeway Verify allows); outside it, Verify checks it again and says why it fails.
type verifiedCache struct {
	mu sync.Mutex
	m  map[string]verifiedToken
}

type verifiedToken struct {
	claims      jwt.MapClaims
	from, until time.Time // valid for from <= now < until
}

// get is a copy of a remembered token's claims when now is inside its span.
func (c *verifiedCache) get(token string, now time.Time) (jwt.MapClaims, bool) {
	c.mu.Lock()
	v, ok := c.m[token]
	c.mu.Unlock()
	if !ok || now.Before(v.from) || !now.Before(v.until) {
		return nil, false
	}
	return maps.Clone(v.claims), true
}

// put remembers a token Verify has just accepted at now.
func (c *verifiedCache) put(token string, claims jwt.MapClaims, now time.Time) {
	exp, err := claims.GetExpirationTime()
	if err != nil || exp == nil {
		return
	}
	// nbf and iat only bound the span from below, and the token was valid at now.
	v := verifiedToken{claims: maps.Clone(claims), from: now, until: exp.Add(leeway)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxVerified {
		c.m = map[string]verifiedToken{}
	}
	c.m[token] = v
}
