package apicall

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/tool"
)

// Bounds of a call: its timeout and the size of the answer it reads.
const (
	DefaultTimeout   = 30 * time.Second
	MaxTimeout       = tool.MaxAPICallTimeoutSeconds * time.Second
	MaxResponseBytes = 2 << 20 // 2 MiB: keeps every Lambda answer under its 6 MB limit (store.InlineLimit says how values travel)
	MaxRedirects     = 5
	errorBodyChars   = 500
	userAgent        = "sinew-apicall/1"
)

// prepared is a request ready to send, with the switches that bound it.
type prepared struct {
	method          string
	url             *url.URL
	header          http.Header
	body            []byte
	timeout         time.Duration
	followRedirects bool
	includeContent  bool
}

// prepare builds the request from the definition and the merged parts. The definition alone fixes
// the method, scheme, host and port; the parts fill the path's {placeholders}, the query, the body,
// the headers and cookies, and the bounds.
func prepare(def *tool.APICallDef, parts map[string]any) (*prepared, error) {
	if def == nil {
		return nil, fault.Invalid(layerDef, "the tool has no api_call definition")
	}
	method := strings.ToUpper(strings.TrimSpace(def.Method))
	if !slices.Contains(tool.HTTPMethods, method) {
		return nil, fault.Invalid(layerDef+".method", "api_call.method %q is not one of %s", def.Method, strings.Join(tool.HTTPMethods, ", "))
	}
	u, err := buildURL(def.URL, asMap(parts[PartPath]))
	if err != nil {
		return nil, err
	}
	p := &prepared{method: method, url: u, header: http.Header{}, timeout: DefaultTimeout, includeContent: true}

	if params := asMap(parts[PartParams]); params != nil {
		q := u.Query()
		for _, k := range sortedKeys(params) {
			vals, err := scalarList(PartParams+"."+k, params[k])
			if err != nil {
				return nil, err
			}
			if vals == nil {
				q.Del(k)
				continue
			}
			q[k] = vals
		}
		u.RawQuery = q.Encode()
	}

	if v, ok := parts[PartTimeout]; ok {
		secs, _ := jsonv.ToFloat(v)
		if secs <= 0 || secs > float64(tool.MaxAPICallTimeoutSeconds) {
			return nil, fault.Invalid(PartTimeout, "timeout must be more than 0 and at most %d seconds, got %v", tool.MaxAPICallTimeoutSeconds, v)
		}
		p.timeout = time.Duration(secs * float64(time.Second))
	}
	if v, ok := parts[PartFollowRedirects].(bool); ok {
		p.followRedirects = v
	}
	if v, ok := parts[PartIncludeResponseContent].(bool); ok {
		p.includeContent = v
	}

	if err := p.setHeaders(asMap(parts[PartHeaders])); err != nil {
		return nil, err
	}
	if err := p.setCookies(asMap(parts[PartCookies])); err != nil {
		return nil, err
	}
	if err := p.setBody(parts); err != nil {
		return nil, err
	}
	return p, nil
}

