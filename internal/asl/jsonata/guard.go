package jsonata

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	jsonatalib "github.com/blues/jsonata-go"
	"github.com/blues/jsonata-go/jtypes"
)

// The library has no bound on recursion: `($f := function($x){$f($x)}; $f(1))` grows its goroutine's
// stack until the Go runtime stops the whole process (a fatal error, not a panic), and an evaluation
// that has timed out cannot be stopped from outside. So every lambda body is evaluated through a
// guard function that counts the depth and the number of calls, and stops an evaluation that is too
// deep, too long, or whose caller has given up. AWS evaluates JSONata in JavaScript, whose stack
// also ends deep recursion with an error.
const (
	// MaxDepth bounds nested lambda calls (JavaScript's stack allows about this many frames of a
	// JSONata lambda).
	MaxDepth = 2000
	// MaxCalls bounds the lambda calls of one evaluation.
	MaxCalls = 5_000_000
)

// guardName is the guard's variable name: random per process, so no expression can name it, bind
// over it or call it.
var guardName = func() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "sinewguard" + hex.EncodeToString(b[:])
}()

// budget is one evaluation's count of lambda calls.
type budget struct {
	depth, calls int
	stopped      atomic.Bool // the caller gave up: end at the next lambda call
}

func (b *budget) ext() jsonatalib.Extension {
	return jsonatalib.Extension{Func: func(body jtypes.Callable) (any, error) {
		if b.stopped.Load() {
			return nil, &Error{Msg: "the evaluation was stopped"}
		}
		if b.depth >= MaxDepth {
			return nil, &Error{Msg: fmt.Sprintf("D1001: the expression recursed more than %d levels deep", MaxDepth)}
		}
		if b.calls++; b.calls > MaxCalls {
			return nil, &Error{Msg: fmt.Sprintf("the expression made more than %d function calls", MaxCalls)}
		}
		b.depth++
		defer func() { b.depth-- }()
		v, err := body.Call(nil)
		if err != nil {
			return nil, err
		}
		if !v.IsValid() {
			return nil, jtypes.ErrUndefined
		}
		return v.Interface(), nil
	}}
}

// guardLambdas rewrites src so that each lambda body B, in `function(...){B}` and `λ(...){B}`
// (with or without a signature), becomes `$guard(function(){B})`: the body runs as a closure with the
// same variables and context, through the guard. It scans tokens as the library's lexer does, so
// strings, quoted names and regular expressions are copied as they are.
func guardLambdas(src string) string {
	var out strings.Builder
	out.Grow(len(src) + 32)
	var braces []bool // for each open '{': is it a guarded lambda body?
	operand := false  // the last token ends an operand, so '/' is division, not a regex
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v':
			out.WriteByte(c)
			i++
			continue
		case c == '"' || c == '\'':
			j := scanQuoted(src, i, c, true)
			out.WriteString(src[i:j])
			i, operand = j, true
			continue
		case c == '`':
			j := scanQuoted(src, i, c, false)
			out.WriteString(src[i:j])
			i, operand = j, true
			continue
		case c == '/' && !operand:
			j := scanRegex(src, i)
			out.WriteString(src[i:j])
			i, operand = j, true
			continue
		case c == '{':
			braces = append(braces, false)
			out.WriteByte(c)
			i, operand = i+1, false
			continue
		case c == '}':
			if n := len(braces); n > 0 {
				if braces[n-1] {
					out.WriteString("})")
				}
				braces = braces[:n-1]
			}
			out.WriteByte(c)
			i, operand = i+1, true
			continue
		case c == ')' || c == ']':
			out.WriteByte(c)
			i, operand = i+1, true
			continue
		case strings.IndexByte("[(.,;:?+-*/%|=<>^&!~", c) >= 0:
			out.WriteByte(c)
			i, operand = i+1, false
			continue
		}
		// A name, variable or number: up to whitespace or a symbol, as the lexer reads names.
		j := i
		for j < len(src) {
			r, size := utf8.DecodeRuneInString(src[j:])
			if r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || (r < utf8.RuneSelf && strings.IndexByte("[]{}().,;:?+-*/%|=<>^&!~\"'`", byte(r)) >= 0) {
				break
			}
			j += size
		}
		word := src[i:j]
		out.WriteString(word)
		i = j
		operand = word != "and" && word != "or" && word != "in"
		if word != "function" && word != "λ" {
			continue
		}
		// A lambda: its parameters, an optional signature, then its body's '{'.
		k := skipSpace(src, i)
		if k >= len(src) || src[k] != '(' {
			continue
		}
		end := strings.IndexByte(src[k:], ')')
		if end < 0 {
			continue
		}
		k = skipSpace(src, k+end+1)
		if k < len(src) && src[k] == '<' {
			depth := 0
			for ; k < len(src); k++ {
				if src[k] == '<' {
					depth++
				} else if src[k] == '>' {
					if depth--; depth == 0 {
						break
					}
				}
			}
			if k >= len(src) {
				continue
			}
			k = skipSpace(src, k+1)
		}
		if k >= len(src) || src[k] != '{' {
			continue
		}
		out.WriteString(src[i : k+1])
		out.WriteString("$" + guardName + "(function(){")
		braces = append(braces, true)
		i, operand = k+1, false
	}
	return out.String()
}

func skipSpace(s string, i int) int {
	for i < len(s) && strings.IndexByte(" \t\n\r\v", s[i]) >= 0 {
		i++
	}
	return i
}

// scanQuoted gives the end of the quoted token starting at i (after its closing quote, or the end
// of s when it is unterminated).
func scanQuoted(s string, i int, quote byte, escapes bool) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case quote:
			return j + 1
		case '\\':
			if escapes {
				j++
			}
		}
	}
	return len(s)
}

// scanRegex gives the end of the regex starting at i, with its flags: the lexer's rule, where the
// closing '/' counts only outside brackets.
func scanRegex(s string, i int) int {
	depth := 0
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '/':
			if depth == 0 {
				j++
				for j < len(s) && strings.IndexByte("ims", s[j]) >= 0 {
					j++
				}
				return j
			}
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case '\\':
			j++
		case '\n':
			return j
		}
	}
	return len(s)
}
