// Package netguardtest holds what tests of guarded clients share.
//
// They are loopback "canary" listeners that the refused targets would reach, and count every
// connection they accept; the table of SSRF targets; a static resolver for names that lead to
// internal addresses; and a tripwire that keeps any test from connecting off loopback even if the
// guard were broken.
package netguardtest

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync/atomic"
	"testing"

	"sinew/internal/netguard"
)

// Listener accepts and counts connections on one loopback address, then closes them.
type Listener struct {
	Addr     netip.AddrPort
	accepted atomic.Int64
}

// Accepted is how many connections reached the listener.
func (l *Listener) Accepted() int64 {
	if l == nil {
		return 0
	}
	return l.accepted.Load()
}

func listen(t testing.TB, network, addr string) *Listener {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		return nil
	}
	l := &Listener{Addr: netip.MustParseAddrPort(ln.Addr().String())}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.accepted.Add(1)
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close() })
	return l
}

// Canary is a set of loopback listeners on ports no allowlist names: the refused targets point at
// them, so a guard that let one through would show up as an accepted connection.
type Canary struct {
	V4  *Listener // 127.0.0.1
	V4b *Listener // 127.0.0.2 (Linux answers on all of 127/8); nil where it cannot listen
	V6  *Listener // [::1]; nil without IPv6 loopback
}

// NewCanary starts the listeners; they stop when the test ends.
func NewCanary(t testing.TB) *Canary {
	t.Helper()
	c := &Canary{V4: listen(t, "tcp4", "127.0.0.1:0"), V4b: listen(t, "tcp4", "127.0.0.2:0"), V6: listen(t, "tcp6", "[::1]:0")}
	if c.V4 == nil {
		t.Fatal("cannot listen on 127.0.0.1")
	}
	return c
}

// Accepted is the total of connections any canary accepted.
func (c *Canary) Accepted() int64 { return c.V4.Accepted() + c.V4b.Accepted() + c.V6.Accepted() }

func port(l *Listener, fallback uint16) string {
	if l == nil {
		return strconv.Itoa(int(fallback))
	}
	return strconv.Itoa(int(l.Addr.Port()))
}

// Target is one SSRF attempt: a URL and a piece of the message the refusal must carry.
type Target struct {
	Name string
	URL  string
	Want string
}

