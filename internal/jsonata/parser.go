package jsonata

// A Pratt parser (top-down operator precedence) for JSONata, and the pass that turns its tree
// into the evaluator's: paths of steps, predicates and stages, grouping, sorting, the focus (@)
// and index (#) bindings, and the parent operator (%) resolved to the step it refers to.

type node struct {
	typ      string // parse: "binary", "unary", "name", ...; processed: also "path", "bind", "apply", "sort", ...
	value    any
	position int
	id       string // the symbol: an operator, "(name)", "(literal)", "(regex)", "(end)"

	lhs, rhs      *node
	x             *nodeExt // the fields of some kinds of node only (the node is one per token)
	expression    *node
	expressions   []*node
	steps         []*node
	procedure     *node
	arguments     []*node
	body          *node
	predicate     []stage
	stages        []stage
	group         *node // its pairs; position
	keepArray     bool
	keepSingleton bool // path: keepSingletonArray
	consarray     bool
	tuple         bool
	focus         string
	index         string
	hasFocus      bool
	hasIndex      bool
	ancestor      *slot
	slot          *slot
	seeking       []*slot
}

// nodeExt holds what only object constructors and groups (pairs), sorts (terms), lambdas
// (signature, thunk), conditions and transforms have.
type nodeExt struct {
	pairs                [][2]*node
	terms                []sortTerm
	signature            *signature
	thunk                bool // a tail call waiting for the caller's loop to run it
	condition, then, els *node
	pattern, update, del *node
}

func (n *node) ext() *nodeExt {
	if n.x == nil {
		n.x = &nodeExt{}
	}
	return n.x
}

type sortTerm struct {
	descending bool
	expression *node
}

type stage struct {
	typ      string // "filter" or "index"
	expr     *node
	value    string
	position int
}

type slot struct {
	label string
	level int
	index int
}

var bindingPower = map[string]int{
	".": 75, "[": 80, "{": 70, "(": 80, "@": 80, "#": 80, "?": 20, "+": 50, "-": 50, "*": 60, "/": 60,
	"%": 60, "=": 40, "<": 40, ">": 40, "^": 40, "!=": 40, "<=": 40, ">=": 40, "~>": 40, "and": 30,
	"or": 25, "in": 40, "&": 50, ":=": 10,
}

// knownSymbols are operators the parser knows without an infix role (binding power 0).
var knownSymbols = map[string]bool{":": true, ";": true, ",": true, ")": true, "]": true, "}": true, "..": true, "**": true, "|": true}

// punctuation are the tokens that only separate or close: the parser consumes them and keeps none.
var punctuation = map[string]bool{")": true, ",": true, "]": true, "}": true, ":": true, ";": true}

type parser struct {
	lex  *lexer
	node *node
	src  string

	scratch node

	ancestorLabel int
	ancestry      []*node
	depth         int
}

// maxParseDepth bounds the nesting of an expression (the parser recurses on it).
const maxParseDepth = 1000

func (p *parser) lbp(n *node) int {
	if n.id == "(name)" || n.id == "(literal)" || n.id == "(regex)" || n.id == "(end)" {
		return 0
	}
	return bindingPower[n.id]
}

func (p *parser) advance(id string, infix bool) error {
	if id != "" && p.node.id != id {
		code := "S0202"
		if p.node.id == "(end)" {
			code = "S0203"
		}
		return &Error{Code: code, Position: p.node.position, Token: tokenText(p.node), Value: id}
	}
	t, err := p.lex.next(infix)
	if err != nil {
		return err
	}
	if t == nil {
		p.node = &node{id: "(end)", typ: "(end)", value: "(end)", position: len(p.src)}
		return nil
	}
	var n *node
	if op, ok := t.value.(string); ok && t.kind == tokOperator && punctuation[op] {
		// never part of the tree: one node serves them all
		n = &p.scratch
		*n = node{value: t.value, position: t.pos}
	} else {
		n = &node{value: t.value, position: t.pos}
	}
	switch t.kind {
	case tokName:
		n.id, n.typ = "(name)", "name"
	case tokVariable:
		n.id, n.typ = "(name)", "variable"
	case tokOperator:
		op := t.value.(string)
		if _, ok := bindingPower[op]; !ok && !knownSymbols[op] {
			return &Error{Code: "S0204", Position: t.pos, Token: op}
		}
		n.id, n.typ = op, "operator"
	case tokString:
		n.id, n.typ = "(literal)", "string"
	case tokNumber:
		n.id, n.typ = "(literal)", "number"
	case tokValue:
		n.id, n.typ = "(literal)", "value"
	case tokRegex:
		n.id, n.typ = "(regex)", "regex"
	}
	p.node = n
	return nil
}

func tokenText(n *node) string {
	switch v := n.value.(type) {
	case string:
		return v
	case float64:
		return numberString(v)
	case bool:
		if v {
			return "true"
		}
		return "false"
	case nullT:
		return "null"
	case *regexSpec:
		return v.source
	}
	return n.id
}

