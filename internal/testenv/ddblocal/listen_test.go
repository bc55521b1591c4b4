package ddblocal_test

import (
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
)

// listenAddrs are the local addresses of the sockets listening on port, read from the kernel's
// tables (/proc/net/tcp and tcp6): what the JVM bound, whatever it says.
func listenAddrs(t *testing.T, port int) []net.IP {
	t.Helper()
	var ips []net.IP
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("read %s: %v", f, err)
		}
		ips = append(ips, parseListen(string(data), port)...)
	}
	return ips
}

// parseListen reads the listening (state 0A) sockets on port from a /proc/net/tcp{,6} table. An
// address there is hex, in 32-bit words of the host's byte order (little-endian here).
func parseListen(table string, port int) []net.IP {
	var ips []net.IP
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || f[3] != "0A" {
			continue
		}
		addr, p, ok := strings.Cut(f[1], ":")
		if n, err := strconv.ParseUint(p, 16, 16); !ok || err != nil || int(n) != port {
			continue
		}
		b, err := hex.DecodeString(addr)
		if err != nil || len(b)%4 != 0 {
			continue
		}
		for i := 0; i < len(b); i += 4 {
			b[i], b[i+1], b[i+2], b[i+3] = b[i+3], b[i+2], b[i+1], b[i]
		}
		ips = append(ips, net.IP(b))
	}
	return ips
}

// loopbackOnly reports whether there is a socket and every one is bound to 127.0.0.1 (an IPv6
// socket bound to ::ffff:127.0.0.1 is the same address).
func loopbackOnly(ips []net.IP) bool {
	for _, ip := range ips {
		if !ip.Equal(net.IPv4(127, 0, 0, 1)) {
			return false
		}
	}
	return len(ips) > 0
}

func TestParseListen(t *testing.T) {
	const rest = " 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 14224 1"
	for _, tc := range []struct {
		name, table string
		want        string // the addresses, space-separated
		loopback    bool
	}{
		// DynamoDBLocal.jar started with java -jar: Java's dual-stack socket on every interface.
		{"java -jar DynamoDBLocal.jar", "  0: 00000000000000000000000000000000:4651" + rest, "::", false},
		{"the launcher", "  0: 0000000000000000FFFF00000100007F:4651" + rest, "127.0.0.1", true},
		{"IPv4 loopback", "  0: 0100007F:4651 00000000:0000 0A 00000000:00000000", "127.0.0.1", true},
		{"IPv4 every interface", "  0: 00000000:4651 00000000:0000 0A 00000000:00000000", "0.0.0.0", false},
		{"IPv6 loopback", "  0: 00000000000000000000000001000000:4651" + rest, "::1", false},
		{"loopback and every interface", "  0: 0100007F:4651 00000000:0000 0A\n  1: 00000000:4651 00000000:0000 0A", "127.0.0.1 0.0.0.0", false},
		{"another port", "  0: 00000000:4652 00000000:0000 0A 00000000:00000000", "", false},
		{"a connection, not a listener", "  0: 00000000:4651 0100007F:9C40 01 00000000:00000000", "", false},
		{"the header line", "  sl  local_address rem_address   st tx_queue rx_queue", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ips := parseListen(tc.table, 0x4651)
			var got []string
			for _, ip := range ips {
				got = append(got, ip.String())
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("addresses %q, want %q", got, tc.want)
			}
			if loopbackOnly(ips) != tc.loopback {
				t.Errorf("loopbackOnly %v, want %v", !tc.loopback, tc.loopback)
			}
		})
	}
}

// checkLoopbackOnly fails t unless the server at endpoint listens on 127.0.0.1 only.
func checkLoopbackOnly(t *testing.T, endpoint string) {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatalf("endpoint %s: %v", endpoint, err)
	}
	if ips := listenAddrs(t, port); !loopbackOnly(ips) {
		t.Errorf("port %d: listening on %v, want 127.0.0.1 only", port, ips)
	}
}

// checkNoCORS fails t unless the server at endpoint gives no web page's origin an
// Access-Control-Allow-Origin: not in a preflight, not on an answer; and gives the allow-list's
// own origin one, so that the check is not passing because CORS headers never come.
func checkNoCORS(t *testing.T, endpoint string) {
	t.Helper()
	auth := "AWS4-HMAC-SHA256 Credential=corscheck/20240101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0"
	for _, tc := range []struct {
		name, method, origin string
		wantAllow            string
	}{
		{"preflight from a web page", http.MethodOptions, "http://evil.example", ""},
		{"ListTables from a web page", http.MethodPost, "http://evil.example", ""},
		{"ListTables from a sandboxed page or a file", http.MethodPost, "null", ""},
		{"ListTables from a page on localhost", http.MethodPost, "http://localhost:8080", ""},
		{"ListTables from origin *", http.MethodPost, "*", ""},
		{"ListTables from the allow-list's origin", http.MethodPost, "https://sinew.invalid", "https://sinew.invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, endpoint+"/", strings.NewReader("{}"))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Origin", tc.origin)
			if tc.method == http.MethodOptions {
				req.Header.Set("Access-Control-Request-Method", "POST")
				req.Header.Set("Access-Control-Request-Headers", "authorization,content-type,x-amz-target")
			} else {
				req.Header.Set("X-Amz-Target", "DynamoDB_20120810.ListTables")
				req.Header.Set("Content-Type", "application/x-amz-json-1.0")
				req.Header.Set("Authorization", auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("status %d, want 200", resp.StatusCode)
			}
			if got := strings.Join(resp.Header.Values("Access-Control-Allow-Origin"), ","); got != tc.wantAllow {
				t.Errorf("Access-Control-Allow-Origin %q, want %q", got, tc.wantAllow)
			}
		})
	}
}
