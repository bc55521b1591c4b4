package pyexpr

import (
	"regexp"
	"strconv"
	"strings"
)

func (c *compiler) binary(n *binaryNode) (val, error) {
	x, err := c.expr(n.x)
	if err != nil {
		return val{}, err
	}
	y, err := c.expr(n.y)
	if err != nil {
		return val{}, err
	}
	numK := kAny
	if x.k.num() && y.k.num() {
		numK = kInt
		if x.k == kFloat || y.k == kFloat {
			numK = kFloat
		}
	}
	switch n.op {
	case "+":
		switch {
		case x.k == kStr && y.k == kStr:
			return expr(par(x)+" & "+par(y), kStr), nil
		case numK != kAny:
			return expr(par(x)+" + "+par(y), numK), nil
		case x.k == kList && y.k == kList:
			return atom("$append("+x.js+", "+y.js+")", kList), nil
		}
		k := x.k
		if k != y.k || k == kAny {
			k = kAny
		}
		return atom(c.use("py_add")+"("+x.js+", "+y.js+")", k), nil
	case "-":
		return expr(par(x)+" - "+par(y), orNum(numK)), nil
	case "*":
		switch {
		case numK != kAny:
			return expr(par(x)+" * "+par(y), numK), nil
		case x.k == kStr && y.k == kInt, x.k == kList && y.k == kInt:
			return atom(c.use("py_rep")+"("+x.js+", "+y.js+")", x.k), nil
		case y.k == kStr && x.k == kInt, y.k == kList && x.k == kInt:
			return atom(c.use("py_rep")+"("+y.js+", "+x.js+")", y.k), nil
		}
		return atom(c.use("py_mul")+"("+x.js+", "+y.js+")", kAny), nil
	case "/":
		return expr(par(x)+" / "+par(y), kFloat), nil
	case "//":
		return atom("$floor("+par(x)+" / "+par(y)+")", orNum(numK)), nil
	case "%":
		if x.k == kStr {
			return val{}, unsupported(n, "printf-style formatting (str % value)", "use an f-string; Eval runs it")
		}
		return atom(c.use("py_mod")+"("+x.js+", "+y.js+")", orNum(numK)), nil
	case "**":
		k := orNum(numK)
		if lit, ok := n.y.(*unaryNode); ok && lit.op == "-" {
			k = kFloat
		}
		return atom("$power("+x.js+", "+y.js+")", k), nil
	}
	return val{}, unsupported(n, "the operator "+n.op, "JSONata has no bitwise or matrix operators; Eval runs it")
}

func orNum(k kind) kind {
	if k == kAny {
		return kAny
	}
	return k
}

func (c *compiler) compare(n *cmpNode) (val, error) {
	x, err := c.expr(n.x)
	if err != nil {
		return val{}, err
	}
	var terms, binds []string
	left := x
	for i, op := range n.ops {
		y, err := c.expr(n.ys[i])
		if err != nil {
			return val{}, err
		}
		right := y
		if i < len(n.ops)-1 && !y.atom {
			// The middle of a chain is evaluated once, as Python does.
			t := c.temp()
			binds = append(binds, t+" := "+y.js)
			right = atom(t, y.k)
		}
		term, err := c.cmp1(n, op, left, right, n.ys[i])
		if err != nil {
			return val{}, err
		}
		terms = append(terms, term)
		left = right
	}
	js := strings.Join(terms, " and ")
	if len(terms) > 1 {
		parts := make([]string, len(terms))
		for i, t := range terms {
			parts[i] = "(" + t + ")"
		}
		js = strings.Join(parts, " and ")
	}
	if len(binds) > 0 {
		return atom("("+strings.Join(binds, "; ")+"; "+js+")", kBool), nil
	}
	return expr(js, kBool), nil
}

