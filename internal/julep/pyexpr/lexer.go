package pyexpr

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

type tokKind int

const (
	tEOF tokKind = iota
	tName
	tInt
	tFloat
	tStr
	tOp
)

type token struct {
	kind tokKind
	pos  int
	text string // the operator, name or number as written
	str  string // a string literal's body: decoded, or raw for f-strings (parsed later)
	fstr bool
	raw  bool
	ival int64
	fval float64
}

// lexer splits a Python expression into tokens. Newlines count as spaces: Julep strips the
// expression and Python's eval mode accepts it only where a newline is insignificant.
type lexer struct {
	src string
	i   int
}

var ops3 = []string{"**=", "//=", ">>=", "<<=", "..."}
var ops2 = []string{"**", "//", "==", "!=", "<=", ">=", "<<", ">>", "->", ":=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^="}

func (lx *lexer) errf(pos int, format string, a ...any) error {
	return &SyntaxError{Expr: lx.src, Pos: pos, Msg: fmt.Sprintf(format, a...)}
}

func (lx *lexer) all() ([]token, error) {
	var out []token
	for {
		t, err := lx.next()
		if err != nil {
			return nil, err
		}
		out = append(out, t)
		if t.kind == tEOF {
			return out, nil
		}
	}
}

func (lx *lexer) next() (token, error) {
	s := lx.src
	for lx.i < len(s) {
		c := s[lx.i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' {
			lx.i++
		} else if c == '\\' && lx.i+1 < len(s) && s[lx.i+1] == '\n' {
			lx.i += 2
		} else if c == '#' {
			for lx.i < len(s) && s[lx.i] != '\n' {
				lx.i++
			}
		} else {
			break
		}
	}
	start := lx.i
	if lx.i >= len(s) {
		return token{kind: tEOF, pos: start}, nil
	}
	c := s[lx.i]
	if c >= '0' && c <= '9' || c == '.' && lx.i+1 < len(s) && s[lx.i+1] >= '0' && s[lx.i+1] <= '9' {
		return lx.number()
	}
	r, size := utf8.DecodeRuneInString(s[lx.i:])
	if r == '_' || unicode.IsLetter(r) {
		j := lx.i + size
		for j < len(s) {
			r2, n := utf8.DecodeRuneInString(s[j:])
			if r2 != '_' && !unicode.IsLetter(r2) && !unicode.IsDigit(r2) {
				break
			}
			j += n
		}
		word := s[lx.i:j]
		if j < len(s) && (s[j] == '\'' || s[j] == '"') && isStrPrefix(word) {
			lx.i = j
			return lx.str(start, strings.ToLower(word))
		}
		lx.i = j
		return token{kind: tName, pos: start, text: word}, nil
	}
	if c == '\'' || c == '"' {
		return lx.str(start, "")
	}
	for _, group := range [][]string{ops3, ops2} {
		for _, op := range group {
			if strings.HasPrefix(s[lx.i:], op) {
				lx.i += len(op)
				return token{kind: tOp, pos: start, text: op}, nil
			}
		}
	}
	if strings.ContainsRune("+-*/%@&|^~<>()[]{},:.;=!", rune(c)) {
		lx.i++
		return token{kind: tOp, pos: start, text: string(c)}, nil
	}
	return token{}, lx.errf(start, "invalid character %q", r)
}

func isStrPrefix(w string) bool {
	switch strings.ToLower(w) {
	case "r", "u", "f", "b", "rf", "fr", "br", "rb":
		return true
	}
	return false
}

