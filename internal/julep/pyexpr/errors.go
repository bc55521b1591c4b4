package pyexpr

import "fmt"

// Unsupported is a construct that does not translate: to JSONata (Compile), or at all (Eval
// and Classify, where it is refused). Pos is the byte offset of the construct in Expr.
type Unsupported struct {
	Expr      string // the expression as written (after "$ ")
	Pos       int
	Construct string // what was met, e.g. "the 'is' operator", "re.search"
	Reason    string // why it does not map, and what to write instead where there is a way
}

func (e *Unsupported) Error() string {
	msg := fmt.Sprintf("expression %q: %s at offset %d is not supported", e.Expr, e.Construct, e.Pos)
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg
}

// SyntaxError is an expression Python's parser would refuse.
type SyntaxError struct {
	Expr string
	Pos  int
	Msg  string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("expression %q: syntax error at offset %d: %s", e.Expr, e.Pos, e.Msg)
}

// EvalError is an expression that failed while it was evaluated (a Python exception).
type EvalError struct {
	Expr string
	Msg  string
}

func (e *EvalError) Error() string { return fmt.Sprintf("expression %q: %s", e.Expr, e.Msg) }

func unsupported(n node, construct, reason string) *Unsupported {
	p := 0
	if n != nil {
		p = n.pos()
	}
	return &Unsupported{Pos: p, Construct: construct, Reason: reason}
}
