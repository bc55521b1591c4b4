package pyexpr

import (
	"fmt"
)

// parser is a recursive-descent parser of Python's expression grammar
// (https://docs.python.org/3/reference/expressions.html), the part Julep's evaluator accepts.
type parser struct {
	src  string
	base int // offset of src in the expression as the user wrote it (f-string fields)
	toks []token
	k    int
}

// parseExpr parses one Python expression (eval mode: a bare tuple is allowed).
func parseExpr(src string) (node, error) {
	return parseAt(src, 0)
}

func parseAt(src string, base int) (node, error) {
	lx := &lexer{src: src}
	toks, err := lx.all()
	if err != nil {
		return nil, err
	}
	p := &parser{src: src, base: base, toks: toks}
	if p.peek().kind == tEOF {
		return nil, p.errf(p.peek(), "empty expression")
	}
	n, err := p.exprList()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		if t.text == ":=" {
			return nil, p.unsupported(t, "an assignment expression (:=)", "Julep's evaluator refuses the walrus operator")
		}
		return nil, p.errf(t, "unexpected %q", t.text)
	}
	return n, nil
}

func (p *parser) peek() token { return p.toks[p.k] }
func (p *parser) advance() token {
	t := p.toks[p.k]
	if t.kind != tEOF {
		p.k++
	}
	return t
}
func (p *parser) isOp(s string) bool   { t := p.peek(); return t.kind == tOp && t.text == s }
func (p *parser) isName(s string) bool { t := p.peek(); return t.kind == tName && t.text == s }
func (p *parser) accept(s string) bool {
	if p.isOp(s) || p.isName(s) {
		p.k++
		return true
	}
	return false
}

func (p *parser) expect(s string) error {
	if !p.accept(s) {
		t := p.peek()
		if t.kind == tEOF {
			return p.errf(t, "expected %q, found the end of the expression", s)
		}
		return p.errf(t, "expected %q, found %q", s, t.text)
	}
	return nil
}

func (p *parser) errf(t token, format string, a ...any) error {
	return &SyntaxError{Pos: p.base + t.pos, Msg: fmt.Sprintf(format, a...)}
}

func (p *parser) unsupported(t token, construct, reason string) error {
	return &Unsupported{Pos: p.base + t.pos, Construct: construct, Reason: reason}
}

func (p *parser) at(t token) int { return p.base + t.pos }

// keywords that can never be names.
var keywords = map[string]bool{
	"and": true, "or": true, "not": true, "in": true, "is": true, "if": true, "else": true,
	"for": true, "lambda": true, "None": true, "True": true, "False": true, "await": true,
	"yield": true, "import": true, "def": true, "class": true, "return": true, "del": true,
	"global": true, "nonlocal": true, "pass": true, "raise": true, "try": true, "except": true,
	"finally": true, "while": true, "with": true, "as": true, "assert": true, "async": true,
	"break": true, "continue": true, "from": true, "elif": true,
}

// exprList is expression ("," expression)* [","]: more than one, or a trailing comma, is a tuple.
func (p *parser) exprList() (node, error) {
	start := p.peek()
	first, err := p.expr()
	if err != nil {
		return nil, err
	}
	if !p.isOp(",") {
		return first, nil
	}
	elts := []node{first}
	for p.accept(",") {
		if p.endsList() {
			break
		}
		n, err := p.expr()
		if err != nil {
			return nil, err
		}
		elts = append(elts, n)
	}
	return &listNode{p: p.at(start), elts: elts, tuple: true}, nil
}

func (p *parser) endsList() bool {
	t := p.peek()
	return t.kind == tEOF || t.kind == tOp && (t.text == ")" || t.text == "]" || t.text == "}" || t.text == "=")
}

