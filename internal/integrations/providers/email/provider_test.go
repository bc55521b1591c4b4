package email_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/integrations"
	"sinew/internal/integrations/providers/email"
	"sinew/internal/testenv/smtpd"
)

// TestThroughRegistry runs send the way the integration executor does: JSON setup and arguments,
// validated against the generated schemas, trust from SINEW_EMAIL_CA_FILE.
func TestThroughRegistry(t *testing.T) {
	srv := smtpd.Start(t)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, srv.CAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{integrations.EnvName("email", "CA_FILE"): ca}
	r := integrations.New(loopbackGuard(t), integrations.WithGetenv(func(k string) string { return vars[k] }))
	if err := r.Register(email.Provider); err != nil {
		t.Fatal(err)
	}
	setup := map[string]any{"host": "127.0.0.1", "port": int64(srv.Addr.Port()), "user": "alice", "password": "secret"}
	args := map[string]any{"to": "bob@example.com", "from": "alice@example.com", "subject": "via registry", "body": "hello"}
	out, err := r.Execute(context.Background(), "email", "", setup, args)
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if m, _ := out.(map[string]any); m["success"] != true {
		t.Fatalf("output %v", out)
	}
	if msgs := srv.Messages(); len(msgs) != 1 || !strings.Contains(string(msgs[0].Data), "via registry") {
		t.Fatalf("arrived: %+v", msgs)
	}

	// The schema requires every field and names the missing one.
	delete(args, "subject")
	_, err = r.Execute(context.Background(), "email", "send", setup, args)
	if !fault.Is(err, fault.InvalidInput) || !strings.Contains(fault.FieldOf(err)+fault.Message(err), "subject") {
		t.Fatalf("missing subject: err = %v (field %q)", err, fault.FieldOf(err))
	}
}
