package pyexpr

import (
	"strings"
)

func (p *parser) atom() (node, error) {
	t := p.peek()
	switch t.kind {
	case tEOF:
		return nil, p.errf(t, "unexpected end of the expression")
	case tInt:
		p.advance()
		return &constNode{p: p.at(t), v: t.ival}, nil
	case tFloat:
		p.advance()
		return &constNode{p: p.at(t), v: t.fval}, nil
	case tStr:
		return p.strings()
	case tName:
		p.advance()
		switch t.text {
		case "True":
			return &constNode{p: p.at(t), v: true}, nil
		case "False":
			return &constNode{p: p.at(t), v: false}, nil
		case "None":
			return &constNode{p: p.at(t), v: nil}, nil
		}
		if keywords[t.text] {
			return nil, p.errf(t, "unexpected keyword %q", t.text)
		}
		return &nameNode{p: p.at(t), id: t.text}, nil
	}
	switch t.text {
	case "(":
		p.advance()
		return p.parens(t)
	case "[":
		p.advance()
		return p.listDisplay(t)
	case "{":
		p.advance()
		return p.dictDisplay(t)
	case "...":
		return nil, p.unsupported(t, "Ellipsis (...)", "it has no JSON value")
	}
	return nil, p.errf(t, "unexpected %q", t.text)
}

// strings joins adjacent string literals, as Python does; any f-string among them makes the
// whole an f-string.
func (p *parser) strings() (node, error) {
	first := p.peek()
	var parts []fpart
	isF := false
	for p.peek().kind == tStr {
		t := p.advance()
		if !t.fstr {
			parts = append(parts, fpart{lit: t.str})
			continue
		}
		isF = true
		// The body starts after the prefix and the opening quotes.
		off := strings.Index(t.text, t.str)
		if t.str == "" {
			off = 0
		}
		fp, err := parseFString(t.str, t.raw, p.base+t.pos+off)
		if err != nil {
			return nil, err
		}
		parts = append(parts, fp...)
	}
	if !isF {
		var b strings.Builder
		for _, x := range parts {
			b.WriteString(x.lit)
		}
		return &constNode{p: p.at(first), v: b.String()}, nil
	}
	return &fstrNode{p: p.at(first), parts: mergeLits(parts)}, nil
}

func mergeLits(parts []fpart) []fpart {
	var out []fpart
	for _, x := range parts {
		if x.x == nil && len(out) > 0 && out[len(out)-1].x == nil {
			out[len(out)-1].lit += x.lit
			continue
		}
		if x.x == nil && x.lit == "" {
			continue
		}
		out = append(out, x)
	}
	return out
}

func (p *parser) parens(open token) (node, error) {
	if p.accept(")") {
		return &listNode{p: p.at(open), tuple: true}, nil
	}
	first, err := p.expr()
	if err != nil {
		return nil, err
	}
	if p.isName("for") {
		g, err := p.comprehension('g', nil, first, open)
		if err != nil {
			return nil, err
		}
		return g, p.expect(")")
	}
	if p.accept(")") {
		return first, nil
	}
	elts := []node{first}
	for p.accept(",") {
		if p.isOp(")") {
			break
		}
		n, err := p.expr()
		if err != nil {
			return nil, err
		}
		elts = append(elts, n)
	}
	if err := p.expect(")"); err != nil {
		return nil, err
	}
	return &listNode{p: p.at(open), elts: elts, tuple: true}, nil
}

// starOr parses an element of a list display: an expression or *iterable.
func (p *parser) starOr() (node, error) {
	if p.isOp("*") {
		t := p.advance()
		x, err := p.orTest()
		if err != nil {
			return nil, err
		}
		return &starNode{p: p.at(t), x: x}, nil
	}
	return p.expr()
}

