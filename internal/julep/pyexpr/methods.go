package pyexpr

import (
	"strings"
)

func (c *compiler) minmax(n *callNode, name string, a []val) (val, error) {
	if len(n.kw) > 0 {
		return val{}, unsupported(n, name+"() with key= or default=", "Eval runs it")
	}
	if len(a) == 0 {
		return val{}, arity(n, name, 1, 99)
	}
	k := kAny
	var list string
	if len(a) == 1 {
		if a[0].k == kStr {
			return val{}, unsupported(n, name+"() of a str", "Eval runs it")
		}
		list = a[0].js
	} else {
		parts := make([]string, len(a))
		k = a[0].k
		for i, x := range a {
			parts[i] = c.element(x)
			if x.k != k {
				k = kAny
			}
		}
		list = "[" + strings.Join(parts, ", ") + "]"
	}
	if !k.num() {
		k = kAny
	}
	return atom(c.use("py_"+name)+"("+list+")", k), nil
}

func (c *compiler) rangeCall(n *callNode, a []val) (val, error) {
	if err := arity(n, "range", 1, 3); err != nil {
		return val{}, err
	}
	lo, hi, step := "0", "", "1"
	switch len(a) {
	case 1:
		hi = a[0].js
	case 2:
		lo, hi = a[0].js, a[1].js
	case 3:
		lo, hi, step = a[0].js, a[1].js, a[2].js
	}
	if len(a) < 3 {
		return atom("("+"$b := "+hi+"; $a := "+lo+"; $b > $a ? [$a..$b - 1] : [])", kList), nil
	}
	return atom(c.use("py_range")+"("+lo+", "+hi+", "+step+")", kList), nil
}

func (c *compiler) dictCall(n *callNode, a []val) (val, error) {
	if len(a) == 0 {
		parts := make([]string, len(n.kw))
		for i, kw := range n.kw {
			v, err := c.expr(kw.v)
			if err != nil {
				return val{}, err
			}
			parts[i] = jsonString(kw.name) + ": " + v.js
		}
		return atom("{"+strings.Join(parts, ", ")+"}", kDict), nil
	}
	if len(a) > 1 {
		return val{}, arity(n, "dict", 0, 1)
	}
	if len(n.kw) > 0 && a[0].k != kList {
		// dict(mapping, k=v): a copy with the keys set.
		kw := &callNode{p: n.p, fn: n.fn, kw: n.kw}
		extra, err := c.dictCall(kw, nil)
		if err != nil {
			return val{}, err
		}
		return atom("$merge(["+a[0].js+", "+extra.js+"])", kDict), nil
	}
	if len(n.kw) > 0 {
		return val{}, unsupported(n, "dict() with pairs and keywords", "Eval runs it")
	}
	if a[0].k == kDict {
		return a[0], nil
	}
	return atom("("+"$d := "+a[0].js+"; $type($d) = 'object' ? $d : "+c.use("py_dict")+"("+c.use("py_list")+"($d)))", kDict), nil
}

// method compiles x.m(...) for the methods of str, dict and list that map.
func (c *compiler) method(n *callNode, fn *attrNode) (val, error) {
	x, err := c.expr(fn.x)
	if err != nil {
		return val{}, err
	}
	if disallowedMethods[fn.name] {
		return val{}, unsupported(fn, "the method ."+fn.name+"()", disallowedReason)
	}
	if len(n.kw) > 0 {
		return val{}, unsupported(n, "."+fn.name+"() with keyword arguments", "Eval runs it")
	}
	a, err := c.args(n)
	if err != nil {
		return val{}, err
	}
	if v, ok, err := c.strMethod(n, fn.name, x, a); ok || err != nil {
		return v, err
	}
	switch fn.name {
	case "get":
		if err := arity(n, "get", 1, 2); err != nil {
			return val{}, err
		}
		def := "null"
		if len(a) == 2 {
			def = a[1].js
		}
		return atom("($d := "+x.js+"; $k := "+a[0].js+"; $exists($lookup($d, $k)) ? $lookup($d, $k) : "+def+")", kAny), nil
	case "keys":
		return atom("[$keys("+x.js+")]", kList), arity(n, "keys", 0, 0)
	case "values":
		return c.call1("py_values", x, kList), arity(n, "values", 0, 0)
	case "items":
		return c.call1("py_items", x, kList), arity(n, "items", 0, 0)
	case "index", "count":
		if x.k == kList && len(a) == 1 {
			if fn.name == "count" {
				return atom("$count("+par(x)+"[$ = "+par(a[0])+"])", kInt), nil
			}
		}
	case "copy":
		return x, arity(n, "copy", 0, 0)
	}
	return val{}, unsupported(n, "the method ."+fn.name+"()", "it does not compile (methods that change a value in place are refused by Julep's evaluator too); Eval runs the rest")
}

