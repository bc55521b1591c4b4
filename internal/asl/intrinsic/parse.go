// Package intrinsic parses and evaluates the intrinsic functions of Amazon States Language
// (JSONPath mode).
//
// It covers States.Format, StringToJson, JsonToString, Array, ArrayPartition, ArrayContains,
// ArrayRange, ArrayGetItem, ArrayLength, ArrayUnique, Base64Encode, Base64Decode, Hash, JsonMerge,
// MathRandom, MathAdd, StringSplit and UUID, with AWS's recorded quirks (see functions.go).
//
// AWS checks the call's grammar when the state machine is created and everything else (argument
// count, types, ranges) when the state runs: Parse fails only on grammar, Eval fails with
// States.Runtime and AWS's cause "Invalid arguments in States.<Name>".
package intrinsic

import (
	"strconv"
	"strings"

	"sinew/internal/asl/jsonpath"
	"sinew/internal/fault"
)

// MaxNesting is how deep calls may nest within one field (AWS: "up to 10 intrinsic functions").
const MaxNesting = 10

// maxExprLen bounds what Parse reads; definitions are at most 1 MB.
const maxExprLen = 1 << 16

// IsCall reports whether a "x.$" value is an intrinsic call rather than a path: it starts with
// "States." and a function-name character. (Whether it is a well-formed call is Parse's question.)
func IsCall(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "States.") && len(s) > len("States.") && isNameByte(s[len("States.")])
}

// Expr is a parsed intrinsic call. It is immutable and safe for concurrent use.
type Expr struct {
	src  string
	call *call
}

// String gives the expression as written.
func (e *Expr) String() string { return e.src }

type argKind int

const (
	argLiteral argKind = iota // string, number, null, true, false
	argPath                   // $…, $$…, $name…
	argCall                   // States.X(…)
)

type arg struct {
	kind argKind
	val  any            // literal value
	tmpl []piece        // for string literals: the Format template with escapes resolved
	path *jsonpath.Path // argPath
	call *call          // argCall
}

type call struct {
	name string // "Format", "ArrayGetItem", ...
	fn   *function
	args []arg
	src  string
}

// piece is a part of a Format template: literal text, or a {} placeholder.
type piece struct {
	text        string
	placeholder bool
	bad         string // a brace that is neither an escape nor part of {}: Format fails on it
}

// SyntaxError is an intrinsic expression AWS would refuse at CreateStateMachine
// ("The value for the field 'x.$' must be a valid JSONPath or a valid intrinsic function call").
type SyntaxError struct {
	Expr string
	Pos  int
	Msg  string
}

func (e *SyntaxError) Error() string {
	return "invalid intrinsic function call at position " + strconv.Itoa(e.Pos) + ": " + e.Msg
}

// Unwrap makes the error a fault.InvalidInput for callers that classify by fault kind.
func (e *SyntaxError) Unwrap() error {
	return fault.Invalid("intrinsic", "invalid intrinsic function call %q at position %d: %s", e.Expr, e.Pos, e.Msg)
}

// Parse parses an intrinsic call: nested calls, string literals in single quotes (escapes \' \{ \}
// \\), numbers, null, true, false, and paths ($…, $$…, $var…) read by the jsonpath package.
func Parse(s string) (*Expr, error) {
	if len(s) > maxExprLen {
		return nil, &SyntaxError{Expr: s[:64], Msg: "expression is longer than " + strconv.Itoa(maxExprLen) + " characters"}
	}
	p := &parser{src: s}
	p.skipSpace()
	c, err := p.call(1)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(s) {
		return nil, p.fail("unexpected text after the call: " + quoteSnippet(s[p.pos:]))
	}
	return &Expr{src: s, call: c}, nil
}

type parser struct {
	src string
	pos int
}

func (p *parser) fail(msg string) *SyntaxError {
	return &SyntaxError{Expr: p.src, Pos: p.pos, Msg: msg}
}

