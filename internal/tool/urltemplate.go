package tool

import (
	"strings"

	"sinew/internal/fault"
)

// URLTemplate is an api_call URL split where its {name} placeholders are: Head is the scheme and
// authority, Tail the query and fragment, both fixed; Path alternates literal text and placeholders.
// The same rules hold at creation (APICallDef.validate) and at call time (the executor fills it), so
// a URL that no call could fill is refused when the tool is created.
type URLTemplate struct {
	Head, Tail string
	Path       []URLSegment
}

// URLSegment is literal path text, or a placeholder (Name set).
type URLSegment struct {
	Literal, Name string
}

// Names lists the template's placeholders in order, each once.
func (t URLTemplate) Names() []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range t.Path {
		if s.Name != "" && !seen[s.Name] {
			seen[s.Name] = true
			out = append(out, s.Name)
		}
	}
	return out
}

// ParseURLTemplate splits raw and checks its placeholders: only in the path, each closed, each a
// plain name in single braces. Errors are InvalidInput on api_call.url.
func ParseURLTemplate(raw string) (URLTemplate, error) {
	const field = "api_call.url"
	schemeEnd := strings.Index(raw, "://")
	if schemeEnd < 0 {
		return URLTemplate{}, fault.Invalid(field, "api_call.url %q has no scheme; it must start with http:// or https://", raw)
	}
	rest := raw[schemeEnd+3:]
	authEnd := strings.IndexAny(rest, "/?#")
	if authEnd < 0 {
		authEnd = len(rest)
	}
	pathEnd := authEnd + strings.IndexAny(rest[authEnd:]+"?", "?#")
	t := URLTemplate{Head: raw[:schemeEnd+3] + rest[:authEnd], Tail: rest[pathEnd:]}
	if strings.ContainsAny(t.Head, "{}") || strings.ContainsAny(t.Tail, "{}") {
		return URLTemplate{}, fault.Invalid(field, "api_call.url may hold {placeholders} only in its path; a query parameter goes in \"params\"")
	}
	tmpl := rest[authEnd:pathEnd]
	for {
		open := strings.IndexByte(tmpl, '{')
		if open < 0 {
			t.Path = append(t.Path, URLSegment{Literal: tmpl})
			return t, nil
		}
		if strings.HasPrefix(tmpl[open:], "{{") {
			name, _, _ := strings.Cut(tmpl[open+2:], "}}")
			return URLTemplate{}, fault.Invalid(field, "api_call.url has the placeholder {{%s}}: sinew's placeholders take single braces; write {%s} and give its value in the call's \"path\" argument ({\"path\": {\"%s\": ...}})", name, name, name)
		}
		end := strings.IndexByte(tmpl[open:], '}')
		if end < 0 {
			return URLTemplate{}, fault.Invalid(field, "api_call.url has an unclosed { in its path")
		}
		name := tmpl[open+1 : open+end]
		if name == "" || strings.ContainsAny(name, "{/") {
			return URLTemplate{}, fault.Invalid(field, "api_call.url has an invalid placeholder {%s}: a placeholder is a name in single braces, such as {id}", name)
		}
		t.Path = append(t.Path, URLSegment{Literal: tmpl[:open]}, URLSegment{Name: name})
		tmpl = tmpl[open+end+1:]
	}
}
