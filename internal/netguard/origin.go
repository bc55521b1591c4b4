package netguard

import (
	"net/http"
	"net/url"
	"strings"
)

// CrossOrigin reports whether a redirect's next request leaves the origin (scheme, host and port,
// a missing port being the scheme's) of the chain's first request. net/http drops Authorization
// and Cookie only when the host name changes, not for another port of the same host, and never the
// other headers a caller sends a key in (X-Api-Key ...): callers drop what they set themselves.
func CrossOrigin(req *http.Request, via []*http.Request) bool {
	return len(via) > 0 && !sameOrigin(req.URL, via[0].URL)
}

func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && portOf(a) == portOf(b)
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// plainHeaders are what a request keeps across origins when its sender drops the rest: they say
// what is asked and accepted, never who asks.
var plainHeaders = []string{"Accept", "Accept-Encoding", "Accept-Language", "Content-Type", "User-Agent"}

// DropAcrossOrigins wraps a CheckRedirect function (RedirectPolicy) so that a hop to another origin
// carries only the plain headers (Accept, Content-Type, User-Agent ...): a provider's key, in
// whatever header it travels, stays with the origin it was meant for.
func DropAcrossOrigins(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if err := next(req, via); err != nil {
			return err
		}
		if CrossOrigin(req, via) {
			for name := range req.Header {
				if !isPlain(name) {
					req.Header.Del(name)
				}
			}
		}
		return nil
	}
}

func isPlain(name string) bool {
	for _, p := range plainHeaders {
		if strings.EqualFold(p, name) {
			return true
		}
	}
	return false
}
