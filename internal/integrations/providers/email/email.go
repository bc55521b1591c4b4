// Package email is the email integration, after Julep's
// (https://github.com/julep-ai/julep/blob/28a2bb22f6b69232f98dede2ee4109f2fde1d927/integrations-service/integrations/utils/integrations/email.py):
// method send delivers one message over SMTP with STARTTLS and AUTH, through the network guard. It
// runs no program and reads no file a caller names: the only connection it makes is the guarded
// dial to setup.host.
//
// Where sinew differs from Julep: the TLS certificate is verified (against the system roots, or the
// operator's trust in Env.RootCAs), and a server that offers no STARTTLS is refused rather than sent
// the password in the clear; port 465 speaks implicit TLS (SMTPS), which Julep cannot; failures are
// typed errors (a refused login or address is Sinew.Provider, a dropped connection or a 4xx reply is
// Sinew.Transient) rather than retried in a loop of its own; headers are checked so a subject or
// address cannot inject more headers.
//
// Julep's provider, which this one ports: https://github.com/julep-ai/julep/blob/5371a620af2582868eb121e6489a8cc14836fd50/src/integrations-service/integrations/utils/integrations/email.py
package email

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"sinew/internal/fault"
	"sinew/internal/netguard"
)

// Setup is the provider's setup: the SMTP submission server and the account (all required).
type Setup struct {
	Host     string `json:"host" jsonschema_description:"SMTP server host name or IP address" sinew:"endpoint"`
	Port     int32  `json:"port" jsonschema:"minimum=1,maximum=65535" jsonschema_description:"SMTP port: 587 (STARTTLS) or 465 (implicit TLS), or 25" sinew:"endpoint"`
	User     string `json:"user" jsonschema_description:"SMTP account user name" sinew:"secret"`
	Password string `json:"password" jsonschema_description:"SMTP account password" sinew:"secret"`
}

// SendArguments are the arguments of send (all required).
type SendArguments struct {
	To      string `json:"to" jsonschema_description:"recipient address, or several separated by commas"`
	From    string `json:"from" jsonschema_description:"sender address"`
	Subject string `json:"subject" jsonschema_description:"subject line"`
	Body    string `json:"body" jsonschema_description:"message body; sent as HTML when it contains HTML tags, else as plain text"`
}

// SendOutput is send's result, as Julep's EmailOutput.
type SendOutput struct {
	Success bool `json:"success"`
}

// Env is what the provider takes from its surroundings.
type Env struct {
	// Guard dials every connection (required).
	Guard *netguard.Policy
	// RootCAs verifies the server's certificate; nil means the system roots.
	RootCAs *x509.CertPool
	// Timeout bounds one send when the context has no earlier deadline (default 60 s).
	Timeout time.Duration
	// LocalName is sent in EHLO (default "localhost").
	LocalName string
	Log       *slog.Logger
	// Now stamps the Date header (default time.Now).
	Now func() time.Time
	// ImplicitTLSPort is the port that speaks TLS from the first byte (default 465, SMTPS); every
	// other port uses STARTTLS. Tests that cannot bind 465 serve SMTPS on another port.
	ImplicitTLSPort int32
}

// implicitTLS tells whether port speaks implicit TLS under env.
func (env Env) implicitTLS(port int32) bool {
	if env.ImplicitTLSPort == 0 {
		return port == 465
	}
	return port == env.ImplicitTLSPort
}

// Validate checks the setup, naming the field at fault.
func (s Setup) Validate() error {
	switch {
	case strings.TrimSpace(s.Host) == "":
		return fault.Invalid("setup.host", "setup.host is required: the SMTP server's host name")
	case strings.ContainsAny(s.Host, " /\r\n@"):
		return fault.Invalid("setup.host", "setup.host must be a bare host name or IP address, without scheme, port or path")
	case s.Port < 1 || s.Port > 65535:
		return fault.Invalid("setup.port", "setup.port must be from 1 to 65535, got %d", s.Port)
	case s.User == "":
		return fault.Invalid("setup.user", "setup.user is required")
	case s.Password == "":
		return fault.Invalid("setup.password", "setup.password is required")
	}
	return nil
}

