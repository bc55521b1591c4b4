package netguard

import (
	"net/netip"
	"slices"
	"strings"
)

// The names hosts files give the loopback addresses (Debian's, Red Hat's), IPv4 and IPv6.
var (
	loopback4Names = []string{"localhost.localdomain", "localhost4", "localhost4.localdomain4"}
	loopback6Names = []string{"ip6-localhost", "ip6-loopback", "localhost6", "localhost6.localdomain6"}
)

// IsLoopbackName reports whether host names the loopback interface whatever a resolver says:
// localhost and every name under it (RFC 6761 §6.3), in any case and with any trailing dots, and
// the loopback names of common hosts files. The guard answers these itself, with the loopback
// addresses, so they are refused as loopback (unless allowed) rather than sent to DNS, where
// "localhost." is a lookup failure, retried as transient.
func IsLoopbackName(host string) bool {
	n := canonicalName(host)
	return n == "localhost" || strings.HasSuffix(n, ".localhost") || slices.Contains(loopback4Names, n) || slices.Contains(loopback6Names, n)
}

// loopbackAddr is the address a loopback name resolves to for the network asked ("ip", "ip4",
// "ip6"): one address, as a hosts file gives, so an allowlist entry for it is enough: ::1 for the
// IPv6 names (and for "ip6"), else 127.0.0.1.
func loopbackAddr(host, ipNet string) netip.Addr {
	if ipNet == "ip6" || (ipNet != "ip4" && slices.Contains(loopback6Names, canonicalName(host))) {
		return netip.IPv6Loopback()
	}
	return netip.AddrFrom4([4]byte{127, 0, 0, 1})
}

func canonicalName(host string) string { return strings.ToLower(strings.TrimRight(host, ".")) }