// expr is a conditional expression or a lambda.
func (p *parser) expr() (node, error) {
	t := p.peek()
	if p.isOp("**") {
		return nil, p.unsupported(t, "unpacking (**)", "** unpacks only inside a dict display")
	}
	if p.isOp("*") {
		return nil, p.unsupported(t, "unpacking (*)", "* unpacks only inside a list display")
	}
	if p.isName("lambda") {
		return p.lambda()
	}
	if p.isName("yield") || p.isName("await") {
		return nil, p.unsupported(t, "'"+t.text+"'", "it is not an expression Julep evaluates")
	}
	x, err := p.orTest()
	if err != nil {
		return nil, err
	}
	if p.isOp(":=") {
		return nil, p.unsupported(p.peek(), "an assignment expression (:=)", "Julep's evaluator refuses the walrus operator")
	}
	if !p.isName("if") {
		return x, nil
	}
	it := p.advance()
	test, err := p.orTest()
	if err != nil {
		return nil, err
	}
	if err := p.expect("else"); err != nil {
		return nil, err
	}
	els, err := p.expr()
	if err != nil {
		return nil, err
	}
	return &condNode{p: p.at(it), then: x, test: test, els: els}, nil
}

func (p *parser) lambda() (node, error) {
	t := p.advance()
	var params []string
	for !p.isOp(":") {
		pt := p.peek()
		if pt.kind != tName || keywords[pt.text] {
			if pt.kind == tOp && (pt.text == "*" || pt.text == "**" || pt.text == "=") {
				return nil, p.unsupported(pt, "a lambda with default or variadic parameters", "use plain parameters")
			}
			return nil, p.errf(pt, "expected a parameter name, found %q", pt.text)
		}
		p.advance()
		params = append(params, pt.text)
		if p.isOp("=") {
			return nil, p.unsupported(p.peek(), "a lambda with default or variadic parameters", "use plain parameters")
		}
		if !p.accept(",") {
			break
		}
	}
	if err := p.expect(":"); err != nil {
		return nil, err
	}
	body, err := p.expr()
	if err != nil {
		return nil, err
	}
	return &lambdaNode{p: p.at(t), params: params, body: body}, nil
}

func (p *parser) orTest() (node, error) {
	x, err := p.andTest()
	for err == nil && p.isName("or") {
		t := p.advance()
		var y node
		if y, err = p.andTest(); err == nil {
			x = &boolNode{p: p.at(t), op: "or", x: x, y: y}
		}
	}
	return x, err
}

func (p *parser) andTest() (node, error) {
	x, err := p.notTest()
	for err == nil && p.isName("and") {
		t := p.advance()
		var y node
		if y, err = p.notTest(); err == nil {
			x = &boolNode{p: p.at(t), op: "and", x: x, y: y}
		}
	}
	return x, err
}

func (p *parser) notTest() (node, error) {
	if p.isName("not") {
		t := p.advance()
		x, err := p.notTest()
		if err != nil {
			return nil, err
		}
		return &unaryNode{p: p.at(t), op: "not", x: x}, nil
	}
	return p.comparison()
}

func (p *parser) cmpOp() string {
	t := p.peek()
	switch {
	case t.kind == tOp && (t.text == "<" || t.text == ">" || t.text == "==" || t.text == "!=" || t.text == "<=" || t.text == ">="):
		p.advance()
		return t.text
	case t.kind == tName && t.text == "in":
		p.advance()
		return "in"
	case t.kind == tName && t.text == "not" && p.toks[p.k+1].kind == tName && p.toks[p.k+1].text == "in":
		p.k += 2
		return "not in"
	case t.kind == tName && t.text == "is":
		p.advance()
		if p.accept("not") {
			return "is not"
		}
		return "is"
	}
	return ""
}

func (p *parser) comparison() (node, error) {
	start := p.peek()
	x, err := p.binary(0)
	if err != nil {
		return nil, err
	}
	var c *cmpNode
	for {
		op := p.cmpOp()
		if op == "" {
			break
		}
		y, err := p.binary(0)
		if err != nil {
			return nil, err
		}
		if c == nil {
			c = &cmpNode{p: p.at(start), x: x}
		}
		c.ops, c.ys = append(c.ops, op), append(c.ys, y)
	}
	if c == nil {
		return x, nil
	}
	return c, nil
}