// Validate checks the arguments, naming the field at fault.
func (a SendArguments) Validate() error {
	if _, err := recipients(a.To); err != nil {
		return err
	}
	if _, err := sender(a.From); err != nil {
		return err
	}
	if strings.ContainsAny(a.Subject, "\r\n") {
		return fault.Invalid("subject", "subject must be one line: it may not contain CR or LF")
	}
	if strings.TrimSpace(a.Subject) == "" {
		return fault.Invalid("subject", "subject is required")
	}
	if a.Body == "" {
		return fault.Invalid("body", "body is required")
	}
	return nil
}

func recipients(to string) ([]*mail.Address, error) {
	if strings.TrimSpace(to) == "" {
		return nil, fault.Invalid("to", "to is required: one address or several separated by commas")
	}
	list, err := mail.ParseAddressList(to)
	if err != nil {
		return nil, fault.Invalid("to", "to must be email addresses separated by commas: %v", err)
	}
	return list, nil
}

func sender(from string) (*mail.Address, error) {
	if strings.TrimSpace(from) == "" {
		return nil, fault.Invalid("from", "from is required: the sender's address")
	}
	a, err := mail.ParseAddress(from)
	if err != nil {
		return nil, fault.Invalid("from", "from must be one email address: %v", err)
	}
	return a, nil
}

// htmlIndicators are Julep's: a body containing one of them (case-insensitively) is sent as HTML.
var htmlIndicators = []string{"<html", "<body", "<div", "<p>", "<br", "<table", "<h1", "<h2", "<h3", "<h4", "<h5", "<h6", "<span", "<a href="}

// IsHTML reports whether body is sent as text/html, by Julep's rule.
func IsHTML(body string) bool {
	lower := strings.ToLower(body)
	for _, s := range htmlIndicators {
		if strings.Contains(lower, s) {
			return true
		}
	}
	return false
}

// Send delivers one message: connect through the guard, STARTTLS (or implicit TLS on 465) with a
// verified certificate, AUTH PLAIN (LOGIN when only that is offered), MAIL, RCPT for each recipient,
// DATA.
func Send(ctx context.Context, env Env, setup Setup, args SendArguments) (SendOutput, error) {
	if env.Guard == nil {
		return SendOutput{}, fault.New(fault.Internal, "email: no network guard configured")
	}
	if err := setup.Validate(); err != nil {
		return SendOutput{}, err
	}
	if err := args.Validate(); err != nil {
		return SendOutput{}, err
	}
	to, _ := recipients(args.To)
	from, _ := sender(args.From)
	now := time.Now
	if env.Now != nil {
		now = env.Now
	}
	msg, err := buildMessage(from, to, args.Subject, args.Body, now())
	if err != nil {
		return SendOutput{}, err
	}
	timeout := env.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	// The provider's own bound (not the caller's): a server that stops answering within it is a
	// transient failure, retried; only the caller's context running out is a Timeout.
	b := bounds{parent: ctx, limit: timeout}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	b.op = ctx

	addr := net.JoinHostPort(setup.Host, strconv.Itoa(int(setup.Port)))
	conn, err := env.Guard.DialContext(ctx, "tcp", addr)
	if err != nil {
		return SendOutput{}, b.dialError(addr, err)
	}
	// The SMTP client has no context: a deadline on the socket bounds every command, and closing the
	// socket on cancellation unblocks a read at once.
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()

	c, err := openSession(ctx, env, setup, conn, b, addr, timeout)
	if err != nil {
		return SendOutput{}, err
	}
	defer c.Close()
	if err := deliver(c, b, addr, from.Address, to, msg); err != nil {
		return SendOutput{}, err
	}
	// The message is accepted once DATA closes; a failed QUIT does not undo it.
	_ = c.Quit()
	log := env.Log
	if log == nil {
		log = slog.Default()
	}
	log.InfoContext(ctx, "email sent", "server", addr, "recipients", len(to), "bytes", len(msg))
	return SendOutput{Success: true}, nil
}

