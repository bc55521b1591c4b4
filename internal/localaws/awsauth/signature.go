package awsauth

import (
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

const unsignedPayload = "UNSIGNED-PAYLOAD"

const mismatch = "The request signature we calculated does not match the signature you provided. " +
	"Check your AWS Secret Access Key and signing method. Consult the service documentation for details."

// checkSignature computes the signature r should carry, as AWS's non-S3 services do, and compares
// it with the claimed one in constant time.
func (v *Verifier) checkSignature(r *http.Request, c *claim, body []byte) *authError {
	sum := sha256.Sum256(body)
	hashes, aerr := payloadHashes(r, c, hex.EncodeToString(sum[:]))
	if aerr != nil {
		return aerr
	}
	query, ok := canonicalQuery(r.URL.RawQuery, c.presigned)
	if !ok {
		return errorf(codeIncomplete, "The query string is not validly percent-encoded.")
	}
	prefix := canonicalPrefix(r, c, query)
	key := signingKey(v.creds.SecretAccessKey, c)
	for _, h := range hashes {
		want := hex.EncodeToString(hmacSHA256(key, stringToSign(c, prefix+h)))
		if hmac.Equal([]byte(want), []byte(c.signature)) {
			return nil
		}
	}
	return errorf(codeInvalid, mismatch)
}

// payloadHashes are the payload hashes the signature may have been made with. Only a presigned
// URL may leave its body unsigned, as its signer need not have had the body.
func payloadHashes(r *http.Request, c *claim, actual string) ([]string, *authError) {
	claimed := r.Header.Values("X-Amz-Content-Sha256")
	switch {
	case len(claimed) == 0 && c.presigned:
		return []string{actual, unsignedPayload}, nil
	case len(claimed) == 0:
		return []string{actual}, nil
	case len(claimed) == 1 && claimed[0] == actual:
		return claimed, nil
	case len(claimed) == 1 && claimed[0] == unsignedPayload && c.presigned:
		return claimed, nil
	case len(claimed) == 1 && claimed[0] == unsignedPayload:
		return nil, errorf(codeInvalid, "x-amz-content-sha256 UNSIGNED-PAYLOAD is accepted only in a presigned URL; sign the body.")
	}
	return nil, errorf(codeInvalid, "The provided 'x-amz-content-sha256' header does not match what was computed.")
}

// canonicalPrefix is the canonical request up to its last line, the payload hash.
func canonicalPrefix(r *http.Request, c *claim, query string) string {
	var b strings.Builder
	b.WriteString(r.Method)
	b.WriteByte('\n')
	// Non-S3 services sign the path encoded twice: the escaped path, escaped again.
	path := escape(r.URL.EscapedPath(), true)
	if path == "" {
		path = "/"
	}
	b.WriteString(path)
	b.WriteByte('\n')
	b.WriteString(query)
	b.WriteByte('\n')
	headers := make(map[string][]string, len(r.Header))
	for k, vs := range r.Header {
		lk := strings.ToLower(k)
		headers[lk] = append(headers[lk], vs...)
	}
	for _, name := range c.signedHeaders {
		b.WriteString(name)
		b.WriteByte(':')
		b.WriteString(headerValue(r, headers, name))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(strings.Join(c.signedHeaders, ";"))
	b.WriteByte('\n')
	return b.String()
}

// headerValue is a signed header's canonical value. Go's server keeps Host out of the header map,
// and a client's Content-Length may be known only as r.ContentLength.
func headerValue(r *http.Request, headers map[string][]string, name string) string {
	values := headers[name]
	switch {
	case name == "host":
		values = []string{r.Host}
	case name == "content-length" && len(values) == 0 && r.ContentLength >= 0:
		values = []string{strconv.FormatInt(r.ContentLength, 10)}
	}
	trimmed := make([]string, len(values))
	for i, v := range values {
		trimmed[i] = trimAll(v)
	}
	return strings.Join(trimmed, ",")
}

// trimAll trims a header value and collapses its inner runs of spaces to one.
func trimAll(v string) string {
	v = strings.Trim(v, " \t")
	if !strings.Contains(v, "  ") {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == ' ' && i > 0 && v[i-1] == ' ' {
			continue
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// canonicalQuery decodes the raw query and encodes it again as RFC 3986 with %20 for spaces,
// sorted by encoded key then value; a presigned URL's own signature is left out. ok is false when
// the query is not validly encoded.
func canonicalQuery(raw string, presigned bool) (string, bool) {
	type pair struct{ k, v string }
	var pairs []pair
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		k, err := url.QueryUnescape(k)
		if err != nil {
			return "", false
		}
		if v, err = url.QueryUnescape(v); err != nil {
			return "", false
		}
		if presigned && k == "X-Amz-Signature" {
			continue
		}
		pairs = append(pairs, pair{escape(k, false), escape(v, false)})
	}
	slices.SortFunc(pairs, func(a, b pair) int { return cmp.Or(strings.Compare(a.k, b.k), strings.Compare(a.v, b.v)) })
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p.k)
		b.WriteByte('=')
		b.WriteString(p.v)
	}
	return b.String(), true
}

// escape percent-encodes every byte but the unreserved A-Za-z0-9-_.~ (and '/' when keepSlash),
// with upper-case hex as SigV4 requires.
func escape(s string, keepSlash bool) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
			c == '-' || c == '_' || c == '.' || c == '~' || keepSlash && c == '/' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

func (c *claim) scope() string {
	return c.scopeDate + "/" + c.region + "/" + c.service + "/" + terminator
}

func stringToSign(c *claim, canonicalRequest string) string {
	sum := sha256.Sum256([]byte(canonicalRequest))
	return algorithm + "\n" + c.amzDate + "\n" + c.scope() + "\n" + hex.EncodeToString(sum[:])
}

// signingKey derives the key for c's scope from the secret, as SigV4 does.
func signingKey(secret string, c *claim) []byte {
	k := hmacSHA256([]byte("AWS4"+secret), c.scopeDate)
	k = hmacSHA256(k, c.region)
	k = hmacSHA256(k, c.service)
	return hmacSHA256(k, terminator)
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}