func (p *parser) skipSpace() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func isNameByte(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

func (p *parser) call(depth int) (*call, error) {
	if depth > MaxNesting {
		return nil, p.fail("more than " + strconv.Itoa(MaxNesting) + " nested intrinsic functions")
	}
	start := p.pos
	if !strings.HasPrefix(p.src[p.pos:], "States.") {
		return nil, p.fail("expected States.<Function>(...)")
	}
	p.pos += len("States.")
	n := p.pos
	for p.pos < len(p.src) && isNameByte(p.src[p.pos]) {
		p.pos++
	}
	name := p.src[n:p.pos]
	fn := functions[name]
	if fn == nil {
		p.pos = n
		return nil, p.fail("unknown intrinsic function States." + name)
	}
	p.skipSpace()
	if p.pos >= len(p.src) || p.src[p.pos] != '(' {
		return nil, p.fail("expected '(' after States." + name)
	}
	p.pos++
	c := &call{name: name, fn: fn}
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == ')' {
		p.pos++
		c.src = p.src[start:p.pos]
		return c, nil
	}
	for {
		p.skipSpace()
		a, err := p.arg(depth)
		if err != nil {
			return nil, err
		}
		c.args = append(c.args, a)
		p.skipSpace()
		if p.pos >= len(p.src) {
			return nil, p.fail("missing ')' to close States." + name)
		}
		switch p.src[p.pos] {
		case ',':
			p.pos++
		case ')':
			p.pos++
			c.src = p.src[start:p.pos]
			return c, nil
		default:
			return nil, p.fail("expected ',' or ')' in the arguments of States." + name)
		}
	}
}

func (p *parser) arg(depth int) (arg, error) {
	if p.pos >= len(p.src) {
		return arg{}, p.fail("missing argument")
	}
	rest := p.src[p.pos:]
	switch c := p.src[p.pos]; {
	case c == '\'':
		return p.stringLit()
	case c == '$':
		return p.pathArg()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case strings.HasPrefix(rest, "States."):
		sub, err := p.call(depth + 1)
		if err != nil {
			return arg{}, err
		}
		return arg{kind: argCall, call: sub}, nil
	}
	for _, kw := range []struct {
		word string
		val  any
	}{{"null", nil}, {"true", true}, {"false", false}} {
		if strings.HasPrefix(rest, kw.word) && (len(rest) == len(kw.word) || !isNameByte(rest[len(kw.word)])) {
			p.pos += len(kw.word)
			return arg{kind: argLiteral, val: kw.val}, nil
		}
	}
	if rest[0] == ',' || rest[0] == ')' {
		return arg{}, p.fail("missing argument")
	}
	return arg{}, p.fail("unexpected argument " + quoteSnippet(rest))
}

// stringLit reads '…'. Only \' \{ \} and \\ are escapes; AWS refuses any other backslash
// (recorded: a literal with \" fails validation, v2/scenarios test_illegal_escapes).
func (p *parser) stringLit() (arg, error) {
	start := p.pos
	p.pos++ // opening quote
	var b strings.Builder
	var tmpl []piece
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			tmpl = append(tmpl, piece{text: text.String()})
			text.Reset()
		}
	}
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch c {
		case '\'':
			p.pos++
			flush()
			return arg{kind: argLiteral, val: b.String(), tmpl: tmpl}, nil
		case '\\':
			if p.pos+1 >= len(p.src) {
				return arg{}, p.fail("unterminated escape in string literal")
			}
			e := p.src[p.pos+1]
			switch e {
			case '\'', '{', '}', '\\':
				b.WriteByte(e)
				text.WriteByte(e)
			default:
				return arg{}, p.fail("illegal escape \\" + string(e) + " in string literal (only \\' \\{ \\} \\\\ are allowed)")
			}
			p.pos += 2
		case '{':
			b.WriteByte(c)
			if p.pos+1 < len(p.src) && p.src[p.pos+1] == '}' {
				flush()
				tmpl = append(tmpl, piece{placeholder: true})
				b.WriteByte('}')
				p.pos += 2
				continue
			}
			flush()
			tmpl = append(tmpl, piece{text: "{", bad: "{"})
			p.pos++
		case '}':
			b.WriteByte(c)
			flush()
			tmpl = append(tmpl, piece{text: "}", bad: "}"})
			p.pos++
		default:
			b.WriteByte(c)
			text.WriteByte(c)
			p.pos++
		}
	}
	p.pos = start
	return arg{}, p.fail("unterminated string literal")
}

// pathArg reads a path up to the ',' or ')' that ends the argument, keeping brackets, filter
// parentheses and quoted names whole.
func (p *parser) pathArg() (arg, error) {
	start := p.pos
	depthSq, depthPar := 0, 0
	inQuote := false
loop:
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if inQuote {
			if c == '\'' {
				inQuote = false
			}
			p.pos++
			continue
		}
		switch c {
		case '\'':
			inQuote = true
		case '[':
			depthSq++
		case ']':
			depthSq--
		case '(':
			depthPar++
		case ')':
			if depthPar == 0 && depthSq == 0 {
				break loop
			}
			depthPar--
		case ',':
			if depthPar == 0 && depthSq == 0 {
				break loop
			}
		}
		p.pos++
	}
	text := strings.TrimRight(p.src[start:p.pos], " \t\n\r")
	path, err := jsonpath.Parse(text)
	if err != nil {
		p.pos = start
		msg := err.Error()
		if je, ok := err.(*jsonpath.Error); ok {
			msg = je.Msg
		}
		return arg{}, p.fail("invalid path argument " + quoteSnippet(text) + ": " + msg)
	}
	return arg{kind: argPath, path: path}, nil
}

func (p *parser) number() (arg, error) {
	start := p.pos
	if p.src[p.pos] == '-' {
		p.pos++
	}
	digits := func() int {
		n := 0
		for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if digits() == 0 {
		p.pos = start
		return arg{}, p.fail("malformed number")
	}
	isFloat := false
	if p.pos < len(p.src) && p.src[p.pos] == '.' {
		p.pos++
		isFloat = true
		if digits() == 0 {
			p.pos = start
			return arg{}, p.fail("malformed number")
		}
	}
	if p.pos < len(p.src) && (p.src[p.pos] == 'e' || p.src[p.pos] == 'E') {
		p.pos++
		isFloat = true
		if p.pos < len(p.src) && (p.src[p.pos] == '+' || p.src[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			p.pos = start
			return arg{}, p.fail("malformed number")
		}
	}
	if p.pos < len(p.src) && isNameByte(p.src[p.pos]) {
		p.pos = start
		return arg{}, p.fail("malformed number")
	}
	text := p.src[start:p.pos]
	if !isFloat {
		if i, err := strconv.ParseInt(text, 10, 64); err == nil {
			return arg{kind: argLiteral, val: i}, nil
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		p.pos = start
		return arg{}, p.fail("number out of range: " + text)
	}
	return arg{kind: argLiteral, val: f}, nil
}

func quoteSnippet(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strconv.Quote(s)
}