func (c *compiler) cmp1(n *cmpNode, op string, x, y val, yn node) (string, error) {
	switch op {
	case "==":
		return par(x) + " = " + par(y), nil
	case "!=":
		return par(x) + " != " + par(y), nil
	case "<", "<=", ">", ">=":
		return par(x) + " " + op + " " + par(y), nil
	case "in", "not in":
		var t string
		switch y.k {
		case kStr:
			t = "$contains(" + y.js + ", " + x.js + ")"
		case kDict:
			t = par(x) + " in [$keys(" + y.js + ")]"
		default:
			t = c.use("py_in") + "(" + x.js + ", " + y.js + ")"
		}
		if op == "not in" {
			return "$not(" + t + ")", nil
		}
		return t, nil
	case "is", "is not":
		k, ok := yn.(*constNode)
		if !ok || k.v != nil && k.v != true && k.v != false {
			return "", unsupported(n, "the '"+op+"' operator with "+describe(yn), "JSON values have no identity; compare with == (only 'is None', 'is True' and 'is False' compile)")
		}
		eq := " = "
		if op == "is not" {
			eq = " != "
		}
		return par(x) + eq + y.js, nil
	}
	return "", unsupported(n, "the comparison "+op, "")
}

func describe(n node) string {
	switch n := n.(type) {
	case *nameNode:
		return "'" + n.id + "'"
	case *constNode:
		return "a constant"
	}
	return "an expression"
}

// comp compiles a comprehension as nested folds: each "for" a $reduce over its iterable, each
// "if" a condition around the append.
func (c *compiler) comp(n *compNode) (val, error) {
	if n.kind == 's' {
		return val{}, unsupported(n, "a set comprehension", setCompReason)
	}
	c.scopes = append(c.scopes, map[string]string{})
	defer func() { c.scopes = c.scopes[:len(c.scopes)-1] }()
	acc := c.temp()
	init := "[]"
	if n.kind == '{' {
		init = "{}"
	}
	js, err := c.compFor(n, 0, acc)
	if err != nil {
		return val{}, err
	}
	js = strings.Replace(js, "§ACC§", init, 1)
	k := kList
	if n.kind == '{' {
		k = kDict
	}
	return atom(js, k), nil
}

// compFor writes the fold of clause i; §ACC§ marks where the outermost fold's initial value goes.
func (c *compiler) compFor(n *compNode, i int, acc string) (string, error) {
	if i == len(n.fors) {
		if n.kind == '{' {
			k, err := c.expr(n.key)
			if err != nil {
				return "", err
			}
			v, err := c.expr(n.elt)
			if err != nil {
				return "", err
			}
			return "$merge([" + acc + ", {" + c.key(k) + ": " + v.js + "}])", nil
		}
		v, err := c.expr(n.elt)
		if err != nil {
			return "", err
		}
		if v.arr {
			return "$append(" + acc + ", [" + v.js + "])", nil
		}
		return "$append(" + acc + ", [" + c.element(v) + "])", nil
	}
	f := n.fors[i]
	iter, err := c.expr(f.iter)
	if err != nil {
		return "", err
	}
	scope := c.scopes[len(c.scopes)-1]
	e := c.temp()
	var binds []string
	if f.tuple {
		for j, name := range f.vars {
			v := "$" + name + "_"
			scope[name] = v
			binds = append(binds, v+" := "+e+"["+strconv.Itoa(j)+"]")
		}
	} else {
		scope[f.vars[0]] = "$" + f.vars[0] + "_"
		e = "$" + f.vars[0] + "_"
	}
	inner, err := c.compFor(n, i+1, acc)
	if err != nil {
		return "", err
	}
	for j := len(f.ifs) - 1; j >= 0; j-- {
		cond, err := c.expr(f.ifs[j])
		if err != nil {
			return "", err
		}
		inner = c.truthy(cond) + " ? " + inner + " : " + acc
	}
	body := inner
	if len(binds) > 0 {
		body = "(" + strings.Join(binds, "; ") + "; " + inner + ")"
	}
	start := "§ACC§"
	if i > 0 {
		start = acc
	}
	src := iter.js
	if iter.k != kList {
		src = c.use("py_iter") + "(" + iter.js + ")"
	}
	return "$reduce(" + src + ", function(" + acc + ", " + e + "){ " + body + " }, " + start + ")", nil
}

