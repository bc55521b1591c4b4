package pyexpr

import (
	"strconv"
	"strings"
)

// Eval runs the Python tree as Starlark (go.starlark.net), a Python dialect. The tree is written
// back as Starlark source in which every name is checked against Julep's: Starlark's own
// universe (print, getattr, dir, sorted, ...) is never reached. Where the dialects differ the
// writer bridges them through builtins whose names start with "__", a prefix no Julep
// expression may use:
//   - f-strings (Starlark has none) are "".join of __fmt(value, conversion, spec) calls;
//   - ** is __pow, since Starlark has no power operator;
//   - a comparison chain a < b < c becomes a lambda applied to b, so b is evaluated once;
//   - "is None", "is True", "is False" become == (Starlark has no identity operator);
//   - a generator expression is a list comprehension (the same values, eagerly);
//   - attribute access on a dict reads its key (Julep wraps values in python-box's Box),
//     through __attr.

// starWriter writes a tree as Starlark source, checking names as it goes.
type starWriter struct {
	env    map[string]bool // names bound by the caller
	locals []map[string]bool
	b      *strings.Builder
	tmp    int
}

func (w *starWriter) isLocal(id string) bool {
	for _, s := range w.locals {
		if s[id] {
			return true
		}
	}
	return false
}

func (w *starWriter) isModule(id string) bool {
	return julepModules[id] && !w.isLocal(id) && !w.env[id]
}

func (w *starWriter) write(n node) error {
	switch n := n.(type) {
	case *constNode:
		w.b.WriteString(starConst(n.v))
	case *nameNode:
		return w.name(n)
	case *fstrNode:
		return w.fstring(n)
	case *attrNode:
		if m, ok := n.x.(*nameNode); ok && w.isModule(m.id) {
			if !moduleHas(m.id, n.name) {
				return unsupported(n, m.id+"."+n.name, memberReason(m.id, n.name))
			}
			w.b.WriteString("__mod_" + m.id + "." + n.name)
			return nil
		}
		if strings.HasPrefix(n.name, "_") {
			return unsupported(n, "the attribute "+n.name, "Julep's evaluator refuses attributes that start with _")
		}
		if dictMethods[n.name] {
			return unsupported(n, "the attribute ."+n.name, boxReason(n.name))
		}
		if disallowedMethods[n.name] {
			return unsupported(n, "the attribute ."+n.name, disallowedReason)
		}
		w.b.WriteString("__attr(")
		if err := w.write(n.x); err != nil {
			return err
		}
		w.b.WriteString(", " + strconv.Quote(n.name) + ")")
	case *indexNode:
		return w.seq("", n.x, "[", n.i, "]")
	case *sliceNode:
		return w.slice(n)
	case *callNode:
		return w.call(n)
	case *unaryNode:
		w.b.WriteString("(" + n.op + " ")
		if err := w.write(n.x); err != nil {
			return err
		}
		w.b.WriteString(")")
	case *binaryNode:
		if n.op == "@" {
			return unsupported(n, "the operator @", "JSON has no matrices")
		}
		switch n.op {
		case "**":
			return w.seq("__pow(", n.x, ", ", n.y, ")")
		case "*", "+":
			// Bounded as Julep bounds them (simpleeval's safe_mult and safe_add).
			return w.seq(map[string]string{"*": "__mul(", "+": "__add("}[n.op], n.x, ", ", n.y, ")")
		}
		return w.seq("(", n.x, " "+n.op+" ", n.y, ")")
	case *boolNode:
		return w.seq("(", n.x, " "+n.op+" ", n.y, ")")
	case *cmpNode:
		return w.compare(n)
	case *condNode:
		return w.seq("(", n.then, " if ", n.test, " else ", n.els, ")")
	case *listNode:
		return w.list(n)
	case *setNode:
		for _, e := range n.elts {
			switch e.(type) {
			case *dictNode, *listNode, *compNode:
				return unsupported(n, "a set of dicts or lists", "in Julep this fails (TypeError: unhashable type); for a list write [ ... ], for a dict { ... } with single braces")
			}
		}
		w.b.WriteString("set(")
		if err := w.list(&listNode{elts: n.elts}); err != nil {
			return err
		}
		w.b.WriteString(")")
	case *dictNode:
		return w.dict(n)
	case *lambdaNode:
		return unsupported(n, "a lambda", lambdaReason)
	case *starNode:
		return unsupported(n, "unpacking (*)", "* unpacks only inside a list display")
	case *compNode:
		return w.comp(n)
	}
	return nil
}

