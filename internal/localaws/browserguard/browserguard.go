// Package browserguard refuses requests a web browser sends on a page's behalf, so no web page
// (including via DNS rebinding) can use local mode's loopback ports.
//
// A page can make the browser send requests to 127.0.0.1 directly, or under its own domain once
// that domain resolves to 127.0.0.1 (DNS rebinding). The first carry an Origin or Sec-Fetch-Site
// naming another site; the second carry the page's domain in Host. Clients that are not browsers
// (the AWS SDKs and CLI, curl, local mode's own processes) send neither, so they pass.
package browserguard

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"sinew/internal/localaws/awsjson"
)

// Wrap passes on requests Check lets through and answers the rest 403 AccessDeniedException, in
// a shape both the HTTP API's clients (message) and the AWS JSON clients (__type) read.
func Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if why := Check(r); why != "" {
			refuse(w, why)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Check gives the reason a request is refused, or "" to let it through.
func Check(r *http.Request) string {
	if !loopbackHost(r.Host) {
		return fmt.Sprintf("local mode answers only requests addressed to localhost or a loopback IP, not to %q: "+
			"a web page can reach a loopback port under its own domain (DNS rebinding)", awsjson.Clip(r.Host, 100))
	}
	if origins, ok := r.Header["Origin"]; ok {
		for _, o := range origins {
			if o != "http://"+r.Host {
				return fmt.Sprintf("local mode refuses requests from another site (Origin %s)", awsjson.Clip(o, 100))
			}
		}
	}
	for _, site := range r.Header.Values("Sec-Fetch-Site") {
		if site != "same-origin" && site != "none" {
			return fmt.Sprintf("local mode refuses requests a browser sends for another site (Sec-Fetch-Site %s)", awsjson.Clip(site, 40))
		}
	}
	return ""
}

// loopbackHost reports whether a Host header names this machine's loopback: "localhost", an IPv4
// address in 127.0.0.0/8, or [::1], with or without a port. An AWS client prefixes some operations'
// host with a label (StartSyncExecution's "sync-"): "sync-localhost" or "sync-127.0.0.1" reaches
// local mode only through a proxy the client was told to use, and, being no name DNS can give a
// web page, they pass too.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	bracketed := strings.HasPrefix(hostport, "[")
	if rest, ok := cutPrefixFold(host, syncPrefix); ok && !bracketed {
		host = rest
	}
	if strings.EqualFold(host, "localhost") && !bracketed {
		return true
	}
	addr, err := netip.ParseAddr(host)
	if err != nil || addr.Zone() != "" || addr.Is6() != bracketed {
		return false // a name, or an address written as no browser or client writes it
	}
	return addr.Unmap().IsLoopback()
}

// syncPrefix is the host prefix AWS's clients put on StartSyncExecution's endpoint
// (https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartSyncExecution.html).
const syncPrefix = "sync-"

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) > len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// RefusalPolicy is the Content-Security-Policy of a refusal: nothing may run or load.
const RefusalPolicy = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func refuse(w http.ResponseWriter, why string) {
	// Marshalled, not formatted: the reason quotes the request's own headers.
	body, _ := json.Marshal(struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}{"AccessDeniedException", why})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", "AccessDeniedException")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	// The refusal is a page too, if a browser shows it: it runs nothing, loads nothing and may
	// not be framed.
	w.Header().Set("Content-Security-Policy", RefusalPolicy)
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(http.StatusForbidden)
	_, _ = w.Write(body)
}