// openSession opens the SMTP session on conn: implicit TLS on 465, else STARTTLS, with a verified
// certificate; EHLO; and AUTH PLAIN (LOGIN when only that is offered).
func openSession(ctx context.Context, env Env, setup Setup, conn net.Conn, b bounds, addr string, timeout time.Duration) (*smtp.Client, error) {
	tlsCfg := &tls.Config{ServerName: setup.Host, RootCAs: env.RootCAs, MinVersion: tls.VersionTLS12}
	localName := env.LocalName
	if localName == "" {
		localName = "localhost"
	}
	var c *smtp.Client
	var err error
	if env.implicitTLS(setup.Port) {
		tc := tls.Client(conn, tlsCfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = conn.Close()
			return nil, b.sessionError(addr, "TLS handshake", err)
		}
		c = smtp.NewClient(tc)
	} else {
		// EHLO, STARTTLS, and the handshake (on the next command) with a verified certificate.
		c, err = smtp.NewClientStartTLS(conn, tlsCfg)
		if err != nil {
			_ = conn.Close()
			if strings.Contains(err.Error(), "doesn't support STARTTLS") {
				return nil, fault.Wrap(fault.Provider, err, "the SMTP server %s offers no STARTTLS; sinew does not send a password unencrypted", addr)
			}
			return nil, b.sessionError(addr, "STARTTLS", err)
		}
	}
	c.CommandTimeout = timeout
	c.SubmissionTimeout = timeout
	if err := c.Hello(localName); err != nil {
		_ = c.Close()
		return nil, b.sessionError(addr, "EHLO", err)
	}
	var auth sasl.Client
	switch {
	case c.SupportsAuth(sasl.Plain):
		auth = sasl.NewPlainClient("", setup.User, setup.Password)
	case c.SupportsAuth(sasl.Login):
		auth = sasl.NewLoginClient(setup.User, setup.Password)
	default:
		_ = c.Close()
		return nil, fault.New(fault.Provider, "the SMTP server %s offers neither AUTH PLAIN nor AUTH LOGIN", addr)
	}
	if err := c.Auth(auth); err != nil {
		_ = c.Close()
		return nil, b.sessionError(addr, "AUTH", err)
	}
	return c, nil
}

// deliver sends msg from from to each of to: MAIL, RCPT for each recipient, DATA.
func deliver(c *smtp.Client, b bounds, addr, from string, to []*mail.Address, msg []byte) error {
	if err := c.Mail(from, nil); err != nil {
		return b.sessionError(addr, "MAIL FROM", err)
	}
	for _, r := range to {
		if err := c.Rcpt(r.Address, nil); err != nil {
			return b.sessionError(addr, "RCPT TO <"+r.Address+">", err)
		}
	}
	w, err := c.Data()
	if err != nil {
		return b.sessionError(addr, "DATA", err)
	}
	if _, err := w.Write(msg); err != nil {
		return b.sessionError(addr, "DATA", err)
	}
	if err := w.Close(); err != nil {
		return b.sessionError(addr, "DATA", err)
	}
	return nil
}

// bounds tells the caller's deadline from the provider's own.
type bounds struct {
	parent, op context.Context
	limit      time.Duration
}

// expired types a failure that came from a deadline: the caller's is a Timeout, the provider's (or
// a socket timeout under it) is Transient; nil when no deadline was involved.
func (b bounds) expired(addr, step string, err error) error {
	if passed(b.parent) {
		return fault.Wrap(fault.Timeout, err, "the call ran out of time during %s with the SMTP server %s", step, addr)
	}
	var ne net.Error
	if passed(b.op) || (errors.As(err, &ne) && ne.Timeout()) {
		return fault.Wrap(fault.Transient, err, "the SMTP server %s did not answer %s within %s", addr, step, b.limit)
	}
	return nil
}

// passed reports whether ctx is done or its deadline has come: the socket deadline set from it can
// fire a moment before the context's own timer does.
func passed(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	dl, ok := ctx.Deadline()
	return ok && !time.Now().Before(dl)
}

