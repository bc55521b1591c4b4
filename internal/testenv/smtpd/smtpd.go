// Package smtpd is a real SMTP server for tests (github.com/emersion/go-smtp) on loopback.
//
// It offers STARTTLS on a certificate generated for 127.0.0.1, ::1 and localhost, and AUTH PLAIN
// and LOGIN only after STARTTLS. It keeps every message it accepts so a test can check what arrived.
package smtpd

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Message is one message the server accepted.
type Message struct {
	From string
	To   []string
	Data []byte
	User string // who authenticated
	TLS  bool   // whether the session was encrypted when the message arrived
}

// Server is a running test SMTP server.
type Server struct {
	// Addr is the listening address, 127.0.0.1:port.
	Addr netip.AddrPort
	// RootCAs trusts the server's certificate, for the client's tls.Config.
	RootCAs *x509.CertPool
	// CAPEM is the same certificate in PEM, for code that reads trust from a file.
	CAPEM []byte

	cfg       config
	close     func()
	closeOnce sync.Once
	mu        sync.Mutex
	msgs      []Message
}

type config struct {
	users      map[string]string
	mechs      []string
	noTLS      bool
	tempFail   bool
	implicit   bool
	maxMessage int64
	addr       string
	errorLog   smtp.Logger
}

// Option configures a Server.
type Option func(*config)

// WithUser adds an account (default: user "alice", password "secret").
func WithUser(name, password string) Option {
	return func(c *config) { c.users[name] = password }
}

// WithMechanisms sets the AUTH mechanisms offered, from sasl.Plain and sasl.Login (default both).
func WithMechanisms(m ...string) Option { return func(c *config) { c.mechs = m } }

// WithoutSTARTTLS makes a server that offers no STARTTLS (a client must refuse to log in to it).
func WithoutSTARTTLS() Option { return func(c *config) { c.noTLS = true } }

// WithTempFailure makes the server answer every MAIL FROM with 451, a temporary failure.
func WithTempFailure() Option { return func(c *config) { c.tempFail = true } }

// WithImplicitTLS makes the listener speak TLS from the first byte (SMTPS, as on port 465).
func WithImplicitTLS() Option { return func(c *config) { c.implicit = true } }

// WithAddr listens on addr instead of 127.0.0.1:0 (a test of port 465 needs that port).
func WithAddr(addr string) Option { return func(c *config) { c.addr = addr } }

// Listen is Start that reports a failure to listen instead of failing the test (a fixed port can
// be taken).
func Listen(t testing.TB, opts ...Option) (*Server, error) {
	t.Helper()
	return start(t, opts...)
}

// Start runs a server on 127.0.0.1 until the test ends.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s, err := start(t, opts...)
	if err != nil {
		t.Fatalf("smtpd: %v", err)
	}
	return s
}

func start(t testing.TB, opts ...Option) (*Server, error) {
	s, err := New(append(opts, withErrorLog(testLogger{t}))...)
	if err != nil {
		return nil, err
	}
	t.Cleanup(s.Close)
	return s, nil
}

// withErrorLog sets where the server's own errors (a client hanging up) go; New discards them.
func withErrorLog(l smtp.Logger) Option { return func(c *config) { c.errorLog = l } }

// New runs a server on 127.0.0.1 until Close, outside a test (the demo runs one).
func New(opts ...Option) (*Server, error) {
	cfg := config{users: map[string]string{}, mechs: []string{sasl.Plain, sasl.Login}, maxMessage: 10 << 20, addr: "127.0.0.1:0",
		errorLog: log.New(io.Discard, "", 0)}
	for _, o := range opts {
		o(&cfg)
	}
	if len(cfg.users) == 0 {
		cfg.users["alice"] = "secret"
	}
	cert, pool, err := selfSigned()
	if err != nil {
		return nil, fmt.Errorf("certificate: %w", err)
	}
	s := &Server{RootCAs: pool, CAPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), cfg: cfg}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &session{srv: s, conn: c}, nil
	}))
	srv.Domain = "localhost"
	srv.MaxMessageBytes = cfg.maxMessage
	srv.ReadTimeout = 30 * time.Second
	srv.WriteTimeout = 30 * time.Second
	srv.ErrorLog = cfg.errorLog
	tlsCfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if !cfg.noTLS {
		srv.TLSConfig = tlsCfg
	}
	var ln net.Listener
	if cfg.implicit {
		ln, err = tls.Listen("tcp4", cfg.addr, tlsCfg)
	} else {
		ln, err = net.Listen("tcp4", cfg.addr)
	}
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	s.Addr = netip.MustParseAddrPort(ln.Addr().String())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	s.close = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		_ = srv.Close()
		<-done
	}
	return s, nil
}

