package pyexpr

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// kind is what the compiler knows of a value's Python type before it runs; kAny is unknown
// (data from the execution), which a helper resolves at run time.
type kind uint8

const (
	kAny kind = iota
	kBool
	kInt
	kFloat
	kStr
	kList
	kDict
	kNone
	kFunc
)

func (k kind) num() bool { return k == kInt || k == kFloat }

// val is a compiled sub-expression.
type val struct {
	js   string
	k    kind
	atom bool // needs no parentheses as an operand
	arr  bool // a JSONata array constructor, which another keeps whole
}

type compiler struct {
	names  map[string]string
	scopes []map[string]string // Python locals (comprehension and lambda variables) → $vars
	used   map[string]bool
	tmp    int
}

func newCompiler(names map[string]string) *compiler {
	return &compiler{names: names, used: map[string]bool{}}
}

func (c *compiler) use(h string) string { c.used[h] = true; return "$" + h }

func (c *compiler) temp() string {
	c.tmp++
	return "$t" + strconv.Itoa(c.tmp)
}

func par(v val) string {
	if v.atom {
		return v.js
	}
	return "(" + v.js + ")"
}

func atom(js string, k kind) val { return val{js: js, k: k, atom: true} }
func expr(js string, k kind) val { return val{js: js, k: k} }

var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

