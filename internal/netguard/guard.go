// Package netguard is the guarded dialer every outgoing connection of every executor and provider goes
// through. It refuses, before any packet is sent, every address that is not a public
// unicast address: loopback, private, link-local and the metadata address, CGNAT, unspecified,
// multicast, broadcast, reserved, documentation and benchmarking ranges, IPv6 unique-local and
// link-local, and the IPv6 forms that carry a refused IPv4 address (mapped, compatible, NAT64, 6to4,
// Teredo). The check runs twice: on every address a name resolves to, before dialing, and in the
// dialer's Control hook on the very address the socket is about to connect to, so DNS rebinding and
// redirects cannot slip past it. The operator's allowlist (SINEW_APICALL_ALLOW) permits chosen targets.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"syscall"
	"time"

	"sinew/internal/fault"
)

// ErrRefused is the cause of every refusal, for errors.Is; the fault.Forbidden around it says why.
var ErrRefused = errors.New("refused by the network guard")

// Resolver looks names up. *net.Resolver satisfies it; tests use StaticResolver so no DNS is asked.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// StaticResolver maps names (lower case, no trailing dot) to chosen addresses; an unknown name is
// "not found". It lets a test show that evil.test → 127.0.0.1 is refused without DNS.
type StaticResolver map[string][]netip.Addr

// LookupNetIP implements Resolver.
func (r StaticResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	addrs, ok := r[normalizeHost(host)]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []netip.Addr
	for _, a := range addrs {
		if (network == "ip4" && !a.Unmap().Is4()) || (network == "ip6" && !a.Is6()) {
			continue
		}
		out = append(out, a)
	}
	return out, nil
}

// Policy is the guard: an allowlist, a resolver, and the dialer built on them. It is safe for
// concurrent use.
type Policy struct {
	allow    Allowlist
	resolver Resolver
	control  func(network, address string) error
	log      *slog.Logger
	// connectTimeout bounds one connection attempt when the context has a later deadline.
	connectTimeout time.Duration
}

// Option configures a Policy.
type Option func(*Policy)

// WithAllowlist sets the operator's allowlist (replacing any earlier one).
func WithAllowlist(a Allowlist) Option { return func(p *Policy) { p.allow = a } }

// WithResolver replaces the system resolver.
func WithResolver(r Resolver) Option { return func(p *Policy) { p.resolver = r } }

// WithControl adds a check that runs in the dialer's Control hook after the guard has passed an
// address, just before connect(2). Tests use it as a tripwire: it sees every address that would
// really be connected to, and can refuse it.
func WithControl(f func(network, address string) error) Option {
	return func(p *Policy) { p.control = f }
}

// WithLogger sets the logger for refusals (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(p *Policy) { p.log = l } }

// New makes a Policy. Without WithAllowlist it permits no refused address at all.
func New(opts ...Option) *Policy {
	p := &Policy{resolver: net.DefaultResolver, log: slog.Default(), connectTimeout: 30 * time.Second}
	for _, o := range opts {
		o(p)
	}
	return p
}

// FromEnv makes a Policy whose allowlist is SINEW_APICALL_ALLOW; opts apply after it.
func FromEnv(opts ...Option) (*Policy, error) {
	a, err := ParseAllowlist(os.Getenv(EnvAllow))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvAllow, err)
	}
	return New(append([]Option{WithAllowlist(a)}, opts...)...), nil
}

// Check is the guard's decision for connecting to ap, reached through the name host ("" or the IP
// itself when there was no name): nil when permitted, else a fault.Forbidden naming the address and
// the reason. It sends nothing.
func (p *Policy) Check(host string, ap netip.AddrPort) error {
	addr := ap.Addr()
	if p.allow.Allows(host, addr, ap.Port()) {
		return nil
	}
	why, refused := Classify(addr)
	if !refused {
		return nil
	}
	shown := addr.WithZone("").String()
	var msg string
	if host != "" && normalizeHost(host) != shown {
		msg = fmt.Sprintf("refused: %s resolves to %s, %s; an operator may allow it with %s", host, shown, why, EnvAllow)
	} else {
		msg = fmt.Sprintf("refused: %s is %s; an operator may allow it with %s", shown, why, EnvAllow)
	}
	p.log.Warn("netguard refused a connection", "host", host, "addr", shown, "port", ap.Port(), "reason", why)
	return &fault.Error{Kind: fault.Forbidden, Msg: msg, Err: ErrRefused}
}