// seq writes text and nodes in turn: strings as they are, nodes as Starlark.
func (w *starWriter) seq(parts ...any) error {
	for _, p := range parts {
		switch p := p.(type) {
		case string:
			w.b.WriteString(p)
		case node:
			if err := w.write(p); err != nil {
				return err
			}
		}
	}
	return nil
}

func starConst(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		s := strconv.FormatFloat(v, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") {
			s += ".0"
		}
		return s
	case bool:
		if v {
			return "True"
		}
		return "False"
	}
	return "None"
}

func (w *starWriter) name(n *nameNode) error {
	switch {
	case w.isLocal(n.id):
	case strings.HasPrefix(n.id, "__"):
		return unsupported(n, "the name "+n.id, "names starting with __ are refused")
	case w.env[n.id]:
	case n.id == "true", n.id == "false", n.id == "null", n.id == "NEWLINE":
	case allowedFunctions[n.id]:
		if !evalFunctions[n.id] {
			return unsupported(n, "the function "+n.id, evalOnlyReason(n.id))
		}
	case julepModules[n.id]:
		return unsupported(n, "the module "+n.id+" used as a value", "use its members")
	default:
		return unsupported(n, "the name '"+n.id+"'", "it is not one of Julep's names, constants or allowed functions (bound here: "+strings.Join(sortedSet(w.env), ", ")+")")
	}
	w.b.WriteString(n.id)
	return nil
}

func (w *starWriter) fstring(n *fstrNode) error {
	w.b.WriteString(`"".join([`)
	for i, p := range n.parts {
		if i > 0 {
			w.b.WriteString(", ")
		}
		if p.x == nil {
			w.b.WriteString(strconv.Quote(p.lit))
			continue
		}
		w.b.WriteString("__fmt(")
		if err := w.write(p.x); err != nil {
			return err
		}
		w.b.WriteString(", " + strconv.Quote(string(p.conv)) + ", " + strconv.Quote(p.spec) + ")")
	}
	w.b.WriteString("])")
	return nil
}

func (w *starWriter) slice(n *sliceNode) error {
	if err := w.write(n.x); err != nil {
		return err
	}
	w.b.WriteString("[")
	for i, b := range []node{n.lo, n.hi, n.step} {
		if i > 0 {
			w.b.WriteString(":")
		}
		if b != nil {
			if err := w.write(b); err != nil {
				return err
			}
		}
	}
	w.b.WriteString("]")
	return nil
}

func (w *starWriter) call(n *callNode) error {
	if a, ok := n.fn.(*attrNode); ok && !(isName(a.x) && w.isModule(a.x.(*nameNode).id)) {
		// A method call: x.m(...) on the value itself (Box keeps dict methods first).
		if strings.HasPrefix(a.name, "_") {
			return unsupported(a, "the method "+a.name, "Julep's evaluator refuses attributes that start with _")
		}
		if disallowedMethods[a.name] {
			return unsupported(a, "the method ."+a.name+"()", disallowedReason)
		}
		if mutating[a.name] {
			return unsupported(a, "the method ."+a.name+"()", "it changes a value in place; build a new value instead")
		}
		w.b.WriteString("__method(")
		if err := w.write(a.x); err != nil {
			return err
		}
		w.b.WriteString(", " + strconv.Quote(a.name) + ")")
	} else if err := w.write(n.fn); err != nil {
		return err
	}
	w.b.WriteString("(")
	for i, a := range n.args {
		if i > 0 {
			w.b.WriteString(", ")
		}
		if err := w.write(a); err != nil {
			return err
		}
	}
	for i, kw := range n.kw {
		if i > 0 || len(n.args) > 0 {
			w.b.WriteString(", ")
		}
		w.b.WriteString(kw.name + "=")
		if err := w.write(kw.v); err != nil {
			return err
		}
	}
	w.b.WriteString(")")
	return nil
}

func isName(n node) bool { _, ok := n.(*nameNode); return ok }

// mutating methods: Julep's values are frozen for expressions in practice (Box copies), and a
// state machine has nowhere to keep the change.
var mutating = map[string]bool{"append": true, "extend": true, "insert": true, "pop": true, "remove": true,
	"clear": true, "update": true, "setdefault": true, "popitem": true, "sort": true, "reverse": true, "add": true, "discard": true}