func (lx *lexer) number() (token, error) {
	s, start := lx.src, lx.i
	j := start
	isFloat := false
	if strings.HasPrefix(strings.ToLower(s[j:]), "0x") || strings.HasPrefix(strings.ToLower(s[j:]), "0o") || strings.HasPrefix(strings.ToLower(s[j:]), "0b") {
		j += 2
		for j < len(s) && (isHex(s[j]) || s[j] == '_') {
			j++
		}
	} else {
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '_') {
			j++
		}
		if j < len(s) && s[j] == '.' {
			isFloat = true
			j++
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '_') {
				j++
			}
		}
		if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
			k := j + 1
			if k < len(s) && (s[k] == '+' || s[k] == '-') {
				k++
			}
			if k < len(s) && s[k] >= '0' && s[k] <= '9' {
				isFloat = true
				j = k
				for j < len(s) && s[j] >= '0' && s[j] <= '9' {
					j++
				}
			}
		}
	}
	if j < len(s) && (s[j] == 'j' || s[j] == 'J') {
		return token{}, &Unsupported{Expr: s, Pos: start, Construct: "a complex number literal", Reason: "JSON has no complex numbers"}
	}
	text := s[start:j]
	lx.i = j
	clean := strings.ReplaceAll(text, "_", "")
	if isFloat {
		f, err := strconv.ParseFloat(clean, 64)
		if err != nil {
			return token{}, lx.errf(start, "invalid number %q", text)
		}
		return token{kind: tFloat, pos: start, text: text, fval: f}, nil
	}
	if len(clean) > 1 && clean[0] == '0' && clean[1] >= '0' && clean[1] <= '9' && strings.Trim(clean, "0") != "" {
		return token{}, lx.errf(start, "leading zeros in decimal integer literals are not permitted")
	}
	v, err := strconv.ParseInt(clean, 0, 64)
	if err != nil {
		return token{}, &Unsupported{Expr: s, Pos: start, Construct: "the integer " + text, Reason: "integers beyond 64 bits are not supported"}
	}
	return token{kind: tInt, pos: start, text: text, ival: v}, nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// str reads a string literal after its prefix. An f-string's body is kept raw: its fields are
// parsed by parseFString, which decodes the literal text between them.
func (lx *lexer) str(start int, prefix string) (token, error) {
	s := lx.src
	q := s[lx.i : lx.i+1]
	if strings.HasPrefix(s[lx.i:], q+q+q) {
		q = q + q + q
	}
	if strings.Contains(prefix, "b") {
		return token{}, &Unsupported{Expr: s, Pos: start, Construct: "a bytes literal", Reason: "JSON has no bytes; use a str"}
	}
	bodyStart := lx.i + len(q)
	j, err := lx.strEnd(start, bodyStart, q, strings.Contains(prefix, "f"))
	if err != nil {
		return token{}, err
	}
	body := s[bodyStart:j]
	lx.i = j + len(q)
	t := token{kind: tStr, pos: start, text: s[start:lx.i], raw: strings.Contains(prefix, "r")}
	if strings.Contains(prefix, "f") {
		t.fstr, t.str = true, body
		return t, nil
	}
	if t.raw {
		t.str = body
		return t, nil
	}
	v, err := unescape(body)
	if err != nil {
		return token{}, lx.errf(start, "%v", err)
	}
	t.str = v
	return t, nil
}

// strEnd finds the closing quotes q of a string body starting at i. In an f-string, quotes inside
// a replacement field belong to the field (Python 3.12, PEP 701, which Julep runs).
func (lx *lexer) strEnd(start, i int, q string, f bool) (int, error) {
	s := lx.src
	depth := 0
	for {
		if i >= len(s) {
			return 0, lx.errf(start, "unterminated string literal")
		}
		c := s[i]
		switch {
		case c == '\\':
			i += 2
			continue
		case depth == 0 && strings.HasPrefix(s[i:], q):
			return i, nil
		case depth == 0 && len(q) == 1 && c == '\n':
			return 0, lx.errf(start, "unterminated string literal (newline in a single-quoted string)")
		case f && depth == 0 && (strings.HasPrefix(s[i:], "{{") || strings.HasPrefix(s[i:], "}}")):
			i += 2
			continue
		case f && (c == '{' || c == '[' || c == '(') && (depth > 0 || c == '{'):
			depth++
		case f && depth > 0 && (c == '}' || c == ']' || c == ')'):
			depth--
		case f && depth > 0 && (c == '\'' || c == '"'):
			// A string inside a field: skip it whole.
			inner := string(c)
			if strings.HasPrefix(s[i:], inner+inner+inner) {
				inner = inner + inner + inner
			}
			k := i + len(inner)
			for k < len(s) && !strings.HasPrefix(s[k:], inner) {
				if s[k] == '\\' {
					k++
				}
				k++
			}
			if k >= len(s) {
				return 0, lx.errf(i, "unterminated string literal")
			}
			i = k + len(inner)
			continue
		}
		i++
	}
}

// unescape decodes Python's escape sequences in a (non-raw) string literal's body.
func unescape(s string) (string, error) {
	if !strings.Contains(s, "\\") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case '\n':
		case '\\', '\'', '"':
			b.WriteByte(e)
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if i+1+n > len(s) {
				return "", fmt.Errorf("truncated \\%c escape", e)
			}
			v, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
			if err != nil {
				return "", fmt.Errorf("invalid \\%c escape", e)
			}
			b.WriteRune(rune(v))
			i += n
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i:j], 8, 32)
			b.WriteRune(rune(v))
			i = j - 1
		default:
			// Python keeps an unknown escape as written (with a warning).
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String(), nil
}
