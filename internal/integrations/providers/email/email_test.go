package email_test

import (
	"bytes"
	"context"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-sasl"

	"sinew/internal/fault"
	"sinew/internal/integrations/providers/email"
	"sinew/internal/netguard"
	"sinew/internal/netguard/netguardtest"
	"sinew/internal/testenv/smtpd"
)

// loopbackGuard allows 127.0.0.1 only, with the tripwire keeping every connection on loopback.
func loopbackGuard(t testing.TB) *netguard.Policy {
	trip, _ := netguardtest.Tripwire(t)
	return netguard.New(netguard.WithAllowlist(netguard.MustParseAllowlist("127.0.0.1/32")), trip)
}

func setupFor(s *smtpd.Server) email.Setup {
	return email.Setup{Host: s.Addr.Addr().String(), Port: int32(s.Addr.Port()), User: "alice", Password: "secret"}
}

var plainArgs = email.SendArguments{To: "bob@example.com", From: "Alice <alice@example.com>", Subject: "Héllo there", Body: "line one\nline two — ünïcode"}

// parse reads an arrived message and decodes its subject and quoted-printable body.
func parse(t *testing.T, data []byte) (*mail.Message, string, string) {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("arrived message does not parse: %v\n%s", err, data)
	}
	subj, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	if err != nil {
		t.Fatalf("subject: %v", err)
	}
	if m.Header.Get("Content-Transfer-Encoding") != "quoted-printable" {
		t.Fatalf("transfer encoding %q", m.Header.Get("Content-Transfer-Encoding"))
	}
	body, err := io.ReadAll(quotedprintable.NewReader(m.Body))
	if err != nil {
		t.Fatalf("body: %v", err)
	}
	return m, subj, string(body)
}

func TestSendDelivers(t *testing.T) {
	tests := []struct {
		name     string
		mechs    []string
		args     email.SendArguments
		wantTo   []string
		wantType string
	}{
		{"plain text over AUTH PLAIN", []string{sasl.Plain, sasl.Login}, plainArgs, []string{"bob@example.com"}, "text/plain"},
		{"AUTH LOGIN when only it is offered", []string{sasl.Login}, plainArgs, []string{"bob@example.com"}, "text/plain"},
		{"html body", []string{sasl.Plain}, email.SendArguments{To: "bob@example.com", From: "alice@example.com", Subject: "report", Body: "<P>Hi</p><br>"}, []string{"bob@example.com"}, "text/html"},
		{"several recipients", []string{sasl.Plain}, email.SendArguments{To: "bob@example.com, Carol <carol@example.org>", From: "alice@example.com", Subject: "s", Body: "b"}, []string{"bob@example.com", "carol@example.org"}, "text/plain"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := smtpd.Start(t, smtpd.WithMechanisms(tc.mechs...))
			env := email.Env{Guard: loopbackGuard(t), RootCAs: srv.RootCAs}
			out, err := email.Send(context.Background(), env, setupFor(srv), tc.args)
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			if !out.Success {
				t.Fatal("Success = false")
			}
			msgs := srv.Messages()
			if len(msgs) != 1 {
				t.Fatalf("%d messages arrived, want 1", len(msgs))
			}
			got := msgs[0]
			if !got.TLS || got.User != "alice" {
				t.Errorf("arrived with TLS=%v user=%q, want TLS and alice", got.TLS, got.User)
			}
			from, _ := mail.ParseAddress(tc.args.From)
			if got.From != from.Address {
				t.Errorf("MAIL FROM %q, want %q", got.From, from.Address)
			}
			if strings.Join(got.To, ",") != strings.Join(tc.wantTo, ",") {
				t.Errorf("RCPT TO %v, want %v", got.To, tc.wantTo)
			}
			m, subj, body := parse(t, got.Data)
			if subj != tc.args.Subject {
				t.Errorf("subject %q, want %q", subj, tc.args.Subject)
			}
			// SMTP ends the data with a line break, which is not part of what was sent.
			if want := strings.ReplaceAll(tc.args.Body, "\n", "\r\n"); strings.TrimSuffix(body, "\r\n") != want {
				t.Errorf("body %q, want %q", body, want)
			}
			mt, params, _ := mime.ParseMediaType(m.Header.Get("Content-Type"))
			if mt != tc.wantType || params["charset"] != "utf-8" {
				t.Errorf("content type %q %v, want %s utf-8", mt, params, tc.wantType)
			}
			if m.Header.Get("Message-Id") == "" || m.Header.Get("Date") == "" {
				t.Errorf("missing Message-ID or Date: %v", m.Header)
			}
		})
	}
}

