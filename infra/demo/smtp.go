package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/emersion/go-sasl"

	"sinew/internal/testenv/smtpd"
)

// startMailServer runs the demo's SMTP submission server on loopback (internal/testenv/smtpd, over
// github.com/emersion/go-smtp): STARTTLS on a certificate made for 127.0.0.1, AUTH PLAIN for one
// account and only after STARTTLS, as a real submission server does. It writes the certificate to
// dir/smtp-ca.pem, the file local mode is given as SINEW_EMAIL_CA_FILE, and answers its path.
func startMailServer(dir, user, pass string) (*smtpd.Server, string, error) {
	s, err := smtpd.New(smtpd.WithUser(user, pass), smtpd.WithMechanisms(sasl.Plain))
	if err != nil {
		return nil, "", err
	}
	caFile := filepath.Join(dir, "smtp-ca.pem")
	if err := os.WriteFile(caFile, s.CAPEM, 0o600); err != nil {
		s.Close()
		return nil, "", fmt.Errorf("writing the SMTP server's certificate: %w", err)
	}
	return s, caFile, nil
}
