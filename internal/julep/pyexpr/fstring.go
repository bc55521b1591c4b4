package pyexpr

import "strings"

// parseFString splits an f-string's body into literal text and replacement fields
// (https://docs.python.org/3/reference/lexical_analysis.html#f-strings). base is the body's
// offset in the whole expression.
func parseFString(body string, raw bool, base int) ([]fpart, error) {
	var parts []fpart
	var lit strings.Builder
	flush := func() error {
		if lit.Len() == 0 {
			return nil
		}
		s := lit.String()
		lit.Reset()
		if !raw {
			u, err := unescape(s)
			if err != nil {
				return &SyntaxError{Pos: base, Msg: err.Error()}
			}
			s = u
		}
		parts = append(parts, fpart{lit: s})
		return nil
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '{' && i+1 < len(body) && body[i+1] == '{':
			lit.WriteByte('{')
			i++
		case c == '}' && i+1 < len(body) && body[i+1] == '}':
			lit.WriteByte('}')
			i++
		case c == '}':
			return nil, &SyntaxError{Pos: base + i, Msg: "f-string: single '}' is not allowed"}
		case c == '\\' && !raw && i+1 < len(body):
			lit.WriteByte(c)
			lit.WriteByte(body[i+1])
			i++
		case c == '{':
			if err := flush(); err != nil {
				return nil, err
			}
			part, end, err := parseField(body, i+1, base)
			if err != nil {
				return nil, err
			}
			parts = append(parts, part)
			i = end
		default:
			lit.WriteByte(c)
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return parts, nil
}

// parseField parses the field starting at body[start] (after its '{'); end is the index of its
// closing '}'.
func parseField(body string, start, base int) (fpart, int, error) {
	depth := 0
	i := start
	var quote string
	for ; i < len(body); i++ {
		c := body[i]
		if quote != "" {
			if c == '\\' {
				i++
			} else if strings.HasPrefix(body[i:], quote) {
				i += len(quote) - 1
				quote = ""
			}
			continue
		}
		if c == '\'' || c == '"' {
			quote = string(c)
			if strings.HasPrefix(body[i:], quote+quote+quote) {
				quote = quote + quote + quote
				i += 2
			}
			continue
		}
		if c == '(' || c == '[' || c == '{' {
			depth++
			continue
		}
		if depth > 0 {
			if c == ')' || c == ']' || c == '}' {
				depth--
			}
			continue
		}
		if c == '}' || c == ':' || c == '!' && (i+1 >= len(body) || body[i+1] != '=') {
			break
		}
		if c == '=' && i+1 < len(body) && (body[i+1] == '}' || body[i+1] == '!' || body[i+1] == ':') &&
			i > start && !strings.ContainsRune("=!<>", rune(body[i-1])) {
			return fpart{}, 0, &Unsupported{Pos: base + i, Construct: "a self-documenting f-string field ({x=})", Reason: "write the label out: f'x={x}'"}
		}
	}
	if i >= len(body) {
		return fpart{}, 0, &SyntaxError{Pos: base + start - 1, Msg: "f-string: expecting '}'"}
	}
	src := body[start:i]
	if strings.TrimSpace(src) == "" {
		return fpart{}, 0, &SyntaxError{Pos: base + start, Msg: "f-string: empty expression not allowed"}
	}
	x, err := parseAt(src, base+start)
	if err != nil {
		return fpart{}, 0, err
	}
	part := fpart{x: x, src: strings.TrimSpace(src)}
	if body[i] == '!' {
		if i+1 >= len(body) || !strings.ContainsRune("sra", rune(body[i+1])) {
			return fpart{}, 0, &SyntaxError{Pos: base + i, Msg: "f-string: invalid conversion character: expected 's', 'r', or 'a'"}
		}
		part.conv = body[i+1]
		i += 2
	}
	if i < len(body) && body[i] == ':' {
		j := i + 1
		for j < len(body) && body[j] != '}' {
			if body[j] == '{' {
				return fpart{}, 0, &Unsupported{Pos: base + j, Construct: "a nested field in a format spec", Reason: "format the value with a fixed spec"}
			}
			j++
		}
		part.spec = body[i+1 : j]
		i = j
	}
	if i >= len(body) || body[i] != '}' {
		return fpart{}, 0, &SyntaxError{Pos: base + i, Msg: "f-string: expecting '}'"}
	}
	return part, i, nil
}