// Close stops the server and waits for it.
func (s *Server) Close() { s.closeOnce.Do(s.close) }

// Messages returns a copy of what arrived so far.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// Reset forgets the messages (benchmarks keep the memory flat with it).
func (s *Server) Reset() {
	s.mu.Lock()
	s.msgs = nil
	s.mu.Unlock()
}

type session struct {
	srv  *Server
	conn *smtp.Conn
	user string
	from string
	to   []string
}

var _ smtp.AuthSession = (*session)(nil)

func (s *session) AuthMechanisms() []string { return s.srv.cfg.mechs }

func (s *session) Auth(mech string) (sasl.Server, error) {
	check := func(user, pass string) error {
		want, ok := s.srv.cfg.users[user]
		if !ok || want != pass {
			return smtp.ErrAuthFailed
		}
		s.user = user
		return nil
	}
	switch mech {
	case sasl.Plain:
		return sasl.NewPlainServer(func(identity, user, pass string) error {
			if identity != "" && identity != user {
				return smtp.ErrAuthFailed
			}
			return check(user, pass)
		}), nil
	case sasl.Login:
		return &loginServer{check: check}, nil
	}
	return nil, smtp.ErrAuthUnknownMechanism
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if s.user == "" {
		return smtp.ErrAuthRequired
	}
	if s.srv.cfg.tempFail {
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try again later"}
	}
	s.from = from
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if s.user == "" {
		return smtp.ErrAuthRequired
	}
	s.to = append(s.to, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	if s.user == "" {
		return smtp.ErrAuthRequired
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	_, tlsOn := s.conn.TLSConnectionState()
	s.srv.mu.Lock()
	s.srv.msgs = append(s.srv.msgs, Message{From: s.from, To: s.to, Data: b, User: s.user, TLS: tlsOn})
	s.srv.mu.Unlock()
	return nil
}

func (s *session) Reset()        { s.from, s.to = "", nil }
func (s *session) Logout() error { return nil }

// loginServer is the server side of AUTH LOGIN (draft-murchison-sasl-login), which go-sasl no
// longer ships: two prompts, user name then password.
type loginServer struct {
	check func(user, pass string) error
	user  string
	step  int
}

func (l *loginServer) Next(response []byte) (challenge []byte, done bool, err error) {
	switch l.step {
	case 0:
		l.step = 1
		if response != nil { // initial response carries the user name
			l.user = string(response)
			l.step = 2
			return []byte("Password:"), false, nil
		}
		return []byte("Username:"), false, nil
	case 1:
		l.user = string(response)
		l.step = 2
		return []byte("Password:"), false, nil
	case 2:
		l.step = 3
		return nil, true, l.check(l.user, string(response))
	}
	return nil, false, errors.New("unexpected response")
}

// selfSigned makes a CA-flagged self-signed certificate for the loopback names and a pool trusting it.
func selfSigned() (tls.Certificate, *x509.CertPool, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "sinew smtpd test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool, nil
}

type testLogger struct{ t testing.TB }

func (l testLogger) Printf(format string, v ...any) { l.t.Logf("smtpd: "+format, v...) }
func (l testLogger) Println(v ...any)               { l.t.Log(append([]any{"smtpd:"}, v...)...) }
