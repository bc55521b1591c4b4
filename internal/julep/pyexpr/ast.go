package pyexpr

// The tree of the Python expression subset Julep evaluates (simpleeval's EvalWithCompoundTypes
// over Python's own ast). Every node knows its byte offset in the expression, for errors.

type node interface{ pos() int }

type (
	nameNode struct {
		p  int
		id string
	}
	constNode struct {
		p int
		v any // string, int64, float64, bool or nil
	}
	// fstrNode is an f-string (and a template): literal text and {expr!conv:spec} fields.
	fstrNode struct {
		p     int
		parts []fpart
	}
	attrNode struct {
		p    int
		x    node
		name string
	}
	indexNode struct {
		p    int
		x, i node
	}
	sliceNode struct {
		p               int
		x, lo, hi, step node
	}
	callNode struct {
		p    int
		fn   node
		args []node
		kw   []kwarg
	}
	unaryNode struct {
		p  int
		op string
		x  node
	}
	binaryNode struct {
		p    int
		op   string
		x, y node
	} // arithmetic and bitwise operators
	boolNode struct {
		p    int
		op   string
		x, y node
	} // and, or
	// cmpNode is a comparison chain: x ops[0] ys[0] ops[1] ys[1] ...
	cmpNode struct {
		p   int
		x   node
		ops []string
		ys  []node
	}
	condNode struct {
		p               int
		then, test, els node
	}
	listNode struct {
		p     int
		elts  []node
		tuple bool
	}
	setNode struct {
		p    int
		elts []node
	}
	dictNode struct {
		p          int
		keys, vals []node
	}
	lambdaNode struct {
		p      int
		params []string
		body   node
	}
	// compNode is a comprehension: kind '[' list, '{' dict, 's' set, 'g' generator.
	compNode struct {
		p    int
		kind byte
		key  node // dict comprehensions only
		elt  node
		fors []compFor
	}
)

type fpart struct {
	lit  string
	x    node // nil for literal text
	src  string
	conv byte // 0, 's', 'r' or 'a'
	spec string
}

type kwarg struct {
	name string
	v    node
}

type compFor struct {
	vars  []string // one name, or the names of a tuple target
	tuple bool
	iter  node
	ifs   []node
}

func (n *nameNode) pos() int   { return n.p }
func (n *constNode) pos() int  { return n.p }
func (n *fstrNode) pos() int   { return n.p }
func (n *attrNode) pos() int   { return n.p }
func (n *indexNode) pos() int  { return n.p }
func (n *sliceNode) pos() int  { return n.p }
func (n *callNode) pos() int   { return n.p }
func (n *unaryNode) pos() int  { return n.p }
func (n *binaryNode) pos() int { return n.p }
func (n *boolNode) pos() int   { return n.p }
func (n *cmpNode) pos() int    { return n.p }
func (n *condNode) pos() int   { return n.p }
func (n *starNode) pos() int   { return n.p }
func (n *listNode) pos() int   { return n.p }
func (n *setNode) pos() int    { return n.p }
func (n *dictNode) pos() int   { return n.p }
func (n *lambdaNode) pos() int { return n.p }
func (n *compNode) pos() int   { return n.p }

// walk calls free for each name n reads that bound does not hold.
func walk(n node, bound map[string]bool, free func(string)) {
	if n == nil {
		return
	}
	with := func(names []string) map[string]bool {
		b := map[string]bool{}
		for k := range bound {
			b[k] = true
		}
		for _, k := range names {
			b[k] = true
		}
		return b
	}
	switch n := n.(type) {
	case *nameNode:
		if !bound[n.id] {
			free(n.id)
		}
	case *fstrNode:
		for _, p := range n.parts {
			walk(p.x, bound, free)
		}
	case *attrNode:
		walk(n.x, bound, free)
	case *indexNode:
		walk(n.x, bound, free)
		walk(n.i, bound, free)
	case *sliceNode:
		for _, x := range []node{n.x, n.lo, n.hi, n.step} {
			walk(x, bound, free)
		}
	case *callNode:
		walk(n.fn, bound, free)
		for _, a := range n.args {
			walk(a, bound, free)
		}
		for _, k := range n.kw {
			walk(k.v, bound, free)
		}
	case *unaryNode:
		walk(n.x, bound, free)
	case *binaryNode:
		walk(n.x, bound, free)
		walk(n.y, bound, free)
	case *boolNode:
		walk(n.x, bound, free)
		walk(n.y, bound, free)
	case *cmpNode:
		walk(n.x, bound, free)
		for _, y := range n.ys {
			walk(y, bound, free)
		}
	case *starNode:
		walk(n.x, bound, free)
	case *condNode:
		walk(n.then, bound, free)
		walk(n.test, bound, free)
		walk(n.els, bound, free)
	case *listNode:
		for _, e := range n.elts {
			walk(e, bound, free)
		}
	case *setNode:
		for _, e := range n.elts {
			walk(e, bound, free)
		}
	case *dictNode:
		for i := range n.keys {
			walk(n.keys[i], bound, free) // nil for **x
			walk(n.vals[i], bound, free)
		}
	case *lambdaNode:
		walk(n.body, with(n.params), free)
	case *compNode:
		b := bound
		for _, f := range n.fors {
			walk(f.iter, b, free)
			b = with(append(keysOf(b), f.vars...))
			for _, c := range f.ifs {
				walk(c, b, free)
			}
		}
		walk(n.key, b, free)
		walk(n.elt, b, free)
	}
}

func keysOf(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// starNode is *x in a list display.
type starNode struct {
	p int
	x node
}
