package netguard

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	"sinew/internal/fault"
)

// FuzzDial: for any host, resolved address, port and allowlist, the guard reaches connect(2) only for
// an address it permits: one Classify does not refuse, or one the allowlist names. A tripwire in the
// Control hook records what would be connected to and refuses it, so no packet is ever sent. Errors
// are typed, and the IPv4-mapped and NAT64 forms of an IPv4 address are judged as the address is.
func FuzzDial(f *testing.F) {
	for _, s := range []struct {
		host  string
		addr  []byte
		port  uint16
		allow string
	}{
		{"api.example.com", []byte{93, 184, 215, 14}, 443, ""},
		{"evil.test", []byte{127, 0, 0, 1}, 80, ""},
		{"evil.test", []byte{169, 254, 169, 254}, 80, ""},
		{"2130706433", nil, 80, ""},
		{"0177.0.0.1", nil, 80, ""},
		{"0x7f.1", nil, 8080, "127.0.0.1:8080"},
		{"[::ffff:127.0.0.1]", nil, 80, ""},
		{"[64:ff9b::a00:1]", nil, 80, ""},
		{"[2002:7f00:1::]", nil, 80, ""},
		{"[2001:0:4136:e378:8000:63bf:80ff:fffe]", nil, 80, ""},
		{"svc.internal", []byte{10, 1, 2, 3}, 443, "svc.internal:443"},
		{"svc.internal", []byte{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 443, "fd00::/8"},
		{"999.1.1.1", nil, 80, "10.0.0.0/8,bad entry"},
		{"localhost.", []byte{127, 0, 0, 1}, 0, "[::1]:8080"},
	} {
		f.Add(s.host, s.addr, s.port, s.allow)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	f.Fuzz(func(t *testing.T, host string, raw []byte, port uint16, allowS string) {
		addr := addrFrom(raw)
		if why, refused := Classify(addr); refused && why == "" {
			t.Fatalf("Classify(%v) refused without a reason", addr)
		}
		if addr.Is4() {
			why4, r4 := Classify(addr)
			for _, form := range []netip.Addr{netip.AddrFrom16(addr.As16()), nat64Of(addr)} {
				if _, rf := Classify(form); rf != r4 {
					t.Fatalf("%v refused=%v (%s) but its form %v refused=%v", addr, r4, why4, form, rf)
				}
			}
		}
		if ip, _, ok := ParseHostIP(host); ok {
			if again, _, ok2 := ParseHostIP(ip.String()); !ok2 || again != ip {
				t.Fatalf("ParseHostIP(%q) = %v, which reads back as %v %v", host, ip, again, ok2)
			}
		}
		allow, err := ParseAllowlist(allowS)
		if err != nil {
			allow = Allowlist{}
		}

		var mu sync.Mutex
		var reached []string
		tripwire := func(network, address string) error {
			mu.Lock()
			reached = append(reached, address)
			mu.Unlock()
			return &fault.Error{Kind: fault.Forbidden, Msg: "tripwire: the fuzz test connects nowhere"}
		}
		p := New(WithAllowlist(allow), WithLogger(log), WithControl(tripwire),
			WithResolver(StaticResolver{normalizeHost(host): {addr}}))
		target := net.JoinHostPort(host, strconv.Itoa(int(port)))
		// The tripwire refuses before connect(2), so no dial has anything to wait for; a context
		// error here means the guard waited on the network.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := p.DialContext(ctx, "tcp", target)
		if conn != nil {
			conn.Close()
			t.Fatalf("a connection was made to %s", target)
		}
		switch k := fault.KindOf(err); k {
		case fault.Forbidden, fault.InvalidInput, fault.Transient:
		default:
			t.Fatalf("DialContext(%s): error of kind %s: %v", target, k, err)
		}
		for _, a := range reached {
			ap, err := netip.ParseAddrPort(a)
			if err != nil {
				t.Fatalf("connect reached with %q", a)
			}
			if _, refused := Classify(ap.Addr()); refused && !allow.Allows(host, ap.Addr(), ap.Port()) {
				t.Fatalf("host %q (resolving to %v, allow %q): connect reached refused address %s", host, addr, allowS, a)
			}
		}
	})
}

// addrFrom reads 4 or 16 bytes as an address (others: the invalid zero Addr).
func addrFrom(b []byte) netip.Addr {
	switch len(b) {
	case 4:
		return netip.AddrFrom4([4]byte(b))
	case 16:
		return netip.AddrFrom16([16]byte(b))
	}
	return netip.Addr{}
}

func nat64Of(a netip.Addr) netip.Addr {
	b := a.As4()
	return netip.AddrFrom16([16]byte{0, 0x64, 0xff, 0x9b, 10: 0, 11: 0, 12: b[0], 13: b[1], 14: b[2], 15: b[3]})
}
