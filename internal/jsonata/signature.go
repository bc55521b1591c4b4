package jsonata

import (
	"regexp"
	"strings"
)

// signature is a function signature such as <s-nn?:s>: each parameter's accepted types, whether
// the context stands in for a missing first argument (-), optional (?) and variadic (+) ones.
type signature struct {
	definition string
	params     []sigParam
	re         *regexp.Regexp
}

type sigParam struct {
	typ          string // s n b l o a f j x or (choice)
	regex        string
	context      bool
	contextRegex *regexp.Regexp
	array        bool
	subtype      string
}

var arraySubtypeName = map[string]string{"a": "arrays", "b": "booleans", "f": "functions", "n": "numbers", "o": "objects", "s": "strings"}

func mustSignature(s string) *signature {
	sig, err := parseSignature(s)
	if err != nil {
		panic(err)
	}
	return sig
}

func parseSignature(s string) (*signature, error) {
	sig := &signature{definition: s}
	var params []sigParam
	param := sigParam{}
	prev := -1 // index into params of the previous parameter
	for pos := 1; pos < len(s); pos++ {
		c := s[pos]
		if c == ':' {
			break
		}
		next := func() {
			params = append(params, param)
			prev = len(params) - 1
			param = sigParam{}
		}
		switch c {
		case 's', 'n', 'b', 'l', 'o':
			param.regex, param.typ = "["+string(c)+"m]", string(c)
			next()
		case 'a':
			param.regex, param.typ, param.array = "[asnblfom]", "a", true
			next()
		case 'f':
			param.regex, param.typ = "f", "f"
			next()
		case 'j':
			param.regex, param.typ = "[asnblom]", "j"
			next()
		case 'x':
			param.regex, param.typ = "[asnblfom]", "x"
			next()
		case '-':
			if prev >= 0 {
				params[prev].context = true
				params[prev].contextRegex = regexp.MustCompile(params[prev].regex)
				params[prev].regex += "?"
			}
		case '?', '+':
			if prev >= 0 {
				params[prev].regex += string(c)
			}
		case '(':
			end := closing(s, pos, '(', ')')
			choice := s[pos+1 : end]
			if strings.Contains(choice, "<") {
				return nil, &Error{Code: "S0402", Value: choice, Position: pos}
			}
			param.regex, param.typ = "["+choice+"m]", "("+choice+")"
			pos = end
			next()
		case '<':
			if prev >= 0 && (params[prev].typ == "a" || params[prev].typ == "f") {
				end := closing(s, pos, '<', '>')
				params[prev].subtype = s[pos+1 : end]
				pos = end
			} else {
				t := ""
				if prev >= 0 {
					t = params[prev].typ
				}
				return nil, &Error{Code: "S0401", Value: t, Position: pos}
			}
		}
	}
	var b strings.Builder
	b.WriteString("^")
	for _, p := range params {
		b.WriteString("(" + p.regex + ")")
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, &Error{Code: "S0401", Value: s}
	}
	sig.params, sig.re = params, re
	return sig, nil
}

func closing(s string, start int, open, close byte) int {
	depth := 1
	pos := start
	for pos < len(s)-1 {
		pos++
		if s[pos] == close {
			depth--
			if depth == 0 {
				break
			}
		} else if s[pos] == open {
			depth++
		}
	}
	return pos
}

func typeSymbol(v any) byte {
	switch v.(type) {
	case nil:
		return 'm'
	case string:
		return 's'
	case float64:
		return 'n'
	case bool:
		return 'b'
	case nullT:
		return 'l'
	case *Array:
		return 'a'
	case *Object:
		return 'o'
	case *Lambda, *Native, *partialNative:
		return 'f'
	}
	return 'm'
}

// validate checks args against the signature and gives the arguments the function receives: the
// context in place of a missing first argument, a single value wrapped where an array is expected.
func (sig *signature) validate(args []any, context any) ([]any, error) {
	var b strings.Builder
	for _, a := range args {
		b.WriteByte(typeSymbol(a))
	}
	supplied := b.String()
	m := sig.re.FindStringSubmatch(supplied)
	if m == nil {
		return nil, sig.validationError(args, supplied)
	}
	out := make([]any, 0, len(sig.params))
	argIndex := 0
	for i, param := range sig.params {
		match := m[i+1]
		if match == "" {
			if param.context && param.contextRegex != nil {
				if param.contextRegex.MatchString(string(typeSymbol(context))) {
					out = append(out, context)
				} else {
					return nil, &Error{Code: "T0411", Value: context, Index: argIndex + 1}
				}
			} else {
				var a any
				if argIndex < len(args) {
					a = args[argIndex]
				}
				out = append(out, a)
				argIndex++
			}
			continue
		}
		for _, single := range []byte(match) {
			arg := args[argIndex]
			if param.typ == "a" {
				if single == 'm' {
					arg = nil
				} else {
					if err := checkArraySubtype(param, single, match, arg, argIndex); err != nil {
						return nil, err
					}
					if single != 'a' {
						arg = &Array{Items: []any{arg}}
					}
				}
			}
			out = append(out, arg)
			argIndex++
		}
	}
	return out, nil
}

func checkArraySubtype(param sigParam, single byte, match string, arg any, argIndex int) error {
	if param.subtype == "" {
		return nil
	}
	ok := true
	if single != 'a' && match != param.subtype {
		ok = false
	} else if single == 'a' {
		items := arg.(*Array).Items
		if len(items) > 0 {
			t := typeSymbol(items[0])
			if t != param.subtype[0] {
				ok = false
			} else {
				for _, it := range items {
					if typeSymbol(it) != t {
						ok = false
						break
					}
				}
			}
		}
	}
	if !ok {
		return &Error{Code: "T0412", Value: arg, Index: argIndex + 1, Type: arraySubtypeName[param.subtype]}
	}
	return nil
}

func (sig *signature) validationError(args []any, supplied string) error {
	partial := "^"
	goodTo := 0
	for _, p := range sig.params {
		partial += p.regex
		re, err := regexp.Compile(partial)
		if err != nil {
			break
		}
		m := re.FindString(supplied)
		if !re.MatchString(supplied) {
			var v any
			if goodTo < len(args) {
				v = args[goodTo]
			}
			return &Error{Code: "T0410", Value: v, Index: goodTo + 1}
		}
		goodTo = len(m)
	}
	var v any
	if goodTo < len(args) {
		v = args[goodTo]
	}
	return &Error{Code: "T0410", Value: v, Index: goodTo + 1}
}
