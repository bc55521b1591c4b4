package browserguard

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		name    string
		host    string
		origin  []string // nil: no Origin header
		site    string   // "": no Sec-Fetch-Site header
		refused string   // a part of the reason; "" to pass
	}{
		{name: "localhost", host: "localhost:4599"},
		{name: "localhost, no port", host: "localhost"},
		{name: "localhost, capitals", host: "LocalHost:4599"},
		{name: "127.0.0.1", host: "127.0.0.1:4599"},
		{name: "elsewhere in 127/8", host: "127.0.0.2:80"},
		{name: "IPv6 loopback", host: "[::1]:4599"},
		{name: "IPv6 loopback, no port", host: "[::1]"},
		{name: "IPv4-mapped loopback", host: "[::ffff:127.0.0.1]:4599"},
		{name: "sync- prefix on localhost", host: "sync-localhost:4599"},
		{name: "sync- prefix on 127.0.0.1", host: "sync-127.0.0.1:4599"},
		{name: "sync- prefix on a name", host: "sync-evil.example:4599", refused: "DNS rebinding"},
		{name: "sync- prefix on IPv6", host: "[sync-::1]:4599", refused: "DNS rebinding"},
		{name: "sync- prefix twice", host: "sync-sync-localhost:4599", refused: "DNS rebinding"},
		{name: "sync- alone", host: "sync-:4599", refused: "DNS rebinding"},
		{name: "rebound name", host: "evil.example:4599", refused: "DNS rebinding"},
		{name: "name of a loopback IP", host: "127.0.0.1.nip.io", refused: "DNS rebinding"},
		{name: "localhost as a subdomain", host: "localhost.evil.example:4599", refused: "DNS rebinding"},
		{name: "unbracketed IPv6", host: "::1", refused: "DNS rebinding"},
		{name: "bracketed IPv4", host: "[127.0.0.1]:4599", refused: "DNS rebinding"},
		{name: "bracketed localhost", host: "[localhost]:4599", refused: "DNS rebinding"},
		{name: "zoned IPv6", host: "[::1%25lo]:4599", refused: "DNS rebinding"},
		{name: "other IPv6", host: "[::2]:4599", refused: "DNS rebinding"},
		{name: "all interfaces", host: "0.0.0.0:4599", refused: "DNS rebinding"},
		{name: "LAN address", host: "192.168.1.10:4599", refused: "DNS rebinding"},
		{name: "no host", host: "", refused: "DNS rebinding"},
		{name: "same origin", host: "localhost:4599", origin: []string{"http://localhost:4599"}},
		{name: "same origin, IPv6", host: "[::1]:4599", origin: []string{"http://[::1]:4599"}},
		{name: "origin on another port", host: "localhost:4599", origin: []string{"http://localhost:3000"}, refused: "another site (Origin http://localhost:3000)"},
		{name: "origin of another host", host: "127.0.0.1:4599", origin: []string{"http://evil.example"}, refused: "Origin http://evil.example"},
		{name: "origin localhost for 127.0.0.1", host: "127.0.0.1:4599", origin: []string{"http://localhost:4599"}, refused: "another site"},
		{name: "https origin", host: "localhost:4599", origin: []string{"https://localhost:4599"}, refused: "another site"},
		{name: "null origin", host: "localhost:4599", origin: []string{"null"}, refused: "Origin null"},
		{name: "empty origin", host: "localhost:4599", origin: []string{""}, refused: "another site"},
		{name: "second origin differs", host: "localhost:4599", origin: []string{"http://localhost:4599", "http://evil.example"}, refused: "evil.example"},
		{name: "fetch same-origin", host: "localhost:4599", site: "same-origin"},
		{name: "fetch none (typed URL)", host: "localhost:4599", site: "none"},
		{name: "fetch same-site", host: "localhost:4599", site: "same-site", refused: "Sec-Fetch-Site same-site"},
		{name: "fetch cross-site", host: "localhost:4599", site: "cross-site", refused: "Sec-Fetch-Site cross-site"},
		{name: "same origin but cross-site fetch", host: "localhost:4599", origin: []string{"http://localhost:4599"}, site: "cross-site", refused: "cross-site"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/", nil)
			r.Host = tc.host
			if tc.origin != nil {
				r.Header["Origin"] = tc.origin
			}
			if tc.site != "" {
				r.Header.Set("Sec-Fetch-Site", tc.site)
			}
			got := Check(r)
			if tc.refused == "" && got != "" {
				t.Errorf("refused: %s", got)
			}
			if tc.refused != "" && !strings.Contains(got, tc.refused) {
				t.Errorf("Check = %q, want a refusal with %q", got, tc.refused)
			}
		})
	}
}

// TestWrap goes through a real server: a refusal is a 403 AccessDeniedException in JSON, with the
// request's text escaped, and the handler never runs.
func TestWrap(t *testing.T) {
	var reached atomic.Int32
	srv := httptest.NewServer(Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		_, _ = io.WriteString(w, "ok")
	})))
	defer srv.Close()
	tests := []struct {
		name   string
		host   string
		origin string
		status int
	}{
		{"plain client", "", "", http.StatusOK},
		{"same origin", "", srv.URL, http.StatusOK},
		{"rebound", "evil.example", "", http.StatusForbidden},
		{"cross-site page", "", `http://evil.example"<script>`, http.StatusForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := reached.Load()
			req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("{}"))
			if err != nil {
				t.Fatal(err)
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d %s, want %d", resp.StatusCode, body, tc.status)
			}
			if tc.status == http.StatusOK {
				if reached.Load() != before+1 {
					t.Error("the handler did not run")
				}
				return
			}
			if reached.Load() != before {
				t.Error("a refused request reached the handler")
			}
			var e struct {
				Type    string `json:"__type"`
				Message string `json:"message"`
			}
			if err := json.Unmarshal(body, &e); err != nil || e.Type != "AccessDeniedException" || e.Message == "" {
				t.Errorf("body %s is not an AccessDeniedException", body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" || strings.Contains(string(body), "<script>") {
				t.Errorf("Content-Type %s, body %s: want JSON with the request's text escaped", ct, body)
			}
		})
	}
}