// Targets is the SSRF table: every URL must be refused before any packet is sent. The loopback ones
// point at the canaries; the others are off-host addresses that must never be dialed (the tripwire
// guarantees it).
func Targets(c *Canary) []Target {
	p4 := port(c.V4, 9)
	p4b := port(c.V4b, 9)
	p6 := port(c.V6, 9)
	return []Target{
		{"loopback", "http://127.0.0.1:" + p4 + "/", "127.0.0.1 is a loopback address"},
		{"loopback other", "http://127.0.0.2:" + p4b + "/", "127.0.0.2 is a loopback address"},
		{"short form", "http://127.1:" + p4 + "/", "127.0.0.1 is a loopback address"},
		{"decimal", "http://2130706433:" + p4 + "/", "127.0.0.1 is a loopback address"},
		{"octal dotted", "http://0177.0.0.1:" + p4 + "/", "127.0.0.1 is a loopback address"},
		{"octal whole", "http://017700000001:" + p4 + "/", "127.0.0.1 is a loopback address"},
		{"hex dotted", "http://0x7f.0.0.1:" + p4 + "/", "127.0.0.1 is a loopback address"},
		{"hex whole", "http://0x7f000001:" + p4 + "/", "127.0.0.1 is a loopback address"},
		{"hex short", "http://0x7f.1:" + p4 + "/", "127.0.0.1 is a loopback address"},
		{"numeric overflow", "http://4294967296:" + p4 + "/", "not a valid one"},
		{"unspecified", "http://0.0.0.0:" + p4 + "/", "0.0.0.0 is the unspecified address"},
		{"zero decimal", "http://0:" + p4 + "/", "0.0.0.0 is the unspecified address"},
		{"ipv6 loopback", "http://[::1]:" + p6 + "/", "::1 is a loopback address"},
		{"ipv6 loopback long", "http://[0:0:0:0:0:0:0:1]:" + p6 + "/", "::1 is a loopback address"},
		{"ipv6 unspecified", "http://[::]:" + p6 + "/", ":: is the unspecified address"},
		{"mapped dotted", "http://[::ffff:127.0.0.1]:" + p4 + "/", "IPv4-mapped form of 127.0.0.1, a loopback address"},
		{"mapped hex", "http://[::ffff:7f00:1]:" + p4 + "/", "IPv4-mapped form of 127.0.0.1"},
		{"mapped long", "http://[0:0:0:0:0:ffff:127.0.0.1]:" + p4 + "/", "IPv4-mapped form of 127.0.0.1"},
		{"compatible", "http://[::127.0.0.1]:" + p4 + "/", "IPv4-compatible"},
		{"nat64 loopback", "http://[64:ff9b::127.0.0.1]:" + p4 + "/", "NAT64 form of 127.0.0.1"},
		{"nat64 private", "http://[64:ff9b::a00:1]/", "NAT64 form of 10.0.0.1, a private address"},
		{"6to4 loopback", "http://[2002:7f00:1::1]:" + p4 + "/", "6to4 form of 127.0.0.1"},
		{"6to4 metadata", "http://[2002:a9fe:a9fe::1]/", "6to4 form of 169.254.169.254, the cloud metadata address"},
		{"teredo loopback", "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", "Teredo form of 127.0.0.1"},
		{"name to loopback", "http://evil.test:" + p4 + "/", "evil.test resolves to 127.0.0.1, a loopback address"},
		// Loopback names are answered by the guard, never asked of the resolver (Resolver knows none).
		{"localhost", "http://localhost:" + p4 + "/", "localhost resolves to 127.0.0.1, a loopback address"},
		{"localhost trailing dot", "http://localhost.:" + p4 + "/", "resolves to 127.0.0.1, a loopback address"},
		{"localhost upper case", "http://LOCALHOST:" + p4 + "/", "resolves to 127.0.0.1, a loopback address"},
		{"name under localhost", "http://foo.localhost:" + p4 + "/", "foo.localhost resolves to 127.0.0.1, a loopback address"},
		{"ip6-localhost", "http://ip6-localhost:" + p6 + "/", "ip6-localhost resolves to ::1, a loopback address"},
		{"localhost.localdomain", "http://localhost.localdomain./", "resolves to 127.0.0.1, a loopback address"},
		{"name to ipv6 loopback", "http://v6evil.test:" + p6 + "/", "v6evil.test resolves to ::1"},
		{"name mixing public and loopback", "http://rebind.test:" + p4 + "/", "rebind.test resolves to 127.0.0.1"},
		{"name to metadata", "http://metadata.test/", "resolves to 169.254.169.254, the cloud metadata address"},
		{"metadata", "http://169.254.169.254/latest/meta-data/", "169.254.169.254 is the cloud metadata address"},
		{"metadata decimal", "http://2852039166/", "169.254.169.254 is the cloud metadata address"},
		{"metadata mapped", "http://[::ffff:169.254.169.254]/", "IPv4-mapped form of 169.254.169.254"},
		{"metadata ipv6 (AWS)", "http://[fd00:ec2::254]/", "the cloud metadata address"},
		{"link-local", "http://169.254.1.1/", "169.254.1.1 is a link-local address"},
		{"private 10", "http://10.0.0.1/", "10.0.0.1 is a private address"},
		{"private 172", "http://172.16.0.1/", "172.16.0.1 is a private address"},
		{"private 192", "https://192.168.1.1/", "192.168.1.1 is a private address"},
		{"private octal", "http://012.0.0.1/", "10.0.0.1 is a private address"},
		{"cgnat", "http://100.64.0.1/", "carrier-grade NAT"},
		{"benchmark", "http://198.18.0.1/", "benchmarking"},
		{"documentation", "http://192.0.2.1/", "documentation"},
		{"multicast", "http://224.0.0.1/", "multicast"},
		{"broadcast", "http://255.255.255.255/", "broadcast"},
		{"reserved", "http://240.0.0.1/", "reserved"},
		{"ipv6 link-local", "http://[fe80::1%25lo]:" + p6 + "/", "link-local"},
		{"ipv6 unique-local", "http://[fc00::1]/", "unique-local"},
		{"ipv6 unique-local fd", "http://[fd12:3456::1]/", "unique-local"},
		{"ipv6 multicast", "http://[ff02::1]/", "multicast"},
		{"ipv6 site-local", "http://[fec0::1]/", "site-local"},
		{"ipv6 documentation", "http://[2001:db8::1]/", "documentation"},
	}
}

// Resolver maps the table's names to their internal addresses, so no DNS is asked.
func Resolver() netguard.StaticResolver {
	m := func(s ...string) []netip.Addr {
		out := make([]netip.Addr, len(s))
		for i, a := range s {
			out[i] = netip.MustParseAddr(a)
		}
		return out
	}
	return netguard.StaticResolver{
		"evil.test":     m("127.0.0.1"),
		"v6evil.test":   m("::1"),
		"rebind.test":   m("93.184.215.14", "127.0.0.1"), // a public address first: the dial must not start
		"metadata.test": m("169.254.169.254"),
	}
}

// ErrOffLoopback is what the tripwire answers for an address off loopback.
var ErrOffLoopback = errors.New("netguardtest tripwire: refusing to connect off loopback")

// Tripwire is a netguard.WithControl option that runs just before connect(2) for every address the
// guard let through: it counts them, and refuses (and fails the test for) any address off loopback,
// so no test ever sends a packet off this machine.
func Tripwire(t testing.TB) (netguard.Option, *atomic.Int64) {
	var n atomic.Int64
	return netguard.WithControl(func(network, address string) error {
		n.Add(1)
		ap, err := netip.ParseAddrPort(address)
		if err != nil || !ap.Addr().Unmap().IsLoopback() {
			t.Errorf("tripwire: the guard let %s %s through to connect", network, address)
			return fmt.Errorf("%w: %s", ErrOffLoopback, address)
		}
		return nil
	}), &n
}