// The implicit-TLS path runs on any port the test can bind: Env.ImplicitTLSPort names it (465 by
// default, which needs privileges to bind), and the same server spoken to with STARTTLS fails.
func TestSendImplicitTLS(t *testing.T) {
	srv, err := smtpd.Listen(t, smtpd.WithImplicitTLS())
	if err != nil {
		t.Fatal(err)
	}
	env := email.Env{Guard: loopbackGuard(t), RootCAs: srv.RootCAs, ImplicitTLSPort: int32(srv.Addr.Port()), Timeout: 5 * time.Second}
	if _, err := email.Send(context.Background(), env, setupFor(srv), plainArgs); err != nil {
		t.Fatalf("Send over SMTPS: %v", err)
	}
	if msgs := srv.Messages(); len(msgs) != 1 || !msgs[0].TLS {
		t.Fatalf("arrived: %+v", msgs)
	}
	env.ImplicitTLSPort, env.Timeout = 0, time.Second // port 465 only: this port gets STARTTLS, which an SMTPS server does not answer
	if _, err := email.Send(context.Background(), env, setupFor(srv), plainArgs); err == nil {
		t.Fatal("STARTTLS to an SMTPS server succeeded")
	}
	if n := len(srv.Messages()); n != 1 {
		t.Fatalf("%d messages arrived, want 1", n)
	}
}

func TestSendFailuresAreTyped(t *testing.T) {
	closedPort := func(t *testing.T) int32 {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := ln.Addr().(*net.TCPAddr).Port
		_ = ln.Close()
		return int32(p)
	}
	tests := []struct {
		name    string
		server  []smtpd.Option // nil: no server
		trust   bool
		mutate  func(t *testing.T, s *email.Setup)
		kind    fault.Kind
		message string
	}{
		{"wrong password", []smtpd.Option{}, true, func(_ *testing.T, s *email.Setup) { s.Password = "wrong" }, fault.Provider, "refused the login"},
		{"unknown user", []smtpd.Option{}, true, func(_ *testing.T, s *email.Setup) { s.User = "mallory" }, fault.Provider, "check setup.user and setup.password"},
		{"no STARTTLS", []smtpd.Option{smtpd.WithoutSTARTTLS()}, true, nil, fault.Provider, "offers no STARTTLS"},
		{"untrusted certificate", []smtpd.Option{}, false, nil, fault.Provider, "does not verify"},
		{"temporary failure", []smtpd.Option{smtpd.WithTempFailure()}, true, nil, fault.Transient, "temporary failure 451"},
		{"connection refused", nil, true, func(t *testing.T, s *email.Setup) { s.Host, s.Port = "127.0.0.1", closedPort(t) }, fault.Transient, "could not connect"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var setup email.Setup
			env := email.Env{Guard: netguard.New(netguard.WithAllowlist(netguard.MustParseAllowlist("127.0.0.0/8")))}
			if tc.server != nil {
				srv := smtpd.Start(t, tc.server...)
				setup = setupFor(srv)
				if tc.trust {
					env.RootCAs = srv.RootCAs
				} else {
					env.RootCAs = nil // the system roots do not know the test CA
				}
				defer func() {
					if n := len(srv.Messages()); n != 0 {
						t.Errorf("%d messages arrived despite the failure", n)
					}
				}()
			} else {
				setup = email.Setup{User: "alice", Password: "secret"}
			}
			if tc.mutate != nil {
				tc.mutate(t, &setup)
			}
			_, err := email.Send(context.Background(), env, setup, plainArgs)
			if !fault.Is(err, tc.kind) {
				t.Fatalf("err = %v (kind %s), want %s", err, fault.KindOf(err), tc.kind)
			}
			if !strings.Contains(fault.Message(err), tc.message) {
				t.Errorf("message %q does not say %q", fault.Message(err), tc.message)
			}
			if strings.Contains(fault.Message(err), "secret") || strings.Contains(fault.Message(err), "wrong") {
				t.Errorf("message leaks the password: %q", fault.Message(err))
			}
		})
	}
}

func TestSendCertificateForAnotherName(t *testing.T) {
	// The certificate names 127.0.0.1, ::1 and localhost; a server reached as 127.0.0.2 must fail
	// verification even though its CA is trusted.
	srv, err := smtpd.Listen(t, smtpd.WithAddr("127.0.0.2:0"))
	if err != nil {
		t.Skipf("SKIPPED: cannot listen on 127.0.0.2: %v", err)
	}
	env := email.Env{Guard: netguard.New(netguard.WithAllowlist(netguard.MustParseAllowlist("127.0.0.0/8"))), RootCAs: srv.RootCAs}
	_, err = email.Send(context.Background(), env, setupFor(srv), plainArgs)
	if !fault.Is(err, fault.Provider) || !strings.Contains(fault.Message(err), "does not verify") {
		t.Fatalf("err = %v (kind %s), want Provider: certificate does not verify", err, fault.KindOf(err))
	}
	if len(srv.Messages()) != 0 {
		t.Fatal("a message arrived over an unverified connection")
	}
}

func TestSendSilentServer(t *testing.T) {
	// A server that accepts and never greets. The provider's own bound running out is transient
	// (retry later); the caller's deadline running out is a Timeout.
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	setup := email.Setup{Host: "127.0.0.1", Port: int32(ln.Addr().(*net.TCPAddr).Port), User: "a", Password: "b"}
	tests := []struct {
		name    string
		timeout time.Duration // the provider's bound
		caller  time.Duration // the caller's deadline
		kind    fault.Kind
	}{
		{"provider bound", 300 * time.Millisecond, time.Minute, fault.Transient},
		{"caller deadline", time.Minute, 300 * time.Millisecond, fault.Timeout},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), tc.caller)
			defer cancel()
			env := email.Env{Guard: loopbackGuard(t), Timeout: tc.timeout}
			_, err := email.Send(ctx, env, setup, plainArgs)
			if !fault.Is(err, tc.kind) {
				t.Fatalf("err = %v (kind %s), want %s", err, fault.KindOf(err), tc.kind)
			}
		})
	}
}