// DialContext dials a TCP address ("host:port") through the guard: it resolves the host, refuses the
// whole dial if any address it resolves to is refused (a name that mixes public and internal
// addresses is an attack, not a configuration), and dials the addresses in turn with the Control
// hook re-checking each one just before connect. Errors are typed: Forbidden for refusals, Transient
// for DNS failures and refused or reset connections; a context error comes back as it is.
func (p *Policy) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, &fault.Error{Kind: fault.Forbidden, Msg: fmt.Sprintf("refused: network %q is not TCP", network), Err: ErrRefused}
	}
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidInput, err, "invalid address %q", address)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidInput, err, "invalid port in %q", address)
	}
	addrs, err := p.resolve(ctx, network, host)
	if err != nil {
		return nil, err
	}
	for _, a := range addrs {
		if err := p.Check(host, netip.AddrPortFrom(a, uint16(port))); err != nil {
			return nil, err
		}
	}
	d := net.Dialer{Timeout: p.connectTimeout, Control: p.controlFor(host)}
	var firstErr error
	for _, a := range addrs {
		target := netip.AddrPortFrom(a, uint16(port)).String()
		conn, err := d.DialContext(ctx, network, target)
		if err == nil {
			return conn, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("connecting to %s: %w", address, ctx.Err())
		}
		var fe *fault.Error
		if errors.As(err, &fe) {
			return nil, fe // the Control hook refused: no other address is worth trying
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, fault.Wrap(fault.Transient, firstErr, "could not connect to %s", address)
}

func (p *Policy) resolve(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if ip, numeric, ok := ParseHostIP(host); ok {
		return []netip.Addr{ip}, nil
	} else if numeric {
		// Not an IP and not a name: never let a resolver guess what it means.
		return nil, &fault.Error{Kind: fault.Forbidden, Msg: fmt.Sprintf("refused: host %q looks like a numeric IPv4 address but is not a valid one", host), Err: ErrRefused}
	}
	ipNet := "ip"
	switch network {
	case "tcp4":
		ipNet = "ip4"
	case "tcp6":
		ipNet = "ip6"
	}
	if IsLoopbackName(host) {
		return []netip.Addr{loopbackAddr(host, ipNet)}, nil
	}
	addrs, err := p.resolver.LookupNetIP(ctx, ipNet, host)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("resolving %s: %w", host, ctx.Err())
		}
		return nil, fault.Wrap(fault.Transient, err, "could not resolve %s", host)
	}
	if len(addrs) == 0 {
		return nil, fault.New(fault.Transient, "could not resolve %s: no addresses", host)
	}
	return addrs, nil
}

// controlFor is the net.Dialer Control hook: it runs after the socket is made and before connect, on
// the address actually being connected to.
func (p *Policy) controlFor(host string) func(network, address string, _ syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		if network != "tcp4" && network != "tcp6" {
			return &fault.Error{Kind: fault.Forbidden, Msg: fmt.Sprintf("refused: network %q is not TCP", network), Err: ErrRefused}
		}
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return &fault.Error{Kind: fault.Forbidden, Msg: fmt.Sprintf("refused: cannot read address %q", address), Err: ErrRefused}
		}
		if err := p.Check(host, ap); err != nil {
			return err
		}
		if p.control != nil {
			return p.control(network, address)
		}
		return nil
	}
}

// NewTransport makes an http.Transport that dials only through the guard, with no proxy (a proxy from
// the environment would hide the real target from the guard) and bounded response headers.
func (p *Policy) NewTransport() *http.Transport {
	return &http.Transport{
		Proxy:                  nil,
		DialContext:            p.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           64,
		MaxIdleConnsPerHost:    8,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 1 << 20,
	}
}

// RedirectPolicy is an http.Client CheckRedirect function: it follows at most max redirects (none
// when max <= 0, returning the 3xx as the response), only to http and https URLs. Each hop is dialed
// through the transport, so the guard checks it again.
func RedirectPolicy(max int) func(req *http.Request, via []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if max <= 0 {
			return http.ErrUseLastResponse
		}
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			return &fault.Error{Kind: fault.Forbidden, Msg: fmt.Sprintf("refused: a redirect to a %q URL; only http and https are followed", req.URL.Scheme), Err: ErrRefused}
		}
		if len(via) > max {
			return &TooManyRedirectsError{Max: max}
		}
		return nil
	}
}

// TooManyRedirectsError stops a chain of redirects longer than the bound.
type TooManyRedirectsError struct{ Max int }

func (e *TooManyRedirectsError) Error() string {
	return fmt.Sprintf("stopped after %d redirects", e.Max)
}

// NewClient makes an http.Client over t (a transport from NewTransport) that follows at most
// maxRedirects redirects. Bound its time with the request's context.
func NewClient(t http.RoundTripper, maxRedirects int) *http.Client {
	return &http.Client{Transport: t, CheckRedirect: RedirectPolicy(maxRedirects)}
}
