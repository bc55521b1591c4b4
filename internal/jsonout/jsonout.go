// Package jsonout writes JSON strings, escaped as a chosen JSON library escapes them.
//
// JSON leaves a writer some choices (the case of \u escapes, whether U+2028 is escaped, what
// becomes of bytes that are not UTF-8), and sinew imitates three writers whose output is compared
// byte for byte: encoding/json for the engine's own JSON, Jackson for what Step Functions (a Java
// service) prints, JavaScript's JSON.stringify for JSONata's $string. A Style names the choices;
// the escaping itself is one function, cut, so the three cannot drift apart.
package jsonout

import (
	"strings"
	"unicode/utf8"
)

// Style is a set of escaping choices; the zero Style is JavaScript's.
type Style uint8

const (
	// UpperHex writes \u escapes with capital hex digits (\u001F), not small ones (\u001f).
	UpperHex Style = 1 << iota
	// EscapeInvalid writes a byte that is not UTF-8 as the escape \ufffd, not as U+FFFD itself.
	EscapeInvalid
	// EscapeLineTerminators writes U+2028 and U+2029 as \u2028 and \u2029, which JavaScript
	// before ES2019 does not accept raw in a string literal.
	EscapeLineTerminators
)

// The writers sinew imitates.
const (
	// JavaScript is JSON.stringify's (jsonata-js): small hex, everything else raw. A Go string's
	// invalid byte, which a JavaScript string cannot hold, is written as U+FFFD.
	JavaScript Style = 0
	// Jackson is Java's Jackson, which Step Functions prints with: capital hex.
	Jackson = UpperHex | EscapeInvalid
	// GoJSON is encoding/json's with HTML escaping off (jsonv.Encode): small hex, U+2028 and U+2029
	// escaped.
	GoJSON = EscapeInvalid | EscapeLineTerminators
)

// AppendString appends s to b as a quoted JSON string.
func AppendString(b []byte, s string, st Style) []byte {
	b = append(b, '"')
	for s != "" {
		n, esc, next := st.cut(s)
		b = append(append(b, s[:n]...), esc...)
		s = s[next:]
	}
	return append(b, '"')
}

// WriteString writes s to b as a quoted JSON string.
func WriteString(b *strings.Builder, s string, st Style) {
	b.WriteByte('"')
	for s != "" {
		n, esc, next := st.cut(s)
		b.WriteString(s[:n])
		b.WriteString(esc)
		s = s[next:]
	}
	b.WriteByte('"')
}

// StringLen is the length of AppendString's output for s, without writing it: the engine checks
// payload sizes far more often than it writes them.
func StringLen(s string, st Style) int {
	n := 2
	for s != "" {
		k, esc, next := st.cut(s)
		n += k + len(esc)
		s = s[next:]
	}
	return n
}

// cut finds the first byte or character of s to escape: s[:n] comes before it, as it is; esc is
// what it is written as; s[next:] follows it. With nothing to escape, n and next are len(s).
func (st Style) cut(s string) (n int, esc string, next int) {
	for i := 0; i < len(s); {
		c := s[i]
		if plain[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			return i, asciiEscapes[st&UpperHex][c], i + 1
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1 && st&EscapeInvalid == 0:
			return i, "\uFFFD", i + 1
		case r == utf8.RuneError && size == 1:
			return i, replacement[st&UpperHex], i + 1
		case st&EscapeLineTerminators != 0 && (r == '\u2028' || r == '\u2029'):
			return i, lineTerminators[r-'\u2028'], i + size
		}
		i += size
	}
	return len(s), "", len(s)
}

// plain marks the bytes written as they are whatever follows: a table is faster than comparisons.
var plain = plainBytes()

// The escapes of the ASCII bytes JSON escapes (the others' entries are unused) and of a byte that
// is not UTF-8, by hex case (index st&UpperHex: UpperHex is 1); of U+2028 and U+2029 by r-0x2028.
var (
	asciiEscapes    = [2][utf8.RuneSelf]string{escapes("0123456789abcdef"), escapes("0123456789ABCDEF")}
	replacement     = [2]string{`\ufffd`, `\uFFFD`}
	lineTerminators = [2]string{`\u2028`, `\u2029`}
)

// escapes gives the escapes of the ASCII bytes JSON escapes, \u00XX in the given hex digits where
// there is no short form.
func escapes(hex string) (t [utf8.RuneSelf]string) {
	for c := range 0x20 {
		t[c] = `\u00` + hex[c>>4:c>>4+1] + hex[c&0xF:c&0xF+1]
	}
	t['"'], t['\\'], t['\n'], t['\r'], t['\t'], t['\b'], t['\f'] = `\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`
	return t
}

// plainBytes gives plain: printable ASCII but " and \.
func plainBytes() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}
