package asl

import (
	"math"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"sinew/internal/jsonv"
)

// decodeJSON parses one JSON document into jsonv's forms, as jsonv.Decode does, without
// reflection: encoding/json's decoding into interface values was the largest cost of starting an
// execution and of every Lambda answer. It accepts exactly what encoding/json accepts and gives
// the same values (a fuzz test holds it to that); anything it does not take whole, a malformed
// document included, goes to jsonv.Decode, so errors read as they always did.
func decodeJSON(data []byte) (any, error) {
	if v, ok := decodeFast(string(data)); ok { // one copy, which the value's strings then share
		return v, nil
	}
	return jsonv.Decode(data)
}

// decodeJSONString is decodeJSON of a string; the strings of the value share its memory.
func decodeJSONString(s string) (any, error) {
	if v, ok := decodeFast(s); ok {
		return v, nil
	}
	return jsonv.DecodeString(s)
}

// decodeFast is the decoder's reading of s, with a pooled scratch stack.
func decodeFast(s string) (any, bool) {
	sp := decodeStacks.Get().(*[]any)
	d := decoder{s: s, stack: (*sp)[:0]}
	v, ok := d.document()
	if cap(d.stack) <= maxPooledStack {
		if !ok {
			clear(d.stack[:cap(d.stack)]) // a failed read may leave values behind
		}
		*sp = d.stack[:0]
		decodeStacks.Put(sp)
	}
	return v, ok
}

// decodeStacks are the decoder's scratch stacks for array elements.
var decodeStacks = sync.Pool{New: func() any { s := make([]any, 0, 64); return &s }}

// maxPooledStack keeps a rare huge array's stack out of the pool.
const maxPooledStack = 16 << 10

// maxDecodeDepth is encoding/json's nesting limit.
const maxDecodeDepth = 10000

type decoder struct {
	s     string
	i     int
	depth int
	stack []any // the elements of the arrays being read, so each array is allocated once, to size
}

func (d *decoder) document() (any, bool) {
	v, ok := d.value()
	if !ok {
		return nil, false
	}
	d.space()
	return v, d.i == len(d.s)
}

func (d *decoder) space() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *decoder) value() (any, bool) {
	d.space()
	if d.i >= len(d.s) {
		return nil, false
	}
	switch c := d.s[d.i]; {
	case c == '{':
		return d.object()
	case c == '[':
		return d.array()
	case c == '"':
		s, ok := d.str()
		return s, ok
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	default:
		return d.literal()
	}
}

func (d *decoder) literal() (any, bool) {
	for _, l := range [...]struct {
		text string
		v    any
	}{{"true", true}, {"false", false}, {"null", nil}} {
		if len(d.s)-d.i >= len(l.text) && d.s[d.i:d.i+len(l.text)] == l.text {
			d.i += len(l.text)
			return l.v, true
		}
	}
	return nil, false
}

func (d *decoder) object() (any, bool) {
	if d.depth++; d.depth > maxDecodeDepth {
		return nil, false
	}
	d.i++ // {
	m := map[string]any{}
	d.space()
	if d.i < len(d.s) && d.s[d.i] == '}' {
		d.i++
		d.depth--
		return m, true
	}
	for {
		d.space()
		if d.i >= len(d.s) || d.s[d.i] != '"' {
			return nil, false
		}
		k, ok := d.str()
		if !ok {
			return nil, false
		}
		d.space()
		if d.i >= len(d.s) || d.s[d.i] != ':' {
			return nil, false
		}
		d.i++
		v, ok := d.value()
		if !ok {
			return nil, false
		}
		m[k] = v
		d.space()
		if d.i >= len(d.s) {
			return nil, false
		}
		switch d.s[d.i] {
		case ',':
			d.i++
		case '}':
			d.i++
			d.depth--
			return m, true
		default:
			return nil, false
		}
	}
}

func (d *decoder) array() (any, bool) {
	if d.depth++; d.depth > maxDecodeDepth {
		return nil, false
	}
	d.i++ // [
	d.space()
	if d.i < len(d.s) && d.s[d.i] == ']' {
		d.i++
		d.depth--
		return []any{}, true
	}
	base := len(d.stack)
	for {
		v, ok := d.value()
		if !ok {
			return nil, false
		}
		d.stack = append(d.stack, v)
		d.space()
		if d.i >= len(d.s) {
			return nil, false
		}
		switch d.s[d.i] {
		case ',':
			d.i++
		case ']':
			d.i++
			d.depth--
			a := make([]any, len(d.stack)-base)
			copy(a, d.stack[base:])
			clear(d.stack[base:]) // the scratch keeps no values alive
			d.stack = d.stack[:base]
			return a, true
		default:
			return nil, false
		}
	}
}

// number reads a number of JSON's grammar and converts it as jsonv does: an integer literal that
// fits is an int64, anything else a float64 (+Inf when out of range).
func (d *decoder) number() (any, bool) {
	start := d.i
	if d.s[d.i] == '-' {
		d.i++
	}
	switch {
	case d.i < len(d.s) && d.s[d.i] == '0':
		d.i++
	case d.i < len(d.s) && d.s[d.i] >= '1' && d.s[d.i] <= '9':
		d.digits()
	default:
		return nil, false
	}
	integral := true
	if d.i < len(d.s) && d.s[d.i] == '.' {
		integral = false
		d.i++
		if !d.digits() {
			return nil, false
		}
	}
	if d.i < len(d.s) && (d.s[d.i] == 'e' || d.s[d.i] == 'E') {
		integral = false
		d.i++
		if d.i < len(d.s) && (d.s[d.i] == '+' || d.s[d.i] == '-') {
			d.i++
		}
		if !d.digits() {
			return nil, false
		}
	}
	text := d.s[start:d.i]
	if integral {
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			return n, true
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return math.Inf(1), true
	}
	return f, true
}

// digits skips a run of decimal digits and reports whether there was one.
func (d *decoder) digits() bool {
	start := d.i
	for d.i < len(d.s) && d.s[d.i] >= '0' && d.s[d.i] <= '9' {
		d.i++
	}
	return d.i > start
}

// str reads a string literal. One of plain printable text (valid UTF-8, no escapes) is taken as
// it stands; any other goes through unquote.
func (d *decoder) str() (string, bool) {
	d.i++ // "
	start := d.i
	plain := true
	for ; d.i < len(d.s); d.i++ {
		c := d.s[d.i]
		switch {
		case c == '"':
			s := d.s[start:d.i]
			d.i++
			if !plain || !utf8.ValidString(s) {
				return unquote(s)
			}
			return s, true
		case c == '\\':
			plain = false
			d.i++ // the escaped byte cannot end the string
		case c < 0x20:
			return "", false
		}
	}
	return "", false
}

// unquote decodes the body of a string literal with escapes or invalid UTF-8 as encoding/json
// does: invalid bytes and lone surrogates become U+FFFD.
func unquote(s string) (string, bool) {
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 >= len(s) {
				return "", false
			}
			i++
			switch e := s[i]; e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, ok := hex4(s, i+1)
				if !ok {
					return "", false
				}
				i += 4
				if utf16.IsSurrogate(r) {
					if r2, ok := hex4(s, i+3); ok && i+2 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							i += 6
							b = utf8.AppendRune(b, dec)
							break
						}
					}
					r = utf8.RuneError
				}
				b = utf8.AppendRune(b, r)
			default:
				return "", false
			}
			i++
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
		}
	}
	return string(b), true
}

// hex4 reads the four hex digits of a \u escape at s[i:].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	return r, true
}
