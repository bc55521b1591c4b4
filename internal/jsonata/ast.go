package jsonata

// process turns the parse tree into the evaluator's tree (JSONata's processAST).
func (p *parser) process(e *node) (*node, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxParseDepth {
		return nil, &Error{Code: "U1001", Position: e.position, Msg: "The expression is nested too deeply"}
	}
	var r *node
	var err error
	switch e.typ {
	case "binary":
		r, err = p.processBinary(e)
	case "unary":
		r, err = p.processUnary(e)
	case "function", "partial":
		r, err = p.processCall(e)
	case "lambda":
		body, perr := p.process(e.body)
		if perr != nil {
			return nil, perr
		}
		r = e
		r.body = tailCallOptimize(body)
	case "condition":
		r, err = p.processCondition(e)
	case "transform":
		r, err = p.processTransform(e)
	case "block":
		r, err = p.processBlock(e)
	case "name":
		r = &node{typ: "path", steps: []*node{e}, keepSingleton: e.keepArray}
	case "parent":
		r = &node{typ: "parent", position: e.position, slot: &slot{label: "!" + itoa(p.ancestorLabel), level: 1, index: len(p.ancestry)}}
		p.ancestorLabel++
		p.ancestry = append(p.ancestry, r)
	case "string", "number", "value", "wildcard", "descendant", "variable", "regex":
		r = e
	case "operator":
		if e.value == "and" || e.value == "or" || e.value == "in" {
			e.typ = "name"
			r, err = p.process(e)
		} else if e.value == "?" {
			r = e
		} else {
			return nil, &Error{Code: "S0201", Position: e.position, Token: tokenText(e)}
		}
	default:
		code := "S0206"
		if e.id == "(end)" {
			code = "S0207"
		}
		return nil, &Error{Code: code, Position: e.position, Token: tokenText(e)}
	}
	if err != nil {
		return nil, err
	}
	if e.keepArray {
		r.keepArray = true
	}
	return r, nil
}

// The parse node becomes the evaluator's in place: no copy.

func (p *parser) processCall(e *node) (*node, error) {
	for i, a := range e.arguments {
		pa, err := p.process(a)
		if err != nil {
			return nil, err
		}
		pushAncestry(e, pa)
		e.arguments[i] = pa
	}
	var err error
	e.procedure, err = p.process(e.procedure)
	return e, err
}

func (p *parser) processCondition(e *node) (*node, error) {
	var err error
	if e.x.condition, err = p.process(e.x.condition); err != nil {
		return nil, err
	}
	pushAncestry(e, e.x.condition)
	if e.x.then, err = p.process(e.x.then); err != nil {
		return nil, err
	}
	pushAncestry(e, e.x.then)
	if e.x.els != nil {
		if e.x.els, err = p.process(e.x.els); err != nil {
			return nil, err
		}
		pushAncestry(e, e.x.els)
	}
	return e, nil
}

func (p *parser) processTransform(e *node) (*node, error) {
	var err error
	if e.x.pattern, err = p.process(e.x.pattern); err != nil {
		return nil, err
	}
	if e.x.update, err = p.process(e.x.update); err != nil {
		return nil, err
	}
	if e.x.del != nil {
		if e.x.del, err = p.process(e.x.del); err != nil {
			return nil, err
		}
	}
	return e, nil
}

func (p *parser) processBlock(e *node) (*node, error) {
	for i, x := range e.expressions {
		part, err := p.process(x)
		if err != nil {
			return nil, err
		}
		pushAncestry(e, part)
		if part.consarray || (part.typ == "path" && part.steps[0].consarray) {
			e.consarray = true
		}
		e.expressions[i] = part
	}
	return e, nil
}

func itoa(i int) string { return numberString(float64(i)) }

func (p *parser) processUnary(e *node) (*node, error) {
	r := e
	switch e.value {
	case "[":
		for i, x := range e.expressions {
			v, err := p.process(x)
			if err != nil {
				return nil, err
			}
			pushAncestry(r, v)
			r.expressions[i] = v
		}
	case "{":
		for i, pair := range e.x.pairs {
			k, err := p.process(pair[0])
			if err != nil {
				return nil, err
			}
			pushAncestry(r, k)
			v, err := p.process(pair[1])
			if err != nil {
				return nil, err
			}
			pushAncestry(r, v)
			r.x.pairs[i] = [2]*node{k, v}
		}
	default:
		x, err := p.process(e.expression)
		if err != nil {
			return nil, err
		}
		r.expression = x
		if e.value == "-" && x.typ == "number" {
			x.value = -x.value.(float64)
			return x, nil
		}
		pushAncestry(r, x)
	}
	return r, nil
}

