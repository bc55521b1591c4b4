package pyexpr

import (
	"math"
	"sort"
	"strconv"
	"strings"
)

// allowedFunctions is Julep's ALLOWED_FUNCTIONS (evaluator.py): the only functions an expression
// may call by name.
var allowedFunctions = map[string]bool{
	"abs": true, "all": true, "any": true, "bool": true, "dict": true, "enumerate": true,
	"float": true, "int": true, "len": true, "list": true, "map": true, "max": true, "min": true,
	"round": true, "set": true, "str": true, "sum": true, "tuple": true, "zip": true, "reduce": true,
	"range": true, "load_json": true, "load_yaml": true, "dump_json": true, "dump_yaml": true,
	"extract_json": true, "search_regex": true, "match_regex": true, "nlp": true, "chunk_doc": true,
	"humanize_text_alpha": true, "markdown_to_html": true, "html_to_markdown": true,
}

// julepModules is Julep's stdlib table (evaluator.py): module-like names with a fixed set of
// safe members.
var julepModules = map[string]bool{
	"re": true, "json": true, "yaml": true, "string": true, "datetime": true, "math": true,
	"statistics": true, "base64": true, "urllib": true, "random": true, "time": true, "csv": true,
}

var stringConsts = map[string]string{
	"ascii_letters":   "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
	"ascii_lowercase": "abcdefghijklmnopqrstuvwxyz",
	"ascii_uppercase": "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
	"digits":          "0123456789",
	"hexdigits":       "0123456789abcdefABCDEF",
	"octdigits":       "01234567",
	"punctuation":     "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
	"whitespace":      " \t\n\r\x0b\x0c",
	"printable":       "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ \t\n\r\x0b\x0c",
}

func moduleConst(mod, name string) (val, bool) {
	switch mod {
	case "math":
		switch name {
		case "pi":
			return atom(strconv.FormatFloat(math.Pi, 'g', -1, 64), kFloat), true
		case "e":
			return atom(strconv.FormatFloat(math.E, 'g', -1, 64), kFloat), true
		}
	case "string":
		if s, ok := stringConsts[name]; ok {
			return atom(jsonString(s), kStr), true
		}
	}
	return val{}, false
}

// builtinAsFunc gives a JSONata function for a builtin passed as a value (map(str, xs)).
func builtinAsFunc(name string) string {
	switch name {
	case "str":
		return "function($v){ $py_str($v) }"
	case "int":
		return "function($v){ $py_int($v) }"
	case "float":
		return "function($v){ $number($v) }"
	case "len":
		return "function($v){ $py_len($v) }"
	case "bool":
		return "function($v){ $py_bool($v) }"
	case "abs":
		return "function($v){ $abs($v) }"
	}
	return ""
}

func sortStrings(s []string) { sort.Strings(s) }

// call compiles a call: a method (x.m(...)), a module function (json.loads(...)) or a builtin.
func (c *compiler) call(n *callNode) (val, error) {
	switch fn := n.fn.(type) {
	case *attrNode:
		if m, ok := fn.x.(*nameNode); ok && c.isModule(m.id) {
			return c.moduleCall(n, m.id, fn.name)
		}
		return c.method(n, fn)
	case *nameNode:
		if _, local := c.local(fn.id); !local {
			if _, named := c.names[fn.id]; !named {
				return c.builtin(n, fn.id)
			}
		}
	}
	return val{}, unsupported(n, "a call of "+describe(n.fn), "only Julep's allowed functions and the methods of str, list and dict are called")
}

