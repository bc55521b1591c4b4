package jsonata

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// token kinds
const (
	tokName = iota + 1
	tokVariable
	tokOperator
	tokString
	tokNumber
	tokValue
	tokRegex
)

type token struct {
	kind  int
	value any // string for names, variables, operators and strings; float64; bool or Null; *regexSpec
	pos   int
}

// regexSpec is a regular expression literal: JavaScript syntax and flags, compiled for Go.
type regexSpec struct {
	source string
	re     *regexp.Regexp
}

// operators lists the operator characters and words (a name ends at one of them).
var operatorChars = ".[]{}(),@#;:?+-*/%|=<>^&!~"

var escapes = map[byte]string{'"': "\"", '\\': "\\", '/': "/", 'b': "\b", 'f': "\f", 'n': "\n", 'r': "\r", 't': "\t"}

// scanNumber gives the number literal at the start of s: -?(0|[1-9][0-9]*)(\.[0-9]+)?([Ee][-+]?[0-9]+)?
func scanNumber(s string) string {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func(j int) int {
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		return j
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(i)
	default:
		return ""
	}
	if i+1 < len(s) && s[i] == '.' && s[i+1] >= '0' && s[i+1] <= '9' {
		i = digits(i + 1)
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if k := digits(j); k > j {
			i = k
		}
	}
	return s[:i]
}

type lexer struct {
	src string
	pos int
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' }

// next gives the next token, nil at the end. infix means an operand came just before, so '/' is
// division rather than the start of a regular expression.
func (l *lexer) next(infix bool) (*token, error) {
	src := l.src
	for {
		for l.pos < len(src) && isSpace(src[l.pos]) {
			l.pos++
		}
		if l.pos+1 < len(src) && src[l.pos] == '/' && src[l.pos+1] == '*' {
			start := l.pos
			end := strings.Index(src[l.pos+2:], "*/")
			if end < 0 {
				l.pos = len(src)
				return nil, &Error{Code: "S0106", Position: start}
			}
			l.pos += 2 + end + 2
			continue
		}
		break
	}
	if l.pos >= len(src) {
		return nil, nil
	}
	start := l.pos
	c := src[l.pos]
	tok := func(kind int, v any) *token { return &token{kind: kind, value: v, pos: start} }
	if !infix && c == '/' {
		l.pos++
		spec, err := l.scanRegex()
		if err != nil {
			return nil, err
		}
		return tok(tokRegex, spec), nil
	}
	if l.pos+1 < len(src) {
		switch two := src[l.pos : l.pos+2]; two {
		case "..", ":=", "!=", ">=", "<=", "**", "~>":
			l.pos += 2
			return tok(tokOperator, two), nil
		}
	}
	if strings.IndexByte(operatorChars, c) >= 0 {
		l.pos++
		return tok(tokOperator, string(c)), nil
	}
	if c == '"' || c == '\'' {
		return l.scanString(c, start)
	}
	if m := scanNumber(src[l.pos:]); m != "" {
		f, err := strconv.ParseFloat(m, 64)
		if err != nil {
			return nil, &Error{Code: "S0102", Position: l.pos, Token: m}
		}
		l.pos += len(m)
		return tok(tokNumber, f), nil
	}
	if c == '`' {
		end := strings.IndexByte(src[l.pos+1:], '`')
		if end < 0 {
			l.pos = len(src)
			return nil, &Error{Code: "S0105", Position: l.pos}
		}
		name := src[l.pos+1 : l.pos+1+end]
		l.pos += end + 2
		return tok(tokName, name), nil
	}
	i := l.pos
	for i < len(src) && !isSpace(src[i]) && strings.IndexByte(operatorChars, src[i]) < 0 {
		i++
	}
	word := src[l.pos:i]
	l.pos = i
	if c == '$' {
		return tok(tokVariable, word[1:]), nil
	}
	switch word {
	case "or", "in", "and":
		return tok(tokOperator, word), nil
	case "true":
		return tok(tokValue, true), nil
	case "false":
		return tok(tokValue, false), nil
	case "null":
		return tok(tokValue, Null), nil
	}
	return tok(tokName, word), nil
}

func (l *lexer) scanString(quote byte, start int) (*token, error) {
	src := l.src
	l.pos++
	var b strings.Builder
	for l.pos < len(src) {
		c := src[l.pos]
		switch {
		case c == '\\':
			l.pos++
			if l.pos >= len(src) {
				return nil, &Error{Code: "S0101", Position: l.pos}
			}
			e := src[l.pos]
			if s, ok := escapes[e]; ok {
				b.WriteString(s)
			} else if e == 'u' {
				r, n, ok := l.unicodeEscape()
				if !ok {
					return nil, &Error{Code: "S0104", Position: l.pos}
				}
				b.WriteRune(r)
				l.pos += n - 1
			} else {
				return nil, &Error{Code: "S0103", Position: l.pos, Token: string(e)}
			}
			l.pos++
		case c == quote:
			l.pos++
			return &token{kind: tokString, value: b.String(), pos: start}, nil
		default:
			b.WriteByte(c)
			l.pos++
		}
	}
	return nil, &Error{Code: "S0101", Position: l.pos}
}

// unicodeEscape reads \uXXXX at l.pos (on the 'u'), joining a surrogate pair written as two escapes.
// It gives the rune and the bytes consumed from the 'u'.
func (l *lexer) unicodeEscape() (rune, int, bool) {
	hex := func(at int) (rune, bool) {
		if at+4 > len(l.src) {
			return 0, false
		}
		v, err := strconv.ParseUint(l.src[at:at+4], 16, 32)
		return rune(v), err == nil
	}
	r, ok := hex(l.pos + 1)
	if !ok {
		return 0, 0, false
	}
	if utf16.IsSurrogate(r) && strings.HasPrefix(l.src[l.pos+5:], "\\u") {
		if r2, ok := hex(l.pos + 7); ok {
			if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
				return d, 11, true
			}
		}
	}
	return r, 5, true
}

func (l *lexer) scanRegex() (*regexSpec, error) {
	src := l.src
	start := l.pos
	depth := 0
	for l.pos < len(src) {
		c := src[l.pos]
		if c == '/' && depth == 0 && !escapedAt(src, l.pos) {
			pattern := src[start:l.pos]
			if pattern == "" {
				return nil, &Error{Code: "S0301", Position: l.pos}
			}
			l.pos++
			fs := l.pos
			for l.pos < len(src) && (src[l.pos] == 'i' || src[l.pos] == 'm') {
				l.pos++
			}
			return compileRegex(pattern, src[fs:l.pos], start)
		}
		if (c == '(' || c == '[' || c == '{') && !escapedAt(src, l.pos) {
			depth++
		}
		if (c == ')' || c == ']' || c == '}') && !escapedAt(src, l.pos) {
			depth--
		}
		l.pos++
	}
	return nil, &Error{Code: "S0302", Position: l.pos}
}

// escapedAt reports an odd number of backslashes just before i.
func escapedAt(s string, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}