func TestSendRefusedByGuard(t *testing.T) {
	canary := netguardtest.NewCanary(t)
	trip, dialed := netguardtest.Tripwire(t)
	env := email.Env{Guard: netguard.New(netguard.WithResolver(netguardtest.Resolver()), trip)}
	for _, host := range []string{"127.0.0.1", "localhost", "evil.test", "169.254.169.254", "10.0.0.1", "::1"} {
		setup := email.Setup{Host: host, Port: int32(canary.V4.Addr.Port()), User: "alice", Password: "secret"}
		_, err := email.Send(context.Background(), env, setup, plainArgs)
		if !fault.Is(err, fault.Forbidden) {
			t.Errorf("%s: err = %v (kind %s), want Forbidden", host, err, fault.KindOf(err))
		}
	}
	if canary.Accepted() != 0 || dialed.Load() != 0 {
		t.Fatalf("refused targets were reached: %d accepted, %d dialed", canary.Accepted(), dialed.Load())
	}
}

func TestValidationNamesTheField(t *testing.T) {
	good := email.Setup{Host: "smtp.example.com", Port: 587, User: "u", Password: "p"}
	tests := []struct {
		name  string
		setup func(*email.Setup)
		args  func(*email.SendArguments)
		field string
	}{
		{"no host", func(s *email.Setup) { s.Host = "" }, nil, "setup.host"},
		{"host with scheme", func(s *email.Setup) { s.Host = "smtp://x/" }, nil, "setup.host"},
		{"port zero", func(s *email.Setup) { s.Port = 0 }, nil, "setup.port"},
		{"port too big", func(s *email.Setup) { s.Port = 70000 }, nil, "setup.port"},
		{"no user", func(s *email.Setup) { s.User = "" }, nil, "setup.user"},
		{"no password", func(s *email.Setup) { s.Password = "" }, nil, "setup.password"},
		{"no to", nil, func(a *email.SendArguments) { a.To = "" }, "to"},
		{"bad to", nil, func(a *email.SendArguments) { a.To = "not an address" }, "to"},
		{"to injection", nil, func(a *email.SendArguments) { a.To = "bob@example.com\r\nBcc: eve@example.com" }, "to"},
		{"no from", nil, func(a *email.SendArguments) { a.From = " " }, "from"},
		{"two froms", nil, func(a *email.SendArguments) { a.From = "a@example.com, b@example.com" }, "from"},
		{"subject injection", nil, func(a *email.SendArguments) { a.Subject = "hi\r\nBcc: eve@example.com" }, "subject"},
		{"no subject", nil, func(a *email.SendArguments) { a.Subject = "" }, "subject"},
		{"no body", nil, func(a *email.SendArguments) { a.Body = "" }, "body"},
	}
	// The guard refuses everything: validation must fail before any dial.
	env := email.Env{Guard: netguard.New()}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, a := good, plainArgs
			if tc.setup != nil {
				tc.setup(&s)
			}
			if tc.args != nil {
				tc.args(&a)
			}
			_, err := email.Send(context.Background(), env, s, a)
			if !fault.Is(err, fault.InvalidInput) || fault.FieldOf(err) != tc.field {
				t.Fatalf("err = %v (kind %s, field %q), want InvalidInput on %s", err, fault.KindOf(err), fault.FieldOf(err), tc.field)
			}
			if !strings.Contains(fault.Message(err), tc.field) && !strings.Contains(fault.Message(err), strings.TrimPrefix(tc.field, "setup.")) {
				t.Errorf("message %q does not name %s", fault.Message(err), tc.field)
			}
		})
	}
}

func TestIsHTML(t *testing.T) {
	for body, want := range map[string]bool{
		"plain":                    false,
		"a < b and c > d":          false,
		"<P>para</p>":              true,
		"see <a href='x'>here</a>": true,
		"<H3>t</h3>":               true,
		"x<br/>y":                  true,
		"<table></table>":          true,
		"<pre>code</pre>":          false,
	} {
		if got := email.IsHTML(body); got != want {
			t.Errorf("IsHTML(%q) = %v, want %v", body, got, want)
		}
	}
}

func BenchmarkSend(b *testing.B) {
	srv := smtpd.Start(b)
	env := email.Env{Guard: netguard.New(netguard.WithAllowlist(netguard.MustParseAllowlist("127.0.0.1/32"))), RootCAs: srv.RootCAs}
	setup := setupFor(srv)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := email.Send(ctx, env, setup, plainArgs); err != nil {
			b.Fatal(err)
		}
		if i%256 == 0 {
			srv.Reset()
		}
	}
}