var simplePath = regexp.MustCompile(`^\$[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)

// julepConstants are the names Julep's evaluator adds (evaluator.py, constants).
var julepConstants = map[string]val{
	"true":    atom("true", kBool),
	"false":   atom("false", kBool),
	"null":    atom("null", kNone),
	"NEWLINE": atom(`"\n"`, kStr),
}

func (c *compiler) expr(n node) (val, error) {
	switch n := n.(type) {
	case *constNode:
		return constVal(n.v), nil
	case *nameNode:
		return c.name(n)
	case *fstrNode:
		return c.fstring(n)
	case *attrNode:
		return c.attr(n)
	case *indexNode:
		return c.index(n)
	case *sliceNode:
		return c.slice(n)
	case *callNode:
		return c.call(n)
	case *unaryNode:
		return c.unary(n)
	case *binaryNode:
		return c.binary(n)
	case *boolNode:
		return c.boolOp(n)
	case *cmpNode:
		return c.compare(n)
	case *condNode:
		return c.cond(n)
	case *listNode:
		return c.list(n.elts)
	case *dictNode:
		return c.dict(n)
	case *starNode:
		return val{}, unsupported(n, "unpacking (*)", "* unpacks only inside a list display")
	case *setNode:
		return val{}, unsupported(n, "a set", "JSON has no sets; use a list (Eval returns a set as a sorted list)")
	case *lambdaNode:
		return c.lambda(n)
	case *compNode:
		return c.comp(n)
	}
	return val{}, fmt.Errorf("pyexpr: unknown node %T", n)
}

func constVal(v any) val {
	switch v := v.(type) {
	case string:
		return val{js: jsonString(v), k: kStr, atom: true}
	case int64:
		if v < 0 {
			return expr(strconv.FormatInt(v, 10), kInt)
		}
		return atom(strconv.FormatInt(v, 10), kInt)
	case float64:
		return atom(strconv.FormatFloat(v, 'g', -1, 64), kFloat)
	case bool:
		return atom(strconv.FormatBool(v), kBool)
	}
	return atom("null", kNone)
}

func (c *compiler) local(id string) (string, bool) {
	for i := len(c.scopes) - 1; i >= 0; i-- {
		if v, ok := c.scopes[i][id]; ok {
			return v, true
		}
	}
	return "", false
}

func (c *compiler) name(n *nameNode) (val, error) {
	if v, ok := c.local(n.id); ok {
		return atom(v, kAny), nil
	}
	if js, ok := c.names[n.id]; ok {
		if simplePath.MatchString(js) {
			return atom(js, kAny), nil
		}
		return atom("("+js+")", kAny), nil
	}
	if v, ok := julepConstants[n.id]; ok {
		return v, nil
	}
	if f := builtinAsFunc(n.id); f != "" {
		return val{js: f, k: kFunc}, nil
	}
	if julepModules[n.id] {
		return val{}, unsupported(n, "the module '"+n.id+"' used as a value", "call one of its functions")
	}
	if allowedFunctions[n.id] {
		return val{}, unsupported(n, "the function '"+n.id+"' used as a value", "call it, or write a lambda")
	}
	return val{}, unsupported(n, "the name '"+n.id+"'", "it is not defined here: Julep's names are _, inputs, outputs, steps, state and the execution's own names (given: "+strings.Join(sortedKeys(c.names), ", ")+"), its constants and its allowed functions")
}

// pathStep writes a path step; a key that is not a plain name, or is a JSONata keyword, is quoted.
func pathStep(key string) string {
	if plainKey.MatchString(key) && !jsonataKeywords[key] {
		return key
	}
	return "`" + key + "`"
}

var jsonataKeywords = map[string]bool{"and": true, "or": true, "in": true, "true": true, "false": true, "null": true, "function": true}

func (c *compiler) attr(n *attrNode) (val, error) {
	if m, ok := n.x.(*nameNode); ok && c.isModule(m.id) {
		if v, ok := moduleConst(m.id, n.name); ok {
			return v, nil
		}
		return val{}, unsupported(n, m.id+"."+n.name+" used as a value", "call it")
	}
	if strings.HasPrefix(n.name, "_") {
		return val{}, unsupported(n, "the attribute "+n.name, "Julep's evaluator refuses attributes that start with _")
	}
	x, err := c.expr(n.x)
	if err != nil {
		return val{}, err
	}
	if x.k == kStr || x.k == kList {
		return val{}, unsupported(n, "the method ."+n.name+" used as a value", "call it")
	}
	if dictMethods[n.name] {
		return val{}, unsupported(n, "the attribute ."+n.name, boxReason(n.name))
	}
	return atom(par(x)+"."+pathStep(n.name), kAny), nil
}

func (c *compiler) isModule(id string) bool {
	if _, ok := c.local(id); ok {
		return false
	}
	if _, ok := c.names[id]; ok {
		return false
	}
	return julepModules[id]
}

func (c *compiler) index(n *indexNode) (val, error) {
	x, err := c.expr(n.x)
	if err != nil {
		return val{}, err
	}
	if k, ok := n.i.(*constNode); ok {
		switch kv := k.v.(type) {
		case string:
			return atom(par(x)+"."+pathStep(kv), kAny), nil
		case int64:
			switch x.k {
			case kStr:
				return atom(fmt.Sprintf("$substring(%s, %d, 1)", x.js, kv), kStr), nil
			case kList:
				return atom(fmt.Sprintf("%s[%d]", par(x), kv), kAny), nil
			}
		}
	}
	i, err := c.expr(n.i)
	if err != nil {
		return val{}, err
	}
	k := kAny
	if x.k == kStr {
		k = kStr
	}
	return atom(c.use("py_get")+"("+x.js+", "+i.js+")", k), nil
}

func (c *compiler) slice(n *sliceNode) (val, error) {
	x, err := c.expr(n.x)
	if err != nil {
		return val{}, err
	}
	k := x.k
	if k != kStr {
		k = kAny
	}
	if n.step != nil {
		if s, ok := n.step.(*unaryNode); ok && s.op == "-" && n.lo == nil && n.hi == nil {
			if one, ok := s.x.(*constNode); ok && one.v == int64(1) {
				if x.k == kStr {
					return atom("$join($reverse($split("+x.js+", '')))", kStr), nil
				}
				return atom(c.use("py_rev")+"("+x.js+")", k), nil
			}
		}
		return val{}, unsupported(n, "a slice with a step", "only [::-1] compiles; Eval runs the rest")
	}
	bound := func(b node) (string, error) {
		if b == nil {
			return "null", nil
		}
		v, err := c.expr(b)
		return v.js, err
	}
	lo, err := bound(n.lo)
	if err != nil {
		return val{}, err
	}
	hi, err := bound(n.hi)
	if err != nil {
		return val{}, err
	}
	return atom(c.use("py_slice")+"("+x.js+", "+lo+", "+hi+")", k), nil
}

func (c *compiler) unary(n *unaryNode) (val, error) {
	x, err := c.expr(n.x)
	if err != nil {
		return val{}, err
	}
	switch n.op {
	case "not":
		return atom("$not("+c.truthy(x)+")", kBool), nil
	case "-":
		k := x.k
		if !k.num() {
			k = kAny
		}
		if x.k == kBool {
			return expr("-("+x.js+" ? 1 : 0)", kInt), nil
		}
		return expr("-"+par(x), k), nil
	case "+":
		return x, nil
	}
	return val{}, unsupported(n, "the operator "+n.op, "JSONata has no bitwise operators; Eval runs it")
}

// truthy gives a JSONata boolean for Python's truth of v.
func (c *compiler) truthy(v val) string {
	switch v.k {
	case kBool:
		return v.js
	case kStr:
		return par(v) + ` != ""`
	case kInt, kFloat:
		return par(v) + " != 0"
	case kNone:
		return "false"
	}
	return c.use("py_bool") + "(" + v.js + ")"
}

func (c *compiler) boolOp(n *boolNode) (val, error) {
	x, err := c.expr(n.x)
	if err != nil {
		return val{}, err
	}
	y, err := c.expr(n.y)
	if err != nil {
		return val{}, err
	}
	if x.k == kBool && y.k == kBool {
		return expr(par(x)+" "+n.op+" "+par(y), kBool), nil
	}
	// Python's and/or give an operand, not a boolean: "x or 'default'".
	t := c.temp()
	tv := atom(t, x.k)
	k := x.k
	if k != y.k {
		k = kAny
	}
	if n.op == "and" {
		return expr(t+" := "+par(x)+"; "+c.truthy(tv)+" ? "+par(y)+" : "+t, k).block(), nil
	}
	return expr(t+" := "+par(x)+"; "+c.truthy(tv)+" ? "+t+" : "+par(y), k).block(), nil
}

// block makes a sequence of JSONata statements one operand.
func (v val) block() val { return val{js: "(" + v.js + ")", k: v.k, atom: true} }

func (c *compiler) cond(n *condNode) (val, error) {
	test, err := c.expr(n.test)
	if err != nil {
		return val{}, err
	}
	then, err := c.expr(n.then)
	if err != nil {
		return val{}, err
	}
	els, err := c.expr(n.els)
	if err != nil {
		return val{}, err
	}
	k := then.k
	if k != els.k {
		k = kAny
	}
	return expr(c.truthy(test)+" ? "+par(then)+" : "+par(els), k), nil
}

func (c *compiler) list(elts []node) (val, error) {
	var segs, parts []string
	for _, e := range elts {
		if st, ok := e.(*starNode); ok {
			// [a, *xs, b]: the segments around each *xs, appended.
			v, err := c.expr(st.x)
			if err != nil {
				return val{}, err
			}
			if len(parts) > 0 {
				segs = append(segs, "["+strings.Join(parts, ", ")+"]")
				parts = nil
			}
			segs = append(segs, c.use("py_list")+"("+v.js+")")
			continue
		}
		v, err := c.expr(e)
		if err != nil {
			return val{}, err
		}
		parts = append(parts, c.element(v))
	}
	if len(segs) == 0 {
		return val{js: "[" + strings.Join(parts, ", ") + "]", k: kList, atom: true, arr: true}, nil
	}
	if len(parts) > 0 {
		segs = append(segs, "["+strings.Join(parts, ", ")+"]")
	}
	js := segs[0]
	for _, sg := range segs[1:] {
		js = "$append(" + js + ", " + sg + ")"
	}
	return atom(js, kList), nil
}

// element is v as an item of an array constructor, which would flatten a list.
func (c *compiler) element(v val) string {
	switch {
	case v.arr, v.k == kStr, v.k == kInt, v.k == kFloat, v.k == kBool, v.k == kNone, v.k == kDict:
		return v.js
	}
	return c.use("py_one") + "(" + v.js + ")"
}

func (c *compiler) dict(n *dictNode) (val, error) {
	var objs, parts []string
	for i := range n.keys {
		v, err := c.expr(n.vals[i])
		if err != nil {
			return val{}, err
		}
		if n.keys[i] == nil {
			// {**m, k: v}: the objects merged in order, later keys winning as in Python.
			if len(parts) > 0 {
				objs = append(objs, "{"+strings.Join(parts, ", ")+"}")
				parts = nil
			}
			objs = append(objs, v.js)
			continue
		}
		k, err := c.expr(n.keys[i])
		if err != nil {
			return val{}, err
		}
		parts = append(parts, c.key(k)+": "+v.js)
	}
	if len(objs) == 0 {
		return val{js: "{" + strings.Join(parts, ", ") + "}", k: kDict, atom: true}, nil
	}
	if len(parts) > 0 {
		objs = append(objs, "{"+strings.Join(parts, ", ")+"}")
	}
	return atom("$merge(["+strings.Join(objs, ", ")+"])", kDict), nil
}

// key is a dict key: JSON keys are strings, as json.dumps writes Python's.
func (c *compiler) key(k val) string {
	if k.k == kStr {
		return k.js
	}
	return "$string(" + k.js + ")"
}

func (c *compiler) lambda(n *lambdaNode) (val, error) {
	return val{}, unsupported(n, "a lambda", lambdaReason)
}

// lambdaReason: simpleeval 1.0.3 (Julep's evaluator) has no lambda node.
const lambdaReason = "in Julep lambdas fail (simpleeval: Lambda Functions not implemented); use a comprehension, or pass a builtin such as str or len"

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sortStrings(out)
	return out
}

// dictMethods are the names under which Julep's Box gives a dict's method, not its key.
var dictMethods = map[string]bool{"clear": true, "copy": true, "fromkeys": true, "get": true, "items": true,
	"keys": true, "pop": true, "popitem": true, "setdefault": true, "update": true, "values": true}

func boxReason(name string) string {
	return "in Julep x." + name + " is the dict method " + name + ", not the key '" + name + "'; write x['" + name + "']"
}