func (p *parser) listDisplay(open token) (node, error) {
	l := &listNode{p: p.at(open)}
	for !p.isOp("]") {
		e, err := p.starOr()
		if err != nil {
			return nil, err
		}
		if len(l.elts) == 0 && p.isName("for") {
			c, err := p.comprehension('[', nil, e, open)
			if err != nil {
				return nil, err
			}
			return c, p.expect("]")
		}
		l.elts = append(l.elts, e)
		if !p.accept(",") {
			break
		}
	}
	return l, p.expect("]")
}

func (p *parser) dictDisplay(open token) (node, error) {
	if p.accept("}") {
		return &dictNode{p: p.at(open)}, nil
	}
	if p.isOp("**") {
		return p.dictRest(&dictNode{p: p.at(open)})
	}
	first, err := p.expr()
	if err != nil {
		return nil, err
	}
	if !p.isOp(":") {
		// A set display or set comprehension.
		if p.isName("for") {
			c, err := p.comprehension('s', nil, first, open)
			if err != nil {
				return nil, err
			}
			return c, p.expect("}")
		}
		s := &setNode{p: p.at(open), elts: []node{first}}
		for p.accept(",") && !p.isOp("}") {
			e, err := p.expr()
			if err != nil {
				return nil, err
			}
			s.elts = append(s.elts, e)
		}
		return s, p.expect("}")
	}
	p.advance()
	v, err := p.expr()
	if err != nil {
		return nil, err
	}
	if p.isName("for") {
		c, err := p.comprehension('{', first, v, open)
		if err != nil {
			return nil, err
		}
		return c, p.expect("}")
	}
	d := &dictNode{p: p.at(open), keys: []node{first}, vals: []node{v}}
	if !p.accept(",") {
		return d, p.expect("}")
	}
	return p.dictRest(d)
}

// dictRest parses the entries after a dict display's first: key: value, or **mapping (a nil key).
func (p *parser) dictRest(d *dictNode) (node, error) {
	for !p.isOp("}") {
		if p.accept("**") {
			m, err := p.binary(0)
			if err != nil {
				return nil, err
			}
			d.keys, d.vals = append(d.keys, nil), append(d.vals, m)
			if !p.accept(",") {
				break
			}
			continue
		}
		k, err := p.expr()
		if err != nil {
			return nil, err
		}
		if err := p.expect(":"); err != nil {
			return nil, err
		}
		v, err := p.expr()
		if err != nil {
			return nil, err
		}
		d.keys, d.vals = append(d.keys, k), append(d.vals, v)
		if !p.accept(",") {
			break
		}
	}
	return d, p.expect("}")
}

// comprehension parses the "for ... in ... [if ...]" clauses after the element.
func (p *parser) comprehension(kind byte, key, elt node, open token) (node, error) {
	c := &compNode{p: p.at(open), kind: kind, key: key, elt: elt}
	for p.isName("for") {
		p.advance()
		var f compFor
		paren := p.accept("(")
		for {
			t := p.advance()
			if t.kind != tName || keywords[t.text] {
				return nil, p.unsupported(t, "a comprehension target other than names", "iterate with names, e.g. for k, v in d.items()")
			}
			f.vars = append(f.vars, t.text)
			if !p.accept(",") {
				break
			}
			f.tuple = true
		}
		if paren {
			if err := p.expect(")"); err != nil {
				return nil, err
			}
			f.tuple = f.tuple || len(f.vars) > 1
		}
		if err := p.expect("in"); err != nil {
			return nil, err
		}
		it, err := p.orTest()
		if err != nil {
			return nil, err
		}
		f.iter = it
		for p.isName("if") {
			p.advance()
			cond, err := p.orTestNoCond()
			if err != nil {
				return nil, err
			}
			f.ifs = append(f.ifs, cond)
		}
		c.fors = append(c.fors, f)
	}
	if p.isName("async") {
		return nil, p.unsupported(p.peek(), "async comprehension", "")
	}
	return c, nil
}

// orTestNoCond is a comprehension's condition: an or_test (a conditional expression would need
// parentheses there).
func (p *parser) orTestNoCond() (node, error) { return p.orTest() }