// buildURL fills the {name} placeholders of the definition URL's path from path, each value escaped as
// one path segment, and checks what the definition fixes: http or https, a host, no placeholder
// outside the path.
func buildURL(raw string, path map[string]any) (*url.URL, error) {
	const field = layerDef + ".url"
	t, err := tool.ParseURLTemplate(raw)
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	var b strings.Builder
	for _, seg := range t.Path {
		if seg.Name == "" {
			b.WriteString(seg.Literal)
			continue
		}
		v, ok := path[seg.Name]
		if !ok || v == nil {
			return nil, fault.Invalid(PartPath+"."+seg.Name, "the URL needs path.%s: give it in the \"path\" argument", seg.Name)
		}
		s, err := scalarString(PartPath+"."+seg.Name, v)
		if err != nil {
			return nil, err
		}
		b.WriteString(escapeSegment(s))
		used[seg.Name] = true
	}
	for _, k := range sortedKeys(path) {
		if !used[k] {
			return nil, fault.Invalid(PartPath+"."+k, "the URL has no {%s} placeholder", k)
		}
	}

	u, err := url.Parse(t.Head + b.String() + t.Tail)
	if err != nil {
		return nil, fault.Invalid(field, "api_call.url is not a valid URL: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fault.Invalid(field, "api_call.url must be http or https, got %q", u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, fault.Invalid(field, "api_call.url has no host")
	}
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}

// escapeSegment escapes a value as one path segment. "." and ".." are escaped too, so a value cannot
// climb out of the definition's path.
func escapeSegment(s string) string {
	switch s {
	case ".":
		return "%2E"
	case "..":
		return "%2E%2E"
	}
	return url.PathEscape(s)
}

func (p *prepared) setHeaders(h map[string]any) error {
	p.header.Set("User-Agent", userAgent)
	for _, name := range sortedKeys(h) {
		field := PartHeaders + "." + name
		if strings.EqualFold(name, "Host") {
			return fault.Invalid(field, "the Host header is fixed by the definition's URL")
		}
		vals, err := scalarList(field, h[name])
		if err != nil {
			return err
		}
		if vals == nil {
			p.header.Del(name)
			continue
		}
		for _, v := range vals {
			// net/http refuses every control byte but tab at send time, as a transport error that
			// would be retried; refuse them here, where the caller learns which header is at fault.
			if i := strings.IndexFunc(v, func(r rune) bool { return (r < ' ' && r != '\t') || r == 0x7f }); i >= 0 {
				return fault.Invalid(field, "header %s holds a control character such as a line break or NUL (%q at byte %d); header values may hold only printable text and tabs", name, v[i], i)
			}
		}
		p.header[http.CanonicalHeaderKey(name)] = vals
	}
	return nil
}

func (p *prepared) setCookies(c map[string]any) error {
	var pairs []string
	for _, name := range sortedKeys(c) {
		field := PartCookies + "." + name
		if c[name] == nil {
			continue
		}
		v, err := scalarString(field, c[name])
		if err != nil {
			return err
		}
		if !validHeaderName(name) {
			return fault.Invalid(field, "%q is not a valid cookie name", name)
		}
		if strings.ContainsAny(v, ";,\"\\ \t\r\n\x00") {
			return fault.Invalid(field, "cookie %s holds a character a cookie value cannot carry (;, comma, quote, backslash or space)", name)
		}
		pairs = append(pairs, name+"="+v)
	}
	if len(pairs) > 0 {
		if prev := p.header.Get("Cookie"); prev != "" {
			pairs = append([]string{prev}, pairs...)
		}
		p.header.Set("Cookie", strings.Join(pairs, "; "))
	}
	return nil
}

// setBody picks the one body the parts describe: json, content (base64), or data and files (a form,
// multipart when there are files).
func (p *prepared) setBody(parts map[string]any) error {
	var kinds []string
	jsonBody, hasJSON := parts[PartJSON]
	if hasJSON {
		kinds = append(kinds, PartJSON)
	}
	content, hasContent := parts[PartContent].(string)
	if hasContent {
		kinds = append(kinds, PartContent)
	}
	data, files := asMap(parts[PartData]), asMap(parts[PartFiles])
	if data != nil || files != nil {
		kinds = append(kinds, "data/files")
	}
	if len(kinds) > 1 {
		return fault.Invalid(kinds[1], "the request body comes from one of json, content, or data and files; got %s", strings.Join(kinds, " and "))
	}
	switch {
	case hasJSON:
		b, err := jsonv.Encode(jsonBody)
		if err != nil {
			return fault.Invalid(PartJSON, "json cannot be encoded: %v", err)
		}
		p.body = b
		if p.header.Get("Content-Type") == "" {
			p.header.Set("Content-Type", "application/json")
		}
	case hasContent:
		b, err := decodeBase64(content)
		if err != nil {
			return fault.Invalid(PartContent, "content must be base64 (standard alphabet): %v", err)
		}
		p.body = b
	case files != nil:
		return p.setMultipart(data, files)
	case data != nil:
		form := url.Values{}
		for _, k := range sortedKeys(data) {
			vals, err := scalarList(PartData+"."+k, data[k])
			if err != nil {
				return err
			}
			if vals != nil {
				form[k] = vals
			}
		}
		p.body = []byte(form.Encode())
		if p.header.Get("Content-Type") == "" {
			p.header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	}
	return nil
}

// setMultipart writes data fields and files as multipart/form-data. A file is either a string (its
// content as text, named after the field) or {"filename", "content" (base64), "content_type"}. The
// Content-Type header is always this body's, since it carries the boundary.
func (p *prepared) setMultipart(data, files map[string]any) error {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, k := range sortedKeys(data) {
		vals, err := scalarList(PartData+"."+k, data[k])
		if err != nil {
			return err
		}
		for _, v := range vals {
			if err := w.WriteField(k, v); err != nil {
				return fmt.Errorf("writing form field: %w", err)
			}
		}
	}
	for _, name := range sortedKeys(files) {
		field := PartFiles + "." + name
		filename, ctype := name, "application/octet-stream"
		var content []byte
		switch f := files[name].(type) {
		case string:
			content, ctype = []byte(f), "text/plain; charset=utf-8"
		case map[string]any:
			for k := range f {
				if k != "filename" && k != "content" && k != "content_type" {
					return fault.Invalid(field+"."+k, "unknown file key %q; a file is {filename, content (base64), content_type}", k)
				}
			}
			if v, ok := f["filename"]; ok {
				s, ok := v.(string)
				if !ok || s == "" {
					return fault.Invalid(field+".filename", "filename must be a non-empty string")
				}
				filename = s
			}
			if v, ok := f["content_type"]; ok {
				s, ok := v.(string)
				if !ok || s == "" || strings.ContainsAny(s, "\r\n") {
					return fault.Invalid(field+".content_type", "content_type must be a media type string")
				}
				ctype = s
			}
			s, ok := f["content"].(string)
			if !ok {
				return fault.Invalid(field+".content", "a file needs content, a base64 string")
			}
			b, err := decodeBase64(s)
			if err != nil {
				return fault.Invalid(field+".content", "file content must be base64 (standard alphabet): %v", err)
			}
			content = b
		default:
			return wrongType(field, "a string or {filename, content, content_type}", f)
		}
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%s"; filename="%s"`, quoteEscape(name), quoteEscape(filename)))
		h.Set("Content-Type", ctype)
		pw, err := w.CreatePart(h)
		if err != nil {
			return fmt.Errorf("writing file part: %w", err)
		}
		if _, err := pw.Write(content); err != nil {
			return fmt.Errorf("writing file part: %w", err)
		}
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("closing multipart body: %w", err)
	}
	p.body = buf.Bytes()
	p.header.Set("Content-Type", w.FormDataContentType())
	return nil
}

var quoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"", "\r", "%0D", "\n", "%0A")

func quoteEscape(s string) string { return quoteEscaper.Replace(s) }

// newRequest makes the http.Request for one attempt.
func (p *prepared) newRequest(ctx context.Context) (*http.Request, error) {
	var body io.Reader
	if p.body != nil {
		body = bytes.NewReader(p.body)
	}
	req, err := http.NewRequestWithContext(ctx, p.method, p.url.String(), body)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidInput, err, "cannot build the request")
	}
	req.Header = p.header.Clone()
	return req, nil
}

func decodeBase64(s string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		if b2, err2 := base64.RawStdEncoding.DecodeString(s); err2 == nil {
			return b2, nil
		}
	}
	return b, err
}

// scalarString formats a JSON scalar for a URL, header or form: numbers as JSON writes them, booleans
// as true/false.
func scalarString(field string, v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	}
	return "", wrongType(field, "a string, number or boolean", v)
}

// scalarList reads a value that may repeat: a scalar, or an array of scalars. null gives nil.
func scalarList(field string, v any) ([]string, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case []any:
		out := make([]string, 0, len(x))
		for i, e := range x {
			s, err := scalarString(fmt.Sprintf("%s[%d]", field, i), e)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	s, err := scalarString(field, v)
	if err != nil {
		return nil, err
	}
	return []string{s}, nil
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
