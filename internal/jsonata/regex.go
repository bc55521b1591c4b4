package jsonata

import (
	"regexp"
	"strings"
)

// compileRegex compiles a JSONata (JavaScript) regular expression with Go's regexp (RE2). The
// syntax differs where RE2 has no equivalent: lookahead and lookbehind, backreferences and
// possessive forms are refused (S0303); \uXXXX is rewritten as \x{XXXX}; the flags i and m map to
// (?i) and (?m). Matching is leftmost-first as in JavaScript, over UTF-8 rather than UTF-16.
func compileRegex(pattern, flags string, pos int) (*regexSpec, error) {
	var b strings.Builder
	if flags != "" {
		b.WriteString("(?" + flags + ")")
	}
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c == '\\' && i+1 < len(pattern) {
			n := pattern[i+1]
			if n == 'u' && i+5 < len(pattern) && isHex(pattern[i+2:i+6]) {
				b.WriteString(`\x{` + pattern[i+2:i+6] + `}`)
				i += 5
				continue
			}
			if n == '/' {
				b.WriteByte('/')
				i++
				continue
			}
			b.WriteByte(c)
			b.WriteByte(n)
			i++
			continue
		}
		b.WriteByte(c)
	}
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, &Error{Code: "S0303", Position: pos, Value: pattern}
	}
	return &regexSpec{source: pattern, re: re}, nil
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return len(s) > 0
}