// Binary operator levels, loosest first.
var binLevels = [][]string{{"|"}, {"^"}, {"&"}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "//", "%", "@"}}

func (p *parser) binary(level int) (node, error) {
	if level == len(binLevels) {
		return p.unary()
	}
	x, err := p.binary(level + 1)
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.kind != tOp || !contains(binLevels[level], t.text) {
			return x, nil
		}
		p.advance()
		y, err := p.binary(level + 1)
		if err != nil {
			return nil, err
		}
		x = &binaryNode{p: p.at(t), op: t.text, x: x, y: y}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (p *parser) unary() (node, error) {
	if t := p.peek(); t.kind == tOp && (t.text == "-" || t.text == "+" || t.text == "~") {
		p.advance()
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &unaryNode{p: p.at(t), op: t.text, x: x}, nil
	}
	return p.power()
}

// power is primary ["**" unary]: ** binds tighter than a unary minus on its left, looser on its right.
func (p *parser) power() (node, error) {
	x, err := p.primary()
	if err != nil {
		return nil, err
	}
	if p.isOp("**") {
		t := p.advance()
		y, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &binaryNode{p: p.at(t), op: "**", x: x, y: y}, nil
	}
	return x, nil
}

func (p *parser) primary() (node, error) {
	x, err := p.atom()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		switch {
		case t.kind == tOp && t.text == ".":
			p.advance()
			nt := p.advance()
			if nt.kind != tName {
				return nil, p.errf(nt, "expected an attribute name after '.'")
			}
			x = &attrNode{p: p.at(nt), x: x, name: nt.text}
		case t.kind == tOp && t.text == "[":
			p.advance()
			if x, err = p.subscript(x, t); err != nil {
				return nil, err
			}
		case t.kind == tOp && t.text == "(":
			p.advance()
			if x, err = p.call(x, t); err != nil {
				return nil, err
			}
		default:
			return x, nil
		}
	}
}

func (p *parser) subscript(x node, open token) (node, error) {
	var parts [3]node
	n, isSlice := 0, false
	for {
		if p.isOp(":") {
			p.advance()
			isSlice = true
			n++
			if n > 2 {
				return nil, p.errf(p.peek(), "too many ':' in a slice")
			}
			continue
		}
		if p.isOp("]") {
			p.advance()
			break
		}
		if parts[n] != nil {
			if p.isOp(",") {
				return nil, p.unsupported(p.peek(), "a tuple subscript (x[a, b])", "JSON values are indexed by one key or index")
			}
			return nil, p.errf(p.peek(), "expected ']' or ':'")
		}
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		parts[n] = e
	}
	if !isSlice {
		if parts[0] == nil {
			return nil, p.errf(open, "empty subscript")
		}
		return &indexNode{p: p.at(open), x: x, i: parts[0]}, nil
	}
	return &sliceNode{p: p.at(open), x: x, lo: parts[0], hi: parts[1], step: parts[2]}, nil
}

func (p *parser) call(fn node, open token) (node, error) {
	c := &callNode{p: p.at(open), fn: fn}
	for !p.isOp(")") {
		t := p.peek()
		if t.kind == tOp && (t.text == "*" || t.text == "**") {
			return nil, p.unsupported(t, "argument unpacking ("+t.text+")", "pass the arguments one by one")
		}
		if t.kind == tName && p.toks[p.k+1].kind == tOp && p.toks[p.k+1].text == "=" {
			p.k += 2
			v, err := p.expr()
			if err != nil {
				return nil, err
			}
			c.kw = append(c.kw, kwarg{name: t.text, v: v})
		} else {
			if len(c.kw) > 0 {
				return nil, p.errf(t, "positional argument follows keyword argument")
			}
			a, err := p.expr()
			if err != nil {
				return nil, err
			}
			if p.isName("for") {
				g, err := p.comprehension('g', nil, a, t)
				if err != nil {
					return nil, err
				}
				a = g
			}
			c.args = append(c.args, a)
		}
		if !p.accept(",") {
			break
		}
	}
	if err := p.expect(")"); err != nil {
		return nil, err
	}
	return c, nil
}
