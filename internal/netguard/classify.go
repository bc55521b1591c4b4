package netguard

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// rangeRule names one refused range and says why, in words an operator can act on.
type rangeRule struct {
	prefix netip.Prefix
	why    string
}

func rules(why string, cidrs ...string) []rangeRule {
	out := make([]rangeRule, len(cidrs))
	for i, c := range cidrs {
		out[i] = rangeRule{netip.MustParsePrefix(c), why}
	}
	return out
}

// The refused IPv4 ranges: the IANA IPv4 special-purpose registry, less nothing. Order matters only
// for the wording: the most specific rule comes first.
var v4Rules = concat(
	rules("the cloud metadata address", "169.254.169.254/32", "169.254.170.2/32"),
	rules("the broadcast address", "255.255.255.255/32"),
	rules("the unspecified address", "0.0.0.0/32"),
	rules(`a "this network" address (0.0.0.0/8)`, "0.0.0.0/8"),
	rules("a loopback address", "127.0.0.0/8"),
	rules("a private address (RFC 1918)", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"),
	rules("a carrier-grade NAT address (RFC 6598)", "100.64.0.0/10"),
	rules("a link-local address", "169.254.0.0/16"),
	rules("an IETF protocol assignment address (RFC 6890)", "192.0.0.0/24"),
	rules("a documentation address (RFC 5737)", "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"),
	rules("a benchmarking address (RFC 2544)", "198.18.0.0/15"),
	rules("a deprecated 6to4 relay anycast address (RFC 7526)", "192.88.99.0/24"),
	rules("a special-purpose address (AS112/AMT, IANA registry)", "192.31.196.0/24", "192.52.193.0/24", "192.175.48.0/24"),
	rules("a multicast address", "224.0.0.0/4"),
	rules("a reserved address (240.0.0.0/4)", "240.0.0.0/4"),
)

// The refused IPv6 ranges. The forms that embed an IPv4 address (mapped, NAT64, 6to4, Teredo) are
// decoded before these apply, so the message names the embedded address.
var v6Rules = concat(
	rules("the cloud metadata address", "fd00:ec2::254/128"),
	rules("the unspecified address", "::/128"),
	rules("a loopback address", "::1/128"),
	rules("an IPv4-compatible address (deprecated, RFC 4291)", "::/96"),
	rules("a local-use NAT64 address (RFC 8215)", "64:ff9b:1::/48"),
	rules("a discard-only address (RFC 6666)", "100::/64"),
	rules("a documentation address (RFC 3849/9637)", "2001:db8::/32", "3fff::/20"),
	rules("an IETF protocol assignment address (RFC 2928)", "2001::/23"),
	rules("a special-purpose address (AS112, IANA registry)", "2620:4f:8000::/48"),
	rules("a unique-local address (fc00::/7)", "fc00::/7"),
	rules("a link-local address (fe80::/10)", "fe80::/10"),
	rules("a deprecated site-local address (fec0::/10)", "fec0::/10"),
	rules("a multicast address", "ff00::/8"),
)

var (
	globalUnicast6 = netip.MustParsePrefix("2000::/3")
	mapped6        = netip.MustParsePrefix("::ffff:0:0/96")
	nat64          = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour      = netip.MustParsePrefix("2002::/16")
	teredo         = netip.MustParsePrefix("2001::/32")
)

func concat(lists ...[]rangeRule) []rangeRule {
	var out []rangeRule
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// Classify says whether the guard refuses addr, whatever the allowlist, and why. It is the decision
// function itself: pure, and safe to call for any address (it sends nothing).
func Classify(addr netip.Addr) (why string, refused bool) {
	if !addr.IsValid() {
		return "not a valid IP address", true
	}
	addr = addr.WithZone("")
	if addr.Is4() {
		for _, r := range v4Rules {
			if r.prefix.Contains(addr) {
				return r.why, true
			}
		}
		return "", false
	}
	// IPv6 forms that carry an IPv4 address: judge the IPv4 address they lead to.
	if embedded, form, ok := embeddedV4(addr); ok {
		if why, refused := Classify(embedded); refused {
			return fmt.Sprintf("%s of %s, %s", form, embedded, why), true
		}
		// A public IPv4 address in any of these forms is as reachable as the address itself.
		return "", false
	}
	for _, r := range v6Rules {
		if r.prefix.Contains(addr) {
			return r.why, true
		}
	}
	if !globalUnicast6.Contains(addr) {
		return "outside the IPv6 global unicast range 2000::/3", true
	}
	return "", false
}

// embeddedV4 decodes the IPv4 address inside the IPv6 forms that translate or tunnel to IPv4:
// IPv4-mapped (::ffff:a.b.c.d), NAT64 (64:ff9b::a.b.c.d), 6to4 (2002:AABB:CCDD::/48) and Teredo
// (2001:0:SSSS:SSSS::, the client address inverted in the last 32 bits).
func embeddedV4(a netip.Addr) (netip.Addr, string, bool) {
	b := a.As16()
	switch {
	case mapped6.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), "an IPv4-mapped form", true
	case nat64.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), "a NAT64 form", true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), "a 6to4 form", true
	case teredo.Contains(a):
		client := [4]byte{^b[12], ^b[13], ^b[14], ^b[15]}
		server := netip.AddrFrom4([4]byte(b[4:8]))
		// Either end being a refused address is reason enough; report the client, the one the
		// packets are meant for, unless only the server is refused.
		if _, refused := Classify(netip.AddrFrom4(client)); !refused {
			if _, srvRefused := Classify(server); srvRefused {
				return server, "a Teredo form (server)", true
			}
		}
		return netip.AddrFrom4(client), "a Teredo form", true
	}
	return netip.Addr{}, "", false
}