func (c *compiler) strMethod(n *callNode, m string, x val, a []val) (val, bool, error) {
	if x.k != kStr && x.k != kAny {
		return val{}, false, nil
	}
	arg := func(lo, hi int) error { return arity(n, m, lo, hi) }
	if r, ok := strArity[m]; ok {
		if err := arg(r[0], r[1]); err != nil {
			return val{}, true, err
		}
	}
	var js string
	switch m {
	case "upper", "lower":
		js = map[string]string{"upper": "$uppercase(", "lower": "$lowercase("}[m] + x.js + ")"
		return atom(js, kStr), true, arg(0, 0)
	case "strip":
		if len(a) > 0 {
			return val{}, true, unsupported(n, ".strip(chars)", "Eval runs it")
		}
		return c.call1("py_strip", x, kStr), true, nil
	case "lstrip", "rstrip":
		if len(a) > 0 {
			return val{}, true, unsupported(n, "."+m+"(chars)", "Eval runs it")
		}
		re := map[string]string{"lstrip": `/^\s+/`, "rstrip": `/\s+$/`}[m]
		return atom("$replace("+x.js+", "+re+", '')", kStr), true, nil
	case "split":
		if err := arg(0, 1); err != nil {
			return val{}, true, err
		}
		sep := "null"
		if len(a) == 1 {
			sep = a[0].js
		}
		return atom(c.use("py_split")+"("+x.js+", "+sep+")", kList), true, nil
	case "join":
		if x.k != kStr {
			return val{}, false, nil
		}
		return atom("$join("+c.use("py_list")+"("+a[0].js+"), "+x.js+")", kStr), true, arg(1, 1)
	case "replace":
		if err := arg(2, 2); err != nil {
			return val{}, true, err
		}
		return atom("$replace("+x.js+", "+a[0].js+", "+a[1].js+")", kStr), true, nil
	case "startswith":
		return atom("($s := "+x.js+"; $p := "+a[0].js+"; $substring($s, 0, $length($p)) = $p)", kBool), true, arg(1, 1)
	case "endswith":
		return atom("($s := "+x.js+"; $p := "+a[0].js+"; $length($p) = 0 or $substring($s, -$length($p)) = $p)", kBool), true, arg(1, 1)
	case "capitalize":
		return atom("($s := "+x.js+"; $uppercase($substring($s, 0, 1)) & $lowercase($substring($s, 1)))", kStr), true, arg(0, 0)
	case "find":
		return atom("($s := "+x.js+"; $p := "+a[0].js+"; $contains($s, $p) ? $length($substringBefore($s, $p)) : -1)", kInt), true, arg(1, 1)
	}
	return val{}, false, nil
}

// moduleCall compiles the members of Julep's stdlib table that JSONata has.
func (c *compiler) moduleCall(n *callNode, mod, name string) (val, error) {
	a, err := c.args(n)
	if err != nil {
		return val{}, err
	}
	if len(n.kw) > 0 {
		return val{}, unsupported(n, mod+"."+name+"() with keyword arguments", "Eval runs it")
	}
	f := mod + "." + name
	if want, compiled := compiledMembers[f]; compiled {
		if err := arity(n, f, want, want); err != nil {
			return val{}, err
		}
	}
	var one error
	switch f {
	case "json.loads", "yaml.safe_load", "yaml.load":
		if mod == "yaml" {
			break
		}
		return atom("$parse("+a[0].js+")", kAny), one
	case "json.dumps":
		return c.call1("py_dumps", a[0], kStr), one
	case "math.floor", "math.ceil", "math.sqrt":
		k := kInt
		if name == "sqrt" {
			k = kFloat
		}
		return atom("$"+name+"("+a[0].js+")", k), one
	case "math.pow":
		return atom("$power("+a[0].js+", "+a[1].js+")", kFloat), arity(n, f, 2, 2)
	case "base64.b64encode":
		return atom("$base64encode("+a[0].js+")", kStr), one
	case "base64.b64decode":
		return atom("$base64decode("+a[0].js+")", kStr), one
	case "statistics.mean":
		return atom("$average("+a[0].js+")", kFloat), one
	}
	if !moduleHas(mod, name) {
		return val{}, unsupported(n, f+"()", memberReason(mod, name))
	}
	return val{}, unsupported(n, f+"()", "it has no JSONata equivalent; Eval runs it")
}

// disallowedMethods are simpleeval's DISALLOW_METHODS: Julep's evaluator refuses them.
var disallowedMethods = map[string]bool{"format": true, "format_map": true, "mro": true, "tb_frame": true,
	"gi_frame": true, "ag_frame": true, "cr_frame": true, "exec": true}

const disallowedReason = "in Julep this method fails (simpleeval refuses it); use an f-string"

// strArity is how many arguments the compiled str methods take (checked before they are read).
var strArity = map[string][2]int{
	"upper": {0, 0}, "lower": {0, 0}, "strip": {0, 1}, "lstrip": {0, 1}, "rstrip": {0, 1}, "split": {0, 1},
	"join": {1, 1}, "replace": {2, 2}, "startswith": {1, 1}, "endswith": {1, 1}, "capitalize": {0, 0}, "find": {1, 1},
}

// compiledMembers are the stdlib members moduleCall compiles, with their argument counts.
var compiledMembers = map[string]int{"json.loads": 1, "json.dumps": 1, "math.floor": 1, "math.ceil": 1,
	"math.sqrt": 1, "math.pow": 2, "base64.b64encode": 1, "base64.b64decode": 1, "statistics.mean": 1}