func (w *starWriter) compare(n *cmpNode) error {
	ops := make([]string, len(n.ops))
	for i, op := range n.ops {
		ops[i] = op
		if op == "is" || op == "is not" {
			k, ok := n.ys[i].(*constNode)
			if !ok || k.v != nil && k.v != true && k.v != false {
				return unsupported(n, "the '"+op+"' operator with "+describe(n.ys[i]), "JSON values have no identity; compare with ==")
			}
			ops[i] = map[string]string{"is": "==", "is not": "!="}[op]
		}
	}
	if len(ops) == 1 {
		return w.seq("(", n.x, " "+ops[0]+" ", n.ys[0], ")")
	}
	// a < b < c → (lambda __c1: (a < __c1) and (lambda __c2: ...)(c))(b); later terms stay lazy.
	w.tmp++
	t := "__c" + strconv.Itoa(w.tmp)
	w.b.WriteString("(lambda " + t + ": (")
	if err := w.write(n.x); err != nil {
		return err
	}
	w.b.WriteString(" " + ops[0] + " " + t + ") and ")
	rest := &cmpNode{p: n.p, x: &nameNode{p: n.p, id: t}, ops: n.ops[1:], ys: n.ys[1:]}
	w.locals = append(w.locals, map[string]bool{t: true})
	err := w.compare(rest)
	w.locals = w.locals[:len(w.locals)-1]
	if err != nil {
		return err
	}
	w.b.WriteString(")(")
	if err := w.write(n.ys[0]); err != nil {
		return err
	}
	w.b.WriteString(")")
	return nil
}

// dict writes a dict display; with **m entries (Starlark has none) it is __merge of the parts.
func (w *starWriter) dict(n *dictNode) error {
	w.b.WriteString("__merge({")
	first := true
	for i := range n.keys {
		if n.keys[i] == nil {
			if err := w.seq("}, ", n.vals[i], ", {"); err != nil {
				return err
			}
			first = true
			continue
		}
		if !first {
			w.b.WriteString(", ")
		}
		first = false
		if err := w.seq(n.keys[i], ": ", n.vals[i]); err != nil {
			return err
		}
	}
	w.b.WriteString("})")
	return nil
}

func (w *starWriter) list(n *listNode) error {
	if !n.tuple {
		for _, e := range n.elts {
			if _, ok := e.(*starNode); ok {
				return w.starList(n)
			}
		}
	}
	open, close := "[", "]"
	if n.tuple {
		open, close = "(", ")"
	}
	w.b.WriteString(open)
	for i, e := range n.elts {
		if i > 0 {
			w.b.WriteString(", ")
		}
		if err := w.write(e); err != nil {
			return err
		}
	}
	if n.tuple && len(n.elts) == 1 {
		w.b.WriteString(",")
	}
	w.b.WriteString(close)
	return nil
}

func (w *starWriter) comp(n *compNode) error {
	if n.kind == 's' {
		return unsupported(n, "a set comprehension", setCompReason)
	}
	scope := map[string]bool{}
	w.locals = append(w.locals, scope)
	defer func() { w.locals = w.locals[:len(w.locals)-1] }()
	// Names bound by the for clauses are visible in the element, so bind them first.
	for _, f := range n.fors {
		for _, v := range f.vars {
			if strings.HasPrefix(v, "__") {
				return unsupported(n, "the name "+v, "names starting with __ are refused")
			}
		}
	}
	var clauses strings.Builder
	outer := w.b
	for _, f := range n.fors {
		w.b = &strings.Builder{}
		if err := w.write(f.iter); err != nil {
			w.b = outer
			return err
		}
		iter := "__iter(" + w.b.String() + ")"
		for _, v := range f.vars {
			scope[v] = true
		}
		target := strings.Join(f.vars, ", ")
		clauses.WriteString(" for " + target + " in " + iter)
		for _, c := range f.ifs {
			w.b = &strings.Builder{}
			if err := w.write(c); err != nil {
				w.b = outer
				return err
			}
			clauses.WriteString(" if " + w.b.String())
		}
	}
	w.b = &strings.Builder{}
	var err error
	if n.kind == '{' {
		err = w.seq(n.key, ": ", n.elt)
	} else {
		err = w.write(n.elt)
	}
	elt := w.b.String()
	w.b = outer
	if err != nil {
		return err
	}
	switch n.kind {
	case '{':
		w.b.WriteString("{" + elt + clauses.String() + "}")
	case 's':
		w.b.WriteString("set([" + elt + clauses.String() + "])")
	default:
		w.b.WriteString("[" + elt + clauses.String() + "]")
	}
	return nil
}

// starList writes [a, *xs, b] as [a] + list(xs) + [b] (Starlark has no * in displays).
func (w *starWriter) starList(n *listNode) error {
	w.b.WriteString("([]")
	for _, e := range n.elts {
		if st, ok := e.(*starNode); ok {
			if err := w.seq(" + list(", st.x, ")"); err != nil {
				return err
			}
			continue
		}
		if err := w.seq(" + [", e, "]"); err != nil {
			return err
		}
	}
	w.b.WriteString(")")
	return nil
}
