package netguard

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// EnvAllow is the environment variable holding the operator's allowlist.
const EnvAllow = "SINEW_APICALL_ALLOW"

// Allowlist is the operator's list of targets the guard permits although they are in a refused range:
// CIDRs (or single IPs) on any port, and host:port pairs, where the host is an IP or a name (a name
// entry permits whatever that name resolves to, on that port only). The zero value permits nothing.
type Allowlist struct {
	prefixes  []netip.Prefix
	hostPorts map[hostPort]struct{}
}

type hostPort struct {
	host string // normalized: an IP's canonical form, or a lower-case name without a trailing dot
	port uint16
}

// ParseAllowlist reads the SINEW_APICALL_ALLOW format: comma-separated entries, each a CIDR
// ("10.1.0.0/16", "fd00::/8"), an IP ("10.1.2.3"), or host:port ("127.0.0.1:8080", "[::1]:8080",
// "svc.internal:443"). Blank entries are skipped; anything else is an error naming the entry.
func ParseAllowlist(s string) (Allowlist, error) {
	var a Allowlist
	for raw := range strings.SplitSeq(s, ",") {
		e := strings.TrimSpace(raw)
		if e == "" {
			continue
		}
		if err := a.add(e); err != nil {
			return Allowlist{}, fmt.Errorf("allow entry %q: %w", e, err)
		}
	}
	return a, nil
}

// MustParseAllowlist is ParseAllowlist for fixed strings in code and tests.
func MustParseAllowlist(s string) Allowlist {
	a, err := ParseAllowlist(s)
	if err != nil {
		panic(err)
	}
	return a
}

func (a *Allowlist) add(e string) error {
	if strings.Contains(e, "/") {
		p, err := netip.ParsePrefix(e)
		if err != nil {
			return fmt.Errorf("not a valid CIDR: %v", err)
		}
		a.prefixes = append(a.prefixes, p.Masked())
		return nil
	}
	if ip, err := netip.ParseAddr(e); err == nil {
		a.prefixes = append(a.prefixes, netip.PrefixFrom(ip.WithZone(""), ip.BitLen()))
		return nil
	}
	host, portStr, err := net.SplitHostPort(e)
	if err != nil {
		return fmt.Errorf("give a CIDR, an IP, or host:port")
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil || port == 0 {
		return fmt.Errorf("port %q is not a number from 1 to 65535", portStr)
	}
	h := normalizeHost(host)
	if h == "" || strings.ContainsAny(h, " /?#@") {
		return fmt.Errorf("host %q is not a valid host", host)
	}
	if a.hostPorts == nil {
		a.hostPorts = map[hostPort]struct{}{}
	}
	a.hostPorts[hostPort{h, uint16(port)}] = struct{}{}
	return nil
}

// Empty reports whether the allowlist permits nothing.
func (a Allowlist) Empty() bool { return len(a.prefixes) == 0 && len(a.hostPorts) == 0 }

// Allows reports whether the operator permitted connecting to ip:port, reached through the name host
// ("" when the target was an IP).
func (a Allowlist) Allows(host string, ip netip.Addr, port uint16) bool {
	ip = ip.WithZone("")
	for _, p := range a.prefixes {
		if p.Contains(ip) || p.Contains(ip.Unmap()) {
			return true
		}
	}
	if len(a.hostPorts) == 0 {
		return false
	}
	if host != "" {
		if _, ok := a.hostPorts[hostPort{normalizeHost(host), port}]; ok {
			return true
		}
	}
	for _, h := range []string{ip.String(), ip.Unmap().String()} {
		if _, ok := a.hostPorts[hostPort{h, port}]; ok {
			return true
		}
	}
	return false
}

// normalizeHost gives the form allowlist entries are compared in: an IP (any form ParseHostIP reads)
// as its canonical string, a name in lower case without a trailing dot.
func normalizeHost(h string) string {
	if ip, _, ok := ParseHostIP(h); ok {
		return ip.WithZone("").String()
	}
	return strings.TrimSuffix(strings.ToLower(h), ".")
}
