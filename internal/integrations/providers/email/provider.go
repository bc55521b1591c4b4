package email

import (
	"context"
	"crypto/x509"
	"fmt"
	"os"

	"sinew/internal/fault"
	"sinew/internal/integrations"
)

// Provider is the email provider for the registry.
var Provider = &integrations.Provider{
	Name:         "email",
	FriendlyName: "Email",
	URL:          "https://docs.julep.ai/integrations/communication/email",
	Docs:         "https://docs.julep.ai/integrations/communication/email",
	Methods: []*integrations.Method{
		integrations.NewMethod("send", "Send an email over SMTP (STARTTLS or implicit TLS on port 465, then AUTH). The body is sent as HTML when it contains HTML tags, else as plain text.", send),
	},
}

// send adapts Send to the registry: the guard and logger come from the registry's Env, and extra
// trusted CAs from SINEW_EMAIL_CA_FILE (a PEM file), added to the system roots.
func send(ctx context.Context, ienv integrations.Env, setup Setup, args SendArguments) (SendOutput, error) {
	env := Env{Guard: ienv.Guard, Log: ienv.Log}
	if path := ienv.Endpoint("CA_FILE", ""); path != "" {
		pool, err := loadCAs(path)
		if err != nil {
			return SendOutput{}, fault.Wrap(fault.Internal, err, "the operator's SMTP CA file (%s) cannot be used", integrations.EnvName("email", "CA_FILE"))
		}
		env.RootCAs = pool
	}
	return Send(ctx, env, setup, args)
}

func loadCAs(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", path)
	}
	return pool, nil
}
