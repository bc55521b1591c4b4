package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// mailServer is the demo's SMTP submission server on loopback (github.com/emersion/go-smtp): it
// offers STARTTLS on a certificate made for 127.0.0.1, and AUTH PLAIN only after STARTTLS, for one
// account, as a real submission server does; the email integration verifies that certificate
// against the CA file local mode is given (SINEW_EMAIL_CA_FILE). It keeps what arrives.
type mailServer struct {
	addr   *net.TCPAddr
	caFile string // the certificate in PEM, for SINEW_EMAIL_CA_FILE
	user   string
	pass   string
	srv    *smtp.Server

	mu   sync.Mutex
	msgs []mailMsg
}

// mailMsg is one message the server accepted.
type mailMsg struct {
	From string
	To   []string
	Data []byte
	User string
	TLS  bool
}

// startMailServer listens on 127.0.0.1 and writes its certificate to dir/smtp-ca.pem.
func startMailServer(dir, user, pass string) (*mailServer, error) {
	cert, err := loopbackCert()
	if err != nil {
		return nil, fmt.Errorf("making the SMTP server's certificate: %w", err)
	}
	caFile := filepath.Join(dir, "smtp-ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o600); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &mailServer{addr: ln.Addr().(*net.TCPAddr), caFile: caFile, user: user, pass: pass}
	s := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &mailSession{m: m, conn: c}, nil
	}))
	s.Domain = "localhost"
	s.MaxMessageBytes = 1 << 20
	s.ReadTimeout = 30 * time.Second
	s.WriteTimeout = 30 * time.Second
	s.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	// The server's own errors (a client hanging up) are not the demo's output.
	s.ErrorLog = log.New(io.Discard, "", 0)
	m.srv = s
	go func() { _ = s.Serve(ln) }()
	return m, nil
}

// messages returns a copy of what arrived so far.
func (m *mailServer) messages() []mailMsg {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]mailMsg(nil), m.msgs...)
}

func (m *mailServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_ = m.srv.Shutdown(ctx)
	_ = m.srv.Close()
}

type mailSession struct {
	m    *mailServer
	conn *smtp.Conn
	user string
	from string
	to   []string
}

var _ smtp.AuthSession = (*mailSession)(nil)

func (s *mailSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *mailSession) Auth(mech string) (sasl.Server, error) {
	if mech != sasl.Plain {
		return nil, smtp.ErrAuthUnknownMechanism
	}
	return sasl.NewPlainServer(func(identity, user, pass string) error {
		if (identity != "" && identity != user) || user != s.m.user || pass != s.m.pass {
			return smtp.ErrAuthFailed
		}
		s.user = user
		return nil
	}), nil
}

func (s *mailSession) Mail(from string, _ *smtp.MailOptions) error {
	if s.user == "" {
		return smtp.ErrAuthRequired
	}
	s.from = from
	return nil
}

func (s *mailSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	if s.user == "" {
		return smtp.ErrAuthRequired
	}
	s.to = append(s.to, to)
	return nil
}

func (s *mailSession) Data(r io.Reader) error {
	if s.user == "" {
		return smtp.ErrAuthRequired
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	_, tlsOn := s.conn.TLSConnectionState()
	s.m.mu.Lock()
	s.m.msgs = append(s.m.msgs, mailMsg{From: s.from, To: s.to, Data: b, User: s.user, TLS: tlsOn})
	s.m.mu.Unlock()
	return nil
}

func (s *mailSession) Reset()        { s.from, s.to = "", nil }
func (s *mailSession) Logout() error { return nil }

// loopbackCert is a self-signed certificate for 127.0.0.1 and localhost, valid for a day.
func loopbackCert() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "sinew demo SMTP server"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