// ParseHostIP reads host as an IP address, accepting, besides the standard forms, the legacy IPv4
// forms that inet_aton and browsers accept: 1 to 4 parts, each decimal, octal (leading 0) or hex
// (0x), the last part filling the remaining bytes (2130706433, 0177.0.0.1, 0x7f.1). numeric reports
// that host looks like such a number even when it does not parse, so the caller can refuse it
// instead of sending it to DNS.
func ParseHostIP(host string) (addr netip.Addr, numeric bool, ok bool) {
	h := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if a, err := netip.ParseAddr(h); err == nil {
		return a, true, true
	}
	h = strings.TrimSuffix(h, ".")
	if h == "" || !looksNumericV4(h) {
		return netip.Addr{}, false, false
	}
	parts := strings.Split(h, ".")
	if len(parts) > 4 {
		return netip.Addr{}, true, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		v, err := parseV4Part(p)
		if err != nil {
			return netip.Addr{}, true, false
		}
		vals[i] = v
	}
	var n uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 255 {
			return netip.Addr{}, true, false
		}
		n |= v << (8 * (3 - i))
	}
	last := vals[len(vals)-1]
	if last >= 1<<(8*(5-len(vals))) {
		return netip.Addr{}, true, false
	}
	n |= last
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true, true
}

// looksNumericV4 follows the WHATWG URL rule: a host whose last label is a number is an IPv4 host.
func looksNumericV4(h string) bool {
	labels := strings.Split(h, ".")
	last := strings.ToLower(labels[len(labels)-1])
	if last == "" {
		return false
	}
	if strings.HasPrefix(last, "0x") {
		for _, c := range last[2:] {
			if !strings.ContainsRune("0123456789abcdef", c) {
				return false
			}
		}
		return true
	}
	for _, c := range last {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func parseV4Part(p string) (uint64, error) {
	lp := strings.ToLower(p)
	switch {
	case lp == "":
		return 0, fmt.Errorf("empty part")
	case strings.HasPrefix(lp, "0x"):
		if len(lp) == 2 {
			return 0, nil
		}
		return strconv.ParseUint(lp[2:], 16, 32)
	case len(lp) > 1 && lp[0] == '0':
		return strconv.ParseUint(lp[1:], 8, 32)
	default:
		return strconv.ParseUint(lp, 10, 32)
	}
}
