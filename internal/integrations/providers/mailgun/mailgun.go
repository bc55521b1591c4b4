// Package mailgun is the mailgun integration: send a plain-text email through Mailgun's Messages API
// (POST /v3/<domain>/messages, form fields, HTTP Basic auth api:<key>), as Julep does. Two
// deliberate differences: a bad address or a refused send is a typed error (InvalidInput naming the
// field, or the classified HTTP status), not Julep's {success:false, error}; and setup may name the
// sending domain (`domain`), which otherwise is Julep's "email.<domain of from>".
//
// Julep's provider, which this one ports: https://github.com/julep-ai/julep/blob/5371a620af2582868eb121e6489a8cc14836fd50/src/integrations-service/integrations/utils/integrations/mailgun.py
package mailgun

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"sinew/internal/fault"
	"sinew/internal/integrations"
)

// Setup of the mailgun provider.
type Setup struct {
	APIKey string `json:"api_key" jsonschema:"minLength=1" jsonschema_description:"Mailgun API key." sinew:"secret"`
	Domain string `json:"domain,omitempty" jsonschema_description:"Sending domain (sinew addition); default: email.<domain of the from address>, as Julep." sinew:"endpoint"`
}

// Arguments of send_email.
type Arguments struct {
	To      string `json:"to" jsonschema_description:"The recipient's address."`
	From    string `json:"from" jsonschema_description:"The sender's address."`
	Subject string `json:"subject" jsonschema_description:"The subject."`
	Body    string `json:"body" jsonschema_description:"The plain-text body."`
	CC      string `json:"cc,omitempty" jsonschema_description:"Comma-separated CC addresses."`
	BCC     string `json:"bcc,omitempty" jsonschema_description:"Comma-separated BCC addresses."`
}

// Output of send_email. A failure is an error, so success is always true; the shape is Julep's.
type Output struct {
	Success bool   `json:"success"`
	Error   string `json:"error,omitempty"`
}

// emailRE is Julep's address check.
// Compiled on first use: a counted repetition compiles to hundreds of allocations, paid at every
// Lambda cold start otherwise.
var emailRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}$`) })

var domainRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)+$`)

func checkList(field, list string) error {
	for _, a := range strings.Split(list, ",") {
		if a = strings.TrimSpace(a); a != "" && !emailRE().MatchString(a) {
			return fault.Invalid("arguments."+field, "arguments.%s holds an address that is not valid: %q", field, a)
		}
	}
	return nil
}

func sendEmail(ctx context.Context, env integrations.Env, s Setup, a Arguments) (Output, error) {
	if !emailRE().MatchString(a.From) {
		return Output{}, fault.Invalid("arguments.from", "arguments.from is not a valid email address: %q", a.From)
	}
	if !emailRE().MatchString(a.To) {
		return Output{}, fault.Invalid("arguments.to", "arguments.to is not a valid email address: %q", a.To)
	}
	if err := checkList("cc", a.CC); err != nil {
		return Output{}, err
	}
	if err := checkList("bcc", a.BCC); err != nil {
		return Output{}, err
	}
	domain := s.Domain
	if domain == "" {
		domain = a.From[strings.LastIndex(a.From, "@")+1:]
		if !strings.HasPrefix(domain, "email.") {
			domain = "email." + domain
		}
	} else if !domainRE.MatchString(domain) {
		return Output{}, fault.Invalid("setup.domain", "setup.domain is not a domain name")
	}
	form := url.Values{"from": {a.From}, "to": {a.To}, "subject": {a.Subject}, "text": {a.Body}}
	if a.CC != "" {
		form.Set("cc", a.CC)
	}
	if a.BCC != "" {
		form.Set("bcc", a.BCC)
	}
	_, err := env.Do(ctx, integrations.Request{
		Method:      "POST",
		URL:         integrations.JoinURL(env.BaseURL, "v3", domain, "messages"),
		Header:      map[string][]string{"Authorization": {"Basic " + basic("api", s.APIKey)}},
		Body:        []byte(form.Encode()),
		ContentType: "application/x-www-form-urlencoded",
	})
	if err != nil {
		return Output{}, err
	}
	return Output{Success: true}, nil
}

// Provider is the mailgun provider.
var Provider = &integrations.Provider{
	Name:         "mailgun",
	FriendlyName: "Mailgun",
	URL:          "https://www.mailgun.com/",
	Docs:         "https://documentation.mailgun.com/docs/mailgun/api-reference/openapi-final/tag/Messages/",
	Icon:         "https://www.mailgun.com/favicon.ico",
	BaseURL:      "https://api.mailgun.net",
	Methods: []*integrations.Method{
		integrations.NewMethod("send_email", "Send an email", sendEmail),
	},
}