var specRE = regexp.MustCompile(`^(?:(.)?([<>^]))?(\d+)?(,)?(?:\.(\d+))?([fd%s])?$`)

// fstring compiles an f-string to a concatenation.
func (c *compiler) fstring(n *fstrNode) (val, error) {
	if len(n.parts) == 0 {
		return atom(`""`, kStr), nil
	}
	var out []string
	for _, p := range n.parts {
		if p.x == nil {
			out = append(out, jsonString(p.lit))
			continue
		}
		v, err := c.expr(p.x)
		if err != nil {
			return val{}, err
		}
		s, err := c.format(p, v)
		if err != nil {
			return val{}, err
		}
		out = append(out, s)
	}
	if len(out) == 1 {
		return atom("$string("+out[0]+")", kStr), nil
	}
	return expr(strings.Join(out, " & "), kStr), nil
}

// str gives Python's str(v).
func (c *compiler) str(v val) string {
	switch v.k {
	case kStr:
		return par(v)
	case kInt:
		return "$string(" + v.js + ")"
	case kFloat:
		return c.use("py_fstr") + "(" + v.js + ")"
	case kBool:
		return "(" + par(v) + " ? 'True' : 'False')"
	case kNone:
		return "'None'"
	}
	return c.use("py_str") + "(" + v.js + ")"
}

func (c *compiler) format(p fpart, v val) (string, error) {
	if p.conv == 'r' || p.conv == 'a' {
		return c.use("py_repr") + "(" + v.js + ")", nil
	}
	if p.spec == "" {
		return c.str(v), nil
	}
	m := specRE.FindStringSubmatch(p.spec)
	if m == nil {
		return "", &Unsupported{Pos: p.x.pos(), Construct: "the format spec ':" + p.spec + "'", Reason: "compiled specs are [[fill]align][,][.N][f|d|%|s] ; Eval runs the rest"}
	}
	fill, align, width, group, prec, typ := m[1], m[2], m[3], m[4], m[5], m[6]
	s := c.str(v)
	isNum := typ == "f" || typ == "%" || typ == "d" || group != "" || prec != "" && typ != "s"
	if isNum {
		pic := "0"
		if group != "" {
			pic = "#,##0"
		}
		if (typ == "f" || typ == "%") && prec == "" {
			prec = "6"
		}
		if n, _ := strconv.Atoi(prec); n > 0 {
			pic += "." + strings.Repeat("0", n)
		}
		if typ == "%" {
			pic += "%"
		}
		s = "$formatNumber(" + v.js + ", '" + pic + "')"
	} else if typ == "s" && prec != "" {
		s = "$substring(" + s + ", 0, " + prec + ")"
	}
	if width == "" {
		return s, nil
	}
	if strings.HasPrefix(width, "0") && fill == "" && align == "" {
		// Zero padding goes after the sign: f'{-7:03}' is -07.
		return c.use("py_zpad") + "(" + s + ", " + strings.TrimLeft(width, "0") + ")", nil
	}
	if fill == "" {
		fill = " "
	}
	if align == "" {
		switch {
		case isNum || v.k.num():
			align = ">"
		case v.k == kAny:
			// Python right-aligns numbers and left-aligns the rest: known only at run time.
			return "($v := " + v.js + "; $s := " + s + "; $type($v) = 'number' ? $pad($s, -" + width + ") : $pad($s, " + width + "))", nil
		default:
			align = "<"
		}
	}
	switch align {
	case "<":
		return "$pad(" + s + ", " + width + ", " + jsonString(fill) + ")", nil
	case ">":
		return "$pad(" + s + ", -" + width + ", " + jsonString(fill) + ")", nil
	}
	return "", &Unsupported{Pos: p.x.pos(), Construct: "centred alignment (^) in a format spec", Reason: "Eval runs it"}
}

const setCompReason = "in Julep set comprehensions fail (simpleeval has none); use a list comprehension, or set([...])"
