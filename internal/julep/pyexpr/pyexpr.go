package pyexpr

import (
	"errors"
	"strings"

	"sinew/internal/jsonv"
)

// Form is what a Julep field value is, as Julep v1 reads it.
type Form int

const (
	// Literal is a string with no expression in it: its value is itself (after Python's escape
	// processing, which Julep applies to every non-"$ " string).
	Literal Form = iota
	// Python is a "$ ..." expression, or one of the bare shapes Julep still reads as Python
	// ("_", "_.x", "_[...]", "[...]", anything with "inputs[" or "outputs[").
	Python
	// Template is any other string with {{ }}: Julep turns {{ and }} into { and } and evaluates the
	// result as the body of a triple-quoted f-string.
	Template
)

// field is a parsed field value.
type field struct {
	form Form
	expr string // the Python source (for Template and Literal: the f-string body)
	tree node   // nil for a Literal
	lit  string // a Literal's value
}

// parse reads a field value the way Julep v1's evaluate_expressions and backwards_compatibility
// do (src/agents-api/agents_api/common/utils/expressions.py and task_validation.py).
func parse(src string) (*field, error) {
	s := strings.TrimSpace(src)
	if strings.HasPrefix(s, "$ ") {
		f := &field{form: Python, expr: strings.TrimSpace(s[1:])}
		return f, f.parseTree(parseExpr)
	}
	if strings.Contains(s, "{{") {
		body := strings.ReplaceAll(strings.ReplaceAll(s, "{{", "{"), "}}", "}")
		f := &field{form: Template, expr: body}
		return f, f.parseTree(parseBody)
	}
	if s == "_" || strings.HasPrefix(s, "_.") || strings.HasPrefix(s, "_[") && strings.HasSuffix(s, "]") ||
		strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") ||
		strings.Contains(s, "outputs[") || strings.Contains(s, "inputs[") {
		f := &field{form: Python, expr: s}
		return f, f.parseTree(parseExpr)
	}
	// Julep evaluates every other string as f'''...''' too: single braces are fields.
	f := &field{form: Literal, expr: s}
	if err := f.parseTree(parseBody); err != nil {
		return f, err
	}
	if fs, ok := f.tree.(*fstrNode); ok && hasField(fs) {
		f.form = Template
		return f, nil
	}
	f.lit = literalOf(f.tree)
	f.tree = nil
	return f, nil
}

func hasField(fs *fstrNode) bool {
	for _, p := range fs.parts {
		if p.x != nil {
			return true
		}
	}
	return false
}

func literalOf(n node) string {
	if fs, ok := n.(*fstrNode); ok {
		var b strings.Builder
		for _, p := range fs.parts {
			b.WriteString(p.lit)
		}
		return b.String()
	}
	return ""
}

// parseBody parses an f-string body (a template).
func parseBody(src string) (node, error) {
	parts, err := parseFString(src, false, 0)
	if err != nil {
		return nil, err
	}
	return &fstrNode{parts: mergeLits(parts)}, nil
}

func (f *field) parseTree(parse func(string) (node, error)) error {
	t, err := parse(f.expr)
	if err != nil {
		return named(err, f.expr)
	}
	f.tree = t
	return nil
}

// named puts the expression's text into an error of this package.
func named(err error, expr string) error {
	var u *Unsupported
	var s *SyntaxError
	switch {
	case errors.As(err, &u):
		if u.Expr == "" {
			u.Expr = expr
		}
	case errors.As(err, &s):
		if s.Expr == "" {
			s.Expr = expr
		}
	}
	return err
}

// Compile translates one Julep field value (a "$ ..." Python expression, or a template string with
// {{ }}) into a JSONata expression that gives the value Python would.
//
// names maps each Julep name the expression may use ("_", "inputs", "outputs", "steps", "state",
// "input", "output", "agent", "task", "session", ...) to the JSONata expression that yields it in
// the compiled state (e.g. "$states.input.steps"); a name not in names is refused. Julep's
// constants (true, false, null, NEWLINE) and allowed functions need no entry.
//
// A string that is neither is a literal: Compile returns a JSONata string literal.
//
// An error is *Unsupported (a construct with no JSONata translation, with its position: Classify
// tells whether Eval can run it) or *SyntaxError; both name the expression and the construct.
func Compile(src string, names map[string]string) (string, error) {
	f, err := parse(src)
	if err != nil {
		return "", err
	}
	if f.form == Literal {
		return jsonString(f.lit), nil
	}
	c := newCompiler(names)
	v, err := c.expr(f.tree)
	if err != nil {
		return "", named(err, f.expr)
	}
	return c.program(v.js), nil
}

// jsonString writes s as a JSONata string literal (JSON's syntax, which JSONata reads).
func jsonString(s string) string { return jsonv.EncodeString(s) }
