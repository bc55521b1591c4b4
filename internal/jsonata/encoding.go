package jsonata

import (
	"encoding/base64"
	"net/url"
	"strings"
	"unicode/utf8"
)

func defineEncoding() {
	strFn := func(name string, f func(string) (any, error)) {
		define(name, "<s-:s>", 1, func(_ *evaluator, _ *call, a []any) (any, error) {
			s, ok := a[0].(string)
			if !ok {
				return nil, nil
			}
			return f(s)
		})
	}
	strFn("base64encode", func(s string) (any, error) {
		// btoa: each character is one byte (Latin-1)
		b := make([]byte, 0, len(s))
		for _, r := range s {
			b = append(b, byte(r))
		}
		return base64.StdEncoding.EncodeToString(b), nil
	})
	strFn("base64decode", func(s string) (any, error) {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			b, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
			if err != nil {
				return nil, &Error{Code: "D3140", Value: s, FuncName: "base64decode"}
			}
		}
		rs := make([]rune, len(b))
		for i, c := range b {
			rs[i] = rune(c)
		}
		return string(rs), nil
	})
	strFn("encodeUrlComponent", func(s string) (any, error) { return encodeURI(s, "encodeUrlComponent", uriUnreserved) })
	strFn("encodeUrl", func(s string) (any, error) { return encodeURI(s, "encodeUrl", uriUnreserved+uriReserved) })
	strFn("decodeUrlComponent", func(s string) (any, error) { return decodeURI(s, "decodeUrlComponent", "") })
	strFn("decodeUrl", func(s string) (any, error) { return decodeURI(s, "decodeUrl", uriReserved) })
}

const (
	uriUnreserved = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.!~*'()"
	uriReserved   = ";/?:@&=+$,#"
)

// encodeURI is JavaScript's encodeURI/encodeURIComponent: bytes of UTF-8 outside keep are %XX.
func encodeURI(s, name, keep string) (any, error) {
	if !utf8.ValidString(s) {
		return nil, &Error{Code: "D3140", Value: s, FuncName: name}
	}
	var b strings.Builder
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < utf8.RuneSelf && strings.IndexByte(keep, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String(), nil
}

// decodeURI is JavaScript's decodeURI/decodeURIComponent: escapes of characters in keep stay.
func decodeURI(s, name, keep string) (any, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) || !isHex(s[i+1:i+3]) {
			return nil, &Error{Code: "D3140", Value: s, FuncName: name}
		}
		v, _ := url.PathUnescape(s[i : i+3])
		if len(v) == 1 && v[0] < utf8.RuneSelf && strings.IndexByte(keep, v[0]) >= 0 {
			b.WriteString(s[i : i+3])
		} else {
			b.WriteString(v)
		}
		i += 2
	}
	out := b.String()
	if !utf8.ValidString(out) {
		return nil, &Error{Code: "D3140", Value: s, FuncName: name}
	}
	return out, nil
}