func (p *parser) processBinary(e *node) (*node, error) {
	switch e.value {
	case ".":
		return p.processPath(e)
	case "[":
		return p.processPredicate(e)
	case "{":
		r, err := p.process(e.lhs)
		if err != nil {
			return nil, err
		}
		if r.group != nil {
			return nil, &Error{Code: "S0210", Position: e.position}
		}
		g := &node{position: e.position, x: &nodeExt{}}
		for _, pair := range e.x.pairs {
			k, err := p.process(pair[0])
			if err != nil {
				return nil, err
			}
			v, err := p.process(pair[1])
			if err != nil {
				return nil, err
			}
			g.x.pairs = append(g.x.pairs, [2]*node{k, v})
		}
		r.group = g
		return r, nil
	case "^":
		r, err := p.process(e.lhs)
		if err != nil {
			return nil, err
		}
		if r.typ != "path" {
			r = &node{typ: "path", steps: []*node{r}}
		}
		s := &node{typ: "sort", position: e.position, x: &nodeExt{}}
		for _, t := range e.x.terms {
			x, err := p.process(t.expression)
			if err != nil {
				return nil, err
			}
			pushAncestry(s, x)
			s.x.terms = append(s.x.terms, sortTerm{descending: t.descending, expression: x})
		}
		r.steps = append(r.steps, s)
		if err := p.resolveAncestry(r); err != nil {
			return nil, err
		}
		return r, nil
	case ":=":
		r := e
		r.typ = "bind"
		var err error
		if r.lhs, err = p.process(e.lhs); err != nil {
			return nil, err
		}
		if r.rhs, err = p.process(e.rhs); err != nil {
			return nil, err
		}
		pushAncestry(r, r.rhs)
		return r, nil
	case "@":
		return p.processFocus(e)
	case "#":
		return p.processIndex(e)
	case "~>":
		r := e
		r.typ = "apply"
		var err error
		if r.lhs, err = p.process(e.lhs); err != nil {
			return nil, err
		}
		if r.rhs, err = p.process(e.rhs); err != nil {
			return nil, err
		}
		r.keepArray = r.lhs.keepArray || r.rhs.keepArray
		return r, nil
	}
	r := e
	var err error
	if r.lhs, err = p.process(e.lhs); err != nil {
		return nil, err
	}
	if r.rhs, err = p.process(e.rhs); err != nil {
		return nil, err
	}
	pushAncestry(r, r.lhs)
	pushAncestry(r, r.rhs)
	return r, nil
}

func (p *parser) processPath(e *node) (*node, error) {
	lstep, err := p.process(e.lhs)
	if err != nil {
		return nil, err
	}
	r := lstep
	if lstep.typ != "path" {
		r = &node{typ: "path", steps: []*node{lstep}}
	}
	if lstep.typ == "parent" {
		r.seeking = []*slot{lstep.slot}
	}
	rest, err := p.process(e.rhs)
	if err != nil {
		return nil, err
	}
	if rest.typ == "path" {
		r.steps = append(r.steps, rest.steps...)
	} else {
		if rest.predicate != nil {
			rest.stages = rest.predicate
			rest.predicate = nil
		}
		r.steps = append(r.steps, rest)
	}
	for _, s := range r.steps {
		if s.typ == "number" || s.typ == "value" {
			return nil, &Error{Code: "S0213", Position: s.position, Value: s.value}
		}
		if s.typ == "string" {
			s.typ = "name"
		}
		if s.keepArray {
			r.keepSingleton = true
		}
	}
	if first := r.steps[0]; first.typ == "unary" && first.value == "[" {
		first.consarray = true
	}
	if last := r.steps[len(r.steps)-1]; last.typ == "unary" && last.value == "[" {
		last.consarray = true
	}
	if err := p.resolveAncestry(r); err != nil {
		return nil, err
	}
	return r, nil
}

func (p *parser) processPredicate(e *node) (*node, error) {
	r, err := p.process(e.lhs)
	if err != nil {
		return nil, err
	}
	step := r
	stages := false
	if r.typ == "path" {
		step = r.steps[len(r.steps)-1]
		stages = true
	}
	if step.group != nil {
		return nil, &Error{Code: "S0209", Position: e.position}
	}
	pred, err := p.process(e.rhs)
	if err != nil {
		return nil, err
	}
	if pred.seeking != nil {
		for _, s := range pred.seeking {
			if s.level == 1 {
				if _, err := p.seekParent(step, s); err != nil {
					return nil, err
				}
			} else {
				s.level--
			}
		}
		pushAncestry(step, pred)
	}
	st := stage{typ: "filter", expr: pred, position: e.position}
	if stages {
		step.stages = append(step.stages, st)
	} else {
		step.predicate = append(step.predicate, st)
	}
	return r, nil
}

