package openapitools

import (
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"sinew/internal/fault"
)

// maxCredential bounds a credential's value: a key or token, never a document.
const maxCredential = 8 << 10

// checkCredential checks one security entry of the request. Its messages never repeat the value.
func checkCredential(scheme string, c Credential) error {
	field := "security." + scheme
	switch {
	case c.Secret != "" && c.Value != nil:
		return fault.Invalid(field, "%s gives both secret and value: give one, {\"secret\": \"NAME\"} (a developer secret) or {\"value\": \"...\"}", field)
	case c.Secret == "" && c.Value == nil:
		return fault.Invalid(field, "%s needs {\"secret\": \"NAME\"} (a developer secret, PUT /secrets/NAME) or {\"value\": \"...\"}", field)
	case c.Value == nil:
		if !secretNamePattern().MatchString(c.Secret) {
			return fault.Invalid(field+".secret", "%s.secret must be a developer secret's name, ^[A-Za-z_][A-Za-z0-9_]{0,63}$", field)
		}
		return nil
	}
	v := *c.Value
	switch {
	case v == "":
		return fault.Invalid(field+".value", "%s.value is empty", field)
	case len(v) > maxCredential:
		return fault.Invalid(field+".value", "%s.value is %d bytes; at most %d", field, len(v), maxCredential)
	case strings.ContainsFunc(v, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return fault.Invalid(field+".value", "%s.value holds a control character (a line break, a tab or NUL); a request header or parameter cannot carry it", field)
	}
	return nil
}

// checkSchemes refuses credentials for schemes the document does not define: most likely a typo,
// which would otherwise leave every operation skipped for want of them.
func (b *builder) checkSchemes() error {
	defined := b.schemes()
	for _, name := range slices.Sorted(maps.Keys(b.req.Security)) {
		if _, ok := defined[name]; !ok {
			names := slices.Sorted(maps.Keys(defined))
			if len(names) == 0 {
				return fault.Invalid("security."+name, "security names the scheme %q, but the document defines no security schemes", name)
			}
			return fault.Invalid("security."+name, "security names the scheme %q, which the document does not define; it defines %s", name, strings.Join(names, ", "))
		}
	}
	return nil
}

func (b *builder) schemes() map[string]*openapi3.SecurityScheme {
	out := map[string]*openapi3.SecurityScheme{}
	if b.doc.Components == nil {
		return out
	}
	for name, ref := range b.doc.Components.SecuritySchemes {
		if ref != nil && ref.Value != nil {
			out[name] = ref.Value
		}
	}
	return out
}

// security picks the first of the operation's security requirements that sinew can meet with the
// credentials given, and gives its x-api_call-setup entry and the parameters it fills ("in:name",
// lower case), which the tool then does not take as arguments. An operation whose requirements
// allow no security ({}) is made without when no other can be met; one with no requirement sinew
// can meet is skipped, with each requirement's reason.
func (b *builder) security(op *openapi3.Operation) (map[string]any, map[string]bool, string) {
	reqs := b.doc.Security
	if op.Security != nil {
		reqs = *op.Security
	}
	if len(reqs) == 0 {
		return nil, nil, ""
	}
	defined := b.schemes()
	var reasons []string
	optional := false
	for _, r := range reqs {
		if len(r) == 0 {
			optional = true
			continue
		}
		setup, bound, why := b.requirement(r, defined)
		if why == "" {
			return setup, bound, ""
		}
		if !slices.Contains(reasons, why) {
			reasons = append(reasons, why)
		}
	}
	if optional {
		return nil, nil, ""
	}
	return nil, nil, "no security requirement of it can be met: " + strings.Join(reasons, "; ")
}

// requirement builds the setup of one security requirement: every scheme it names, together.
func (b *builder) requirement(r openapi3.SecurityRequirement, defined map[string]*openapi3.SecurityScheme) (map[string]any, map[string]bool, string) {
	setup := map[string]any{}
	bound := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(r)) {
		s, ok := defined[name]
		if !ok {
			return nil, nil, fmt.Sprintf("it names the security scheme %q, which the document does not define", name)
		}
		part, key, why := placeOf(name, s)
		if why != "" {
			return nil, nil, why
		}
		c, given := b.req.Security[name]
		if !given {
			return nil, nil, fmt.Sprintf("scheme %s needs a credential: give \"security\": {%q: {\"secret\": \"NAME\"}} or {\"value\": \"...\"}", name, name)
		}
		if part == "cookies" && c.Value != nil && strings.ContainsAny(*c.Value, ";,\"\\ \t") {
			return nil, nil, fmt.Sprintf("the value given for scheme %s holds a character a cookie cannot carry (;, comma, quote, backslash or space); store it as a developer secret in the form the API expects", name)
		}
		m, _ := setup[part].(map[string]any)
		if m == nil {
			m = map[string]any{}
			setup[part] = m
		}
		if _, dup := m[key]; dup {
			return nil, nil, fmt.Sprintf("two of its schemes set the same %s %s", part, key)
		}
		m[key] = credentialValue(s, c)
		bound[boundKey(part, key)] = true
	}
	return setup, bound, ""
}

// placeOf says which request part and key a scheme's credential goes in.
func placeOf(name string, s *openapi3.SecurityScheme) (part, key, why string) {
	switch strings.ToLower(s.Type) {
	case "apikey":
		switch s.In {
		case "header":
			return "headers", s.Name, ""
		case "query":
			return "params", s.Name, ""
		case "cookie":
			return "cookies", s.Name, ""
		}
		return "", "", fmt.Sprintf("scheme %s puts its key in %q, which is not header, query or cookie", name, s.In)
	case "http":
		switch strings.ToLower(s.Scheme) {
		case "bearer", "basic":
			return "headers", "Authorization", ""
		}
		return "", "", fmt.Sprintf("scheme %s is HTTP %s authentication; sinew sends bearer and basic only", name, s.Scheme)
	case "oauth2":
		return "", "", fmt.Sprintf("scheme %s is OAuth2, which needs a sign-in flow sinew does not run", name)
	case "openidconnect":
		return "", "", fmt.Sprintf("scheme %s is OpenID Connect, which needs a sign-in flow sinew does not run", name)
	case "mutualtls":
		return "", "", fmt.Sprintf("scheme %s is mutual TLS; api_call has no client certificates", name)
	}
	return "", "", fmt.Sprintf("scheme %s has the unknown type %q", name, s.Type)
}

// credentialValue is what goes in the setup: the value itself (the store seals it), or a
// reference the executor resolves from the developer's secrets at each call.
func credentialValue(s *openapi3.SecurityScheme, c Credential) any {
	scheme := ""
	if strings.EqualFold(s.Type, "http") {
		scheme = "Bearer"
		if strings.EqualFold(s.Scheme, "basic") {
			scheme = "Basic"
		}
	}
	if c.Value != nil {
		v := *c.Value
		switch scheme {
		case "Bearer":
			return "Bearer " + v
		case "Basic":
			return "Basic " + base64.StdEncoding.EncodeToString([]byte(v))
		}
		return v
	}
	if scheme != "" {
		return fmt.Sprintf("$ f'%s {secrets.%s}'", scheme, c.Secret)
	}
	return map[string]any{"secret": c.Secret}
}

func boundKey(part, key string) string {
	in := map[string]string{"headers": "header", "params": "query", "cookies": "cookie"}[part]
	return in + ":" + strings.ToLower(key)
}