func (p *parser) expression(rbp int) (*node, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxParseDepth {
		return nil, &Error{Code: "U1001", Position: p.node.position, Msg: "The expression is nested too deeply"}
	}
	t := p.node
	if err := p.advance("", true); err != nil {
		return nil, err
	}
	left, err := p.nud(t)
	if err != nil {
		return nil, err
	}
	for rbp < p.lbp(p.node) {
		t = p.node
		if err := p.advance("", false); err != nil {
			return nil, err
		}
		if left, err = p.led(t, left); err != nil {
			return nil, err
		}
	}
	return left, nil
}

func (p *parser) nud(t *node) (*node, error) {
	switch t.id {
	case "(end)", "(name)", "(literal)", "(regex)", "and", "or", "in":
		return t, nil
	case "-":
		e, err := p.expression(70)
		if err != nil {
			return nil, err
		}
		t.expression, t.typ = e, "unary"
		return t, nil
	case "*":
		t.typ = "wildcard"
		return t, nil
	case "**":
		t.typ = "descendant"
		return t, nil
	case "%":
		t.typ = "parent"
		return t, nil
	case "(":
		return p.block(t)
	case "[":
		return p.arrayConstructor(t)
	case "{":
		return p.object(t, nil)
	case "|":
		return p.transform(t)
	}
	return nil, &Error{Code: "S0211", Token: tokenText(t), Position: t.position}
}

func (p *parser) led(t *node, left *node) (*node, error) {
	switch t.id {
	case "(":
		return p.call(t, left)
	case "[":
		return p.predicate(t, left)
	case "^":
		return p.sort(t, left)
	case "{":
		return p.object(t, left)
	case ":=":
		if left.typ != "variable" {
			return nil, &Error{Code: "S0212", Position: left.position, Token: tokenText(left)}
		}
		rhs, err := p.expression(bindingPower[":="] - 1)
		if err != nil {
			return nil, err
		}
		t.lhs, t.rhs, t.typ = left, rhs, "binary"
		return t, nil
	case "@", "#":
		rhs, err := p.expression(bindingPower[t.id])
		if err != nil {
			return nil, err
		}
		if rhs.typ != "variable" {
			return nil, &Error{Code: "S0214", Position: rhs.position, Token: t.id}
		}
		t.lhs, t.rhs, t.typ = left, rhs, "binary"
		return t, nil
	case "?":
		t.typ, t.ext().condition = "condition", left
		then, err := p.expression(0)
		if err != nil {
			return nil, err
		}
		t.x.then = then
		if p.node.id == ":" {
			if err := p.advance(":", false); err != nil {
				return nil, err
			}
			if t.x.els, err = p.expression(0); err != nil {
				return nil, err
			}
		}
		return t, nil
	}
	// the binary operators
	rhs, err := p.expression(bindingPower[t.id])
	if err != nil {
		return nil, err
	}
	t.lhs, t.rhs, t.typ = left, rhs, "binary"
	return t, nil
}

func (p *parser) call(t, left *node) (*node, error) {
	t.procedure, t.typ = left, "function"
	if p.node.id != ")" {
		for {
			if p.node.typ == "operator" && p.node.id == "?" {
				t.typ = "partial"
				t.arguments = append(t.arguments, p.node)
				if err := p.advance("?", false); err != nil {
					return nil, err
				}
			} else {
				a, err := p.expression(0)
				if err != nil {
					return nil, err
				}
				t.arguments = append(t.arguments, a)
			}
			if p.node.id != "," {
				break
			}
			if err := p.advance(",", false); err != nil {
				return nil, err
			}
		}
	}
	if err := p.advance(")", true); err != nil {
		return nil, err
	}
	if left.typ == "name" && (left.value == "function" || left.value == "λ") {
		return p.lambda(t)
	}
	return t, nil
}

func (p *parser) lambda(t *node) (*node, error) {
	t.ext()
	for i, a := range t.arguments {
		if a.typ != "variable" {
			return nil, &Error{Code: "S0208", Position: a.position, Token: tokenText(a), Value: float64(i + 1)}
		}
	}
	t.typ = "lambda"
	if p.node.id == "<" {
		sigPos := p.node.position
		depth := 1
		sig := "<"
		for depth > 0 && p.node.id != "{" && p.node.id != "(end)" {
			if err := p.advance("", false); err != nil {
				return nil, err
			}
			switch p.node.id {
			case ">":
				depth--
			case "<":
				depth++
			}
			sig += tokenText(p.node)
		}
		if err := p.advance(">", false); err != nil {
			return nil, err
		}
		s, err := parseSignature(sig)
		if err != nil {
			if e, ok := err.(*Error); ok {
				e.Position += sigPos
			}
			return nil, err
		}
		t.x.signature = s
	}
	if err := p.advance("{", false); err != nil {
		return nil, err
	}
	body, err := p.expression(0)
	if err != nil {
		return nil, err
	}
	t.body = body
	if err := p.advance("}", false); err != nil {
		return nil, err
	}
	return t, nil
}