// lastStep processes the left side of a binding (@, #) and gives it with the step it binds.
func (p *parser) lastStep(e *node) (r, step *node, err error) {
	if r, err = p.process(e.lhs); err != nil {
		return nil, nil, err
	}
	step = r
	if r.typ == "path" {
		step = r.steps[len(r.steps)-1]
	}
	return r, step, nil
}

func (p *parser) processFocus(e *node) (*node, error) {
	r, step, err := p.lastStep(e)
	if err != nil {
		return nil, err
	}
	if step.stages != nil || step.predicate != nil {
		return nil, &Error{Code: "S0215", Position: e.position}
	}
	if step.typ == "sort" {
		return nil, &Error{Code: "S0216", Position: e.position}
	}
	if e.keepArray {
		step.keepArray = true
	}
	step.focus, step.hasFocus = e.rhs.value.(string), true
	step.tuple = true
	return r, nil
}

func (p *parser) processIndex(e *node) (*node, error) {
	r, step, err := p.lastStep(e)
	if err != nil {
		return nil, err
	}
	if r.typ != "path" {
		r = &node{typ: "path", steps: []*node{r}}
		if step.predicate != nil {
			step.stages = step.predicate
			step.predicate = nil
		}
	}
	name := e.rhs.value.(string)
	if step.stages == nil {
		step.index, step.hasIndex = name, true
	} else {
		step.stages = append(step.stages, stage{typ: "index", value: name, position: e.position})
	}
	step.tuple = true
	return r, nil
}

// tailCallOptimize wraps a function call in tail position in a thunk, so that the caller's loop
// (apply) runs it instead of a nested call: tail recursion takes no stack.
func tailCallOptimize(e *node) *node {
	switch {
	case e.typ == "function" && e.predicate == nil:
		return &node{typ: "lambda", x: &nodeExt{thunk: true}, position: e.position, body: e}
	case e.typ == "condition":
		e.x.then = tailCallOptimize(e.x.then)
		if e.x.els != nil {
			e.x.els = tailCallOptimize(e.x.els)
		}
	case e.typ == "block":
		if n := len(e.expressions); n > 0 {
			e.expressions[n-1] = tailCallOptimize(e.expressions[n-1])
		}
	}
	return e
}

func (p *parser) seekParent(n *node, s *slot) (*slot, error) {
	switch n.typ {
	case "name", "wildcard":
		s.level--
		if s.level == 0 {
			if n.ancestor == nil {
				n.ancestor = s
			} else {
				p.ancestry[s.index].slot.label = n.ancestor.label
				n.ancestor = s
			}
			n.tuple = true
		}
	case "parent":
		s.level++
	case "block":
		if len(n.expressions) > 0 {
			n.tuple = true
			var err error
			if s, err = p.seekParent(n.expressions[len(n.expressions)-1], s); err != nil {
				return nil, err
			}
		}
	case "path":
		n.tuple = true
		i := len(n.steps) - 1
		var err error
		if s, err = p.seekParent(n.steps[i], s); err != nil {
			return nil, err
		}
		i--
		for s.level > 0 && i >= 0 {
			if s, err = p.seekParent(n.steps[i], s); err != nil {
				return nil, err
			}
			i--
		}
	default:
		return nil, &Error{Code: "S0217", Token: n.typ, Position: n.position}
	}
	return s, nil
}

func pushAncestry(r, v *node) {
	if v.seeking == nil && v.typ != "parent" {
		return
	}
	slots := v.seeking
	if v.typ == "parent" {
		slots = append(slots, v.slot)
	}
	r.seeking = append(r.seeking, slots...)
	if r.seeking == nil {
		r.seeking = []*slot{}
	}
}

func (p *parser) resolveAncestry(path *node) error {
	last := path.steps[len(path.steps)-1]
	slots := last.seeking
	if last.typ == "parent" {
		slots = append(slots, last.slot)
	}
	for _, s := range slots {
		i := len(path.steps) - 2
		for s.level > 0 {
			if i < 0 {
				path.seeking = append(path.seeking, s)
				break
			}
			step := path.steps[i]
			i--
			for i >= 0 && step.hasFocus && path.steps[i].hasFocus {
				step = path.steps[i]
				i--
			}
			var err error
			if s, err = p.seekParent(step, s); err != nil {
				return err
			}
		}
	}
	return nil
}
