package openapitools

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"sinew/internal/fault"
	"sinew/internal/netguard"
)

// serverOf is the URL an operation's path is appended to: base_url when given, else the first
// server of the operation, of its path, or of the document, with its variables' defaults.
func (b *builder) serverOf(o opRef) (string, string) {
	if b.base != "" {
		return b.base, ""
	}
	servers := b.doc.Servers
	if len(o.item.Servers) > 0 {
		servers = o.item.Servers
	}
	if o.op.Servers != nil && len(*o.op.Servers) > 0 {
		servers = *o.op.Servers
	}
	if len(servers) == 0 || servers[0] == nil {
		return "", "the document names no server for it: give base_url, the API's absolute URL"
	}
	raw, why := expand(servers[0])
	if why != "" {
		return "", why
	}
	return b.server(raw)
}

// expand fills a server URL's {variables} with their defaults.
func expand(s *openapi3.Server) (string, string) {
	raw := s.URL
	for name, v := range s.Variables {
		if v == nil {
			continue
		}
		raw = strings.ReplaceAll(raw, "{"+name+"}", v.Default)
	}
	if strings.ContainsAny(raw, "{}") {
		return "", fmt.Sprintf("its server %q has a variable without a default: give base_url", s.URL)
	}
	return raw, ""
}

// server checks a server URL once (the answer is kept): absolute http or https, no credentials,
// query or fragment, and a host the network guard does not refuse. A name is judged by what it
// is (an IP address, or a loopback name), never looked up: the guard checks every address again
// at each call, where it counts.
func (b *builder) server(raw string) (string, string) {
	if why, seen := b.servers[raw]; seen {
		if why != "" {
			return "", why
		}
		return strings.TrimRight(raw, "/"), ""
	}
	why := b.judge(raw)
	b.servers[raw] = why
	if why != "" {
		return "", why
	}
	return strings.TrimRight(raw, "/"), ""
}

func (b *builder) judge(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Sprintf("its server %q is not a URL: give base_url", raw)
	}
	if u.Scheme == "" || u.Host == "" {
		return fmt.Sprintf("its server %q is relative: give base_url, the API's absolute URL", raw)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Sprintf("its server %q is not http or https", raw)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Sprintf("its server %q carries credentials, a query or a fragment, which a tool's URL cannot: give base_url", raw)
	}
	host := u.Hostname()
	port := 443
	if u.Scheme == "http" {
		port = 80
	}
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return fmt.Sprintf("its server %q has an invalid port", raw)
		}
		port = int(n)
	}
	var addr netip.Addr
	if netguard.IsLoopbackName(host) {
		addr = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	} else if ip, _, ok := netguard.ParseHostIP(host); ok {
		addr = ip
	} else {
		return ""
	}
	if err := b.guard.Check(host, netip.AddrPortFrom(addr, uint16(port))); err != nil {
		return fmt.Sprintf("its server %s is refused by sinew's network guard (%s)", u.Host, fault.Message(err))
	}
	return ""
}