func (c *compiler) args(n *callNode) ([]val, error) {
	out := make([]val, len(n.args))
	for i, a := range n.args {
		if g, ok := a.(*compNode); ok && g.kind == 'g' {
			g2 := *g
			g2.kind = '['
			a = &g2
		}
		v, err := c.expr(a)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func arity(n *callNode, name string, lo, hi int) error {
	if len(n.args) < lo || len(n.args) > hi {
		want := strconv.Itoa(lo)
		if hi > lo {
			want += " to " + strconv.Itoa(hi)
		}
		return unsupported(n, name+"() with "+strconv.Itoa(len(n.args))+" arguments", "it takes "+want)
	}
	return nil
}

func (c *compiler) call1(h string, a val, k kind) val {
	return atom(c.use(h)+"("+a.js+")", k)
}

func (c *compiler) builtin(n *callNode, name string) (val, error) {
	if !allowedFunctions[name] {
		return val{}, unsupported(n.fn, "the function '"+name+"'", "it is not one of Julep's allowed functions ("+strings.Join(sortedSet(allowedFunctions), ", ")+")")
	}
	if len(n.kw) > 0 && name != "dict" {
		return val{}, unsupported(n, name+"() with keyword arguments", "they do not compile; Eval runs them")
	}
	a, err := c.args(n)
	if err != nil {
		return val{}, err
	}
	one := func() error { return arity(n, name, 1, 1) }
	switch name {
	case "len":
		if err := one(); err != nil {
			return val{}, err
		}
		switch a[0].k {
		case kStr:
			return atom("$length("+a[0].js+")", kInt), nil
		case kList:
			return atom("$count("+a[0].js+")", kInt), nil
		}
		return c.call1("py_len", a[0], kInt), nil
	case "str":
		if len(a) == 0 {
			return atom(`""`, kStr), nil
		}
		if err := one(); err != nil {
			return val{}, err
		}
		s := c.str(a[0])
		if strings.HasPrefix(s, "(") || strings.HasPrefix(s, "$") || strings.HasPrefix(s, "'") || strings.HasPrefix(s, `"`) {
			return atom(s, kStr), nil
		}
		return expr(s, kStr), nil
	case "int":
		if err := one(); err != nil {
			return val{}, err
		}
		if a[0].k == kInt {
			return a[0], nil
		}
		return c.call1("py_int", a[0], kInt), nil
	case "float":
		if err := one(); err != nil {
			return val{}, err
		}
		switch a[0].k {
		case kStr:
			return atom("$number($trim("+a[0].js+"))", kFloat), nil
		case kInt, kFloat:
			return atom(a[0].js, kFloat), nil
		}
		return c.call1("py_float", a[0], kFloat), nil
	case "bool":
		if len(a) == 0 {
			return atom("false", kBool), nil
		}
		if err := one(); err != nil {
			return val{}, err
		}
		return atom("("+c.truthy(a[0])+")", kBool), nil
	case "abs":
		if err := one(); err != nil {
			return val{}, err
		}
		return atom("$abs("+a[0].js+")", orNum(a[0].k)), nil
	case "round":
		if err := arity(n, name, 1, 2); err != nil {
			return val{}, err
		}
		if len(a) == 1 {
			return atom("$round("+a[0].js+")", kInt), nil
		}
		return atom("$round("+a[0].js+", "+a[1].js+")", kFloat), nil
	case "sum":
		if err := arity(n, name, 1, 2); err != nil {
			return val{}, err
		}
		s := "$sum(" + a[0].js + ")"
		if len(a) == 2 {
			s = par(a[1]) + " + " + s
			return expr(s, kAny), nil
		}
		return atom(s, kAny), nil
	}
	return c.seqBuiltin(n, name, a)
}

// seqBuiltin compiles the builtins over sequences and JSON.
func (c *compiler) seqBuiltin(n *callNode, name string, a []val) (val, error) {
	one := func() error { return arity(n, name, 1, 1) }
	switch name {
	case "min", "max":
		return c.minmax(n, name, a)
	case "any", "all":
		if err := one(); err != nil {
			return val{}, err
		}
		return c.call1("py_"+name, a[0], kBool), nil
	case "range":
		return c.rangeCall(n, a)
	case "list", "tuple":
		if len(a) == 0 {
			return val{js: "[]", k: kList, atom: true, arr: true}, nil
		}
		if err := one(); err != nil {
			return val{}, err
		}
		return c.call1("py_list", a[0], kList), nil
	case "dict":
		return c.dictCall(n, a)
	case "zip":
		if len(a) == 0 {
			return val{js: "[]", k: kList, atom: true, arr: true}, nil
		}
		js := make([]string, len(a))
		for i, x := range a {
			js[i] = c.use("py_list") + "(" + x.js + ")"
		}
		c.use("py_one")
		return atom("$reduce([0..$min(["+countsOf(js)+"]) - 1], function($a, $i){ $append($a, [["+indexAll(js)+"]]) }, [])", kList), nil
	case "enumerate":
		if err := arity(n, name, 1, 2); err != nil {
			return val{}, err
		}
		start := "0"
		if len(a) == 2 {
			start = a[1].js
		}
		return atom(c.use("py_enum")+"("+a[0].js+", "+start+")", kList), nil
	case "map":
		if err := arity(n, name, 2, 2); err != nil {
			return val{}, err
		}
		if a[0].k != kFunc {
			return val{}, unsupported(n, "map() with "+describe(n.args[0]), "pass a lambda or a builtin")
		}
		c.useFuncHelpers(a[0])
		return atom("$reduce("+c.use("py_iter")+"("+a[1].js+"), function($a, $e){ $append($a, "+c.use("py_one")+"(("+a[0].js+")($e))) }, [])", kList), nil
	case "reduce":
		if err := arity(n, name, 2, 3); err != nil {
			return val{}, err
		}
		if a[0].k != kFunc {
			return val{}, unsupported(n, "reduce() with "+describe(n.args[0]), "pass a lambda")
		}
		if len(a) == 3 {
			return atom("$reduce("+c.use("py_iter")+"("+a[1].js+"), "+a[0].js+", "+a[2].js+")", kAny), nil
		}
		return atom("$reduce("+c.use("py_iter")+"("+a[1].js+"), "+a[0].js+")", kAny), nil
	case "load_json":
		if err := one(); err != nil {
			return val{}, err
		}
		return atom("$parse("+a[0].js+")", kAny), nil
	case "extract_json":
		if err := one(); err != nil {
			return val{}, err
		}
		return c.call1("py_extract_json", a[0], kAny), nil
	case "dump_json":
		if err := one(); err != nil {
			return val{}, err
		}
		return c.call1("py_dumps", a[0], kStr), nil
	}
	return val{}, unsupported(n, name+"()", evalOnlyReason(name))
}

func evalOnlyReason(name string) string {
	switch name {
	case "set":
		return "JSON has no sets; Eval runs it"
	case "nlp":
		return "sinew does not provide it: it returns spaCy's Doc (tokens, tags, entities of en_core_web_sm), which has no JSON form"
	case "humanize_text_alpha":
		return "sinew does not provide it: Julep marks it temporary; it round-trips the text through Google Translate, " +
			"scores it with desklib's AI-text detector and rewrites it with an LLM until the score passes, then inserts " +
			"random homoglyphs and dashes: services sinew does not call, and an output no evaluation can repeat. " +
			"Use a prompt step to rewrite text"
	case "dump_yaml":
		return "sinew does not provide it: the text PyYAML's dump writes cannot be reproduced exactly"
	}
	return "it has no JSONata equivalent; Eval runs it"
}

// useFuncHelpers marks the helpers a builtin passed as a value calls.
func (c *compiler) useFuncHelpers(f val) {
	for h := range helpers {
		if strings.Contains(f.js, "$"+h+"(") {
			c.use(h)
		}
	}
}

func countsOf(js []string) string {
	out := make([]string, len(js))
	for i, j := range js {
		out[i] = "$count(" + j + ")"
	}
	return strings.Join(out, ", ")
}

func indexAll(js []string) string {
	out := make([]string, len(js))
	for i, j := range js {
		out[i] = "$py_one(" + j + "[$i])"
	}
	return strings.Join(out, ", ")
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