func (p *parser) block(t *node) (*node, error) {
	for p.node.id != ")" {
		e, err := p.expression(0)
		if err != nil {
			return nil, err
		}
		t.expressions = append(t.expressions, e)
		if p.node.id != ";" {
			break
		}
		if err := p.advance(";", false); err != nil {
			return nil, err
		}
	}
	if err := p.advance(")", true); err != nil {
		return nil, err
	}
	t.typ = "block"
	return t, nil
}

func (p *parser) arrayConstructor(t *node) (*node, error) {
	t.expressions = []*node{}
	if p.node.id != "]" {
		for {
			item, err := p.expression(0)
			if err != nil {
				return nil, err
			}
			if p.node.id == ".." {
				r := &node{typ: "binary", value: "..", id: "..", position: p.node.position, lhs: item}
				if err := p.advance("..", false); err != nil {
					return nil, err
				}
				if r.rhs, err = p.expression(0); err != nil {
					return nil, err
				}
				item = r
			}
			t.expressions = append(t.expressions, item)
			if p.node.id != "," {
				break
			}
			if err := p.advance(",", false); err != nil {
				return nil, err
			}
		}
	}
	if err := p.advance("]", true); err != nil {
		return nil, err
	}
	t.typ = "unary"
	return t, nil
}

func (p *parser) predicate(t, left *node) (*node, error) {
	if p.node.id == "]" {
		step := left
		for step != nil && step.typ == "binary" && step.value == "[" {
			step = step.lhs
		}
		step.keepArray = true
		if err := p.advance("]", false); err != nil {
			return nil, err
		}
		return left, nil
	}
	rhs, err := p.expression(0)
	if err != nil {
		return nil, err
	}
	t.lhs, t.rhs, t.typ = left, rhs, "binary"
	if err := p.advance("]", true); err != nil {
		return nil, err
	}
	return t, nil
}

func (p *parser) sort(t, left *node) (*node, error) {
	t.ext()
	if err := p.advance("(", false); err != nil {
		return nil, err
	}
	for {
		term := sortTerm{}
		if p.node.id == "<" {
			if err := p.advance("<", false); err != nil {
				return nil, err
			}
		} else if p.node.id == ">" {
			term.descending = true
			if err := p.advance(">", false); err != nil {
				return nil, err
			}
		}
		e, err := p.expression(0)
		if err != nil {
			return nil, err
		}
		term.expression = e
		t.x.terms = append(t.x.terms, term)
		if p.node.id != "," {
			break
		}
		if err := p.advance(",", false); err != nil {
			return nil, err
		}
	}
	if err := p.advance(")", false); err != nil {
		return nil, err
	}
	t.lhs, t.typ = left, "binary"
	return t, nil
}

func (p *parser) object(t, left *node) (*node, error) {
	t.ext()
	t.x.pairs = [][2]*node{}
	if p.node.id != "}" {
		for {
			k, err := p.expression(0)
			if err != nil {
				return nil, err
			}
			if err := p.advance(":", false); err != nil {
				return nil, err
			}
			v, err := p.expression(0)
			if err != nil {
				return nil, err
			}
			t.x.pairs = append(t.x.pairs, [2]*node{k, v})
			if p.node.id != "," {
				break
			}
			if err := p.advance(",", false); err != nil {
				return nil, err
			}
		}
	}
	if err := p.advance("}", true); err != nil {
		return nil, err
	}
	if left == nil {
		t.typ = "unary"
	} else {
		t.lhs, t.typ = left, "binary"
	}
	return t, nil
}

func (p *parser) transform(t *node) (*node, error) {
	t.ext()
	t.typ = "transform"
	var err error
	if t.x.pattern, err = p.expression(0); err != nil {
		return nil, err
	}
	if err := p.advance("|", false); err != nil {
		return nil, err
	}
	if t.x.update, err = p.expression(0); err != nil {
		return nil, err
	}
	if p.node.id == "," {
		if err := p.advance(",", false); err != nil {
			return nil, err
		}
		if t.x.del, err = p.expression(0); err != nil {
			return nil, err
		}
	}
	if err := p.advance("|", false); err != nil {
		return nil, err
	}
	return t, nil
}

// parse parses src into the evaluator's tree.
func parse(src string) (*node, error) {
	p := &parser{lex: &lexer{src: src}, src: src}
	if err := p.advance("", false); err != nil {
		return nil, err
	}
	e, err := p.expression(0)
	if err != nil {
		return nil, err
	}
	if p.node.id != "(end)" {
		return nil, &Error{Code: "S0201", Position: p.node.position, Token: tokenText(p.node)}
	}
	e, err = p.process(e)
	if err != nil {
		return nil, err
	}
	if e.typ == "parent" || e.seeking != nil {
		return nil, &Error{Code: "S0217", Token: e.typ, Position: e.position}
	}
	return e, nil
}