func (b bounds) dialError(addr string, err error) error {
	if e := b.expired(addr, "connecting", err); e != nil {
		return e
	}
	var fe *fault.Error
	if errors.As(err, &fe) {
		return err // the guard's Forbidden or Transient, with its message
	}
	return fault.Wrap(fault.Transient, err, "could not connect to the SMTP server %s", addr)
}

// sessionError types a failure during the SMTP session: a 4xx reply, a dropped connection or a
// server that stops answering is transient; a 5xx reply (refused login, sender or recipient) or a
// certificate that does not verify is the provider's permanent refusal; the caller's context running
// out is a timeout.
func (b bounds) sessionError(addr, step string, err error) error {
	if e := b.expired(addr, step, err); e != nil {
		return e
	}
	var se *smtp.SMTPError
	if errors.As(err, &se) {
		text := strings.TrimSpace(se.Message)
		if se.Code >= 400 && se.Code < 500 {
			return fault.Wrap(fault.Transient, err, "the SMTP server %s answered %s with a temporary failure %d: %s", addr, step, se.Code, text)
		}
		if step == "AUTH" {
			return fault.Wrap(fault.Provider, err, "the SMTP server %s refused the login (%d: %s); check setup.user and setup.password", addr, se.Code, text)
		}
		return fault.Wrap(fault.Provider, err, "the SMTP server %s refused %s (%d: %s)", addr, step, se.Code, text)
	}
	var cve *tls.CertificateVerificationError
	var uae x509.UnknownAuthorityError
	var hne x509.HostnameError
	if errors.As(err, &cve) || errors.As(err, &uae) || errors.As(err, &hne) {
		return fault.Wrap(fault.Provider, err, "the TLS certificate of the SMTP server %s does not verify; use the server's real name in setup.host, or have the operator trust its CA", addr)
	}
	var ne net.Error
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ne) {
		return fault.Wrap(fault.Transient, err, "the connection to the SMTP server %s failed during %s", addr, step)
	}
	var re tls.RecordHeaderError
	if errors.As(err, &re) {
		return fault.Wrap(fault.Provider, err, "the SMTP server %s does not speak TLS on this port during %s", addr, step)
	}
	return fault.Wrap(fault.Provider, err, "the SMTP server %s failed %s", addr, step)
}

// buildMessage writes the RFC 5322 message: UTF-8 text or HTML in quoted-printable, with the subject
// encoded as an RFC 2047 word when it is not ASCII.
func buildMessage(from *mail.Address, to []*mail.Address, subject, body string, now time.Time) ([]byte, error) {
	var b bytes.Buffer
	hdr := func(k, v string) { b.WriteString(k + ": " + v + "\r\n") }
	hdr("From", from.String())
	tos := make([]string, len(to))
	for i, a := range to {
		tos[i] = a.String()
	}
	hdr("To", strings.Join(tos, ", "))
	hdr("Subject", mime.QEncoding.Encode("utf-8", subject))
	hdr("Date", now.Format(time.RFC1123Z))
	hdr("Message-ID", messageID(from.Address))
	hdr("MIME-Version", "1.0")
	if IsHTML(body) {
		hdr("Content-Type", `text/html; charset="utf-8"`)
	} else {
		hdr("Content-Type", `text/plain; charset="utf-8"`)
	}
	hdr("Content-Transfer-Encoding", "quoted-printable")
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	// Line ends become CRLF, as SMTP wants, before the quoted-printable encoding.
	norm := strings.ReplaceAll(strings.ReplaceAll(body, "\r\n", "\n"), "\n", "\r\n")
	if _, err := qp.Write([]byte(norm)); err != nil {
		return nil, fault.Wrap(fault.Internal, err, "encoding the body")
	}
	if err := qp.Close(); err != nil {
		return nil, fault.Wrap(fault.Internal, err, "encoding the body")
	}
	b.WriteString("\r\n")
	return b.Bytes(), nil
}

func messageID(from string) string {
	var r [12]byte
	_, _ = rand.Read(r[:])
	domain := "sinew.local"
	if i := strings.LastIndexByte(from, '@'); i >= 0 && i+1 < len(from) {
		domain = from[i+1:]
	}
	return "<" + hex.EncodeToString(r[:]) + "@" + domain + ">"
}
