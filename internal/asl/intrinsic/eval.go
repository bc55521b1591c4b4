package intrinsic

import (
	"errors"

	"sinew/internal/asl/jsonpath"
	"sinew/internal/asl/jsonpath/javafmt"
)

// ErrRuntime is the ASL error name of every intrinsic failure at run time. AWS reports bad
// arguments as States.Runtime with the cause "Invalid arguments in States.<Name>" (observed on AWS
// by several public test suites; the LocalStack recordings hold no intrinsic failure).
const ErrRuntime = "States.Runtime"

// Error is an intrinsic failure at run time.
type Error struct {
	Name   string // the ASL error name, "States.Runtime"
	Cause  string // AWS's cause text, e.g. "Invalid arguments in States.MathAdd"
	Detail string // the rule that was broken; sinew's own words, not part of AWS's cause
	// Path is set when a path argument found nothing: the engine words that cause itself, naming
	// the field ("The JSONPath '$.x' specified for the field 'v.$' could not be found in the input
	// '…'"); Input is the document the path was evaluated on, for that message.
	Path  string
	Input any
	Err   error // the underlying error, if any
}

func (e *Error) Error() string {
	s := e.Name + ": " + e.Cause
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

func invalidArgs(c *call, detail string) *Error {
	return &Error{Name: ErrRuntime, Cause: "Invalid arguments in States." + c.name, Detail: detail}
}

// Eval evaluates the call in env. Arguments are evaluated left to right, innermost calls first.
func (e *Expr) Eval(env jsonpath.Env) (any, error) {
	return e.call.eval(env)
}

func (c *call) eval(env jsonpath.Env) (any, error) {
	vals := make([]any, len(c.args))
	for i := range c.args {
		a := &c.args[i]
		switch a.kind {
		case argLiteral:
			vals[i] = a.val
		case argCall:
			v, err := a.call.eval(env)
			if err != nil {
				return nil, err
			}
			vals[i] = v
		case argPath:
			v, err := a.path.Eval(env)
			if err != nil {
				return nil, pathError(a.path, env, err)
			}
			vals[i] = v
		}
	}
	if len(vals) < c.fn.minArgs || (c.fn.maxArgs >= 0 && len(vals) > c.fn.maxArgs) {
		return nil, invalidArgs(c, arityText(c.fn)+", got "+itoa(len(vals)))
	}
	return c.fn.impl(c, vals)
}

func pathError(p *jsonpath.Path, env jsonpath.Env, err error) *Error {
	root := env.Input
	switch s := p.String(); {
	case len(s) > 1 && s[1] == '$':
		root = env.ContextObject()
	case len(s) > 1 && s[1] != '.' && s[1] != '[':
		root, _ = env.Variable(varName(s))
	}
	var je *jsonpath.Error
	msg := err.Error()
	if errors.As(err, &je) {
		msg = je.Msg
	}
	return &Error{
		Name:   ErrRuntime,
		Cause:  "The JSONPath '" + p.String() + "' could not be found in the input '" + javafmt.JSON(root) + "'",
		Detail: msg,
		Path:   p.String(),
		Input:  root,
		Err:    err,
	}
}

func varName(s string) string {
	i := 1
	for i < len(s) && s[i] != '.' && s[i] != '[' {
		i++
	}
	return s[1:i]
}
