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
func (n *listNode) pos() int   { return n.p }
func (n *setNode) pos() int    { return n.p }
func (n *dictNode) pos() int   { return n.p }
func (n *lambdaNode) pos() int { return n.p }
func (n *compNode) pos() int   { return n.p }
