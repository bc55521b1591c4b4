package asl

// This file is the engine's one seam onto the path and intrinsic languages
// (internal/asl/jsonpath and internal/asl/intrinsic).

import (
	"errors"
	"fmt"

	"sinew/internal/asl/intrinsic"
	"sinew/internal/asl/jsonpath"
)

// pathEnv is what a path or intrinsic is evaluated against: `$` is Input, `$$` is Context, `$name`
// is a variable.
type pathEnv struct {
	Input   any
	Context any
	Var     func(name string) (any, bool)
	Source  jsonpath.Source // the context object and variables on demand (a state visit)
}

// compiledPath is a parsed JSONPath (or Reference Path).
type compiledPath interface {
	Eval(env pathEnv) (any, error)
	Set(doc any, value any) (any, error)
	String() string
	Definite() bool
}

// compiledIntrinsic is a parsed intrinsic function call.
type compiledIntrinsic interface {
	Eval(env pathEnv) (any, error)
}

type jsPath struct{ p *jsonpath.Path }

func (j jsPath) Eval(env pathEnv) (any, error)   { return j.p.Eval(jsonpath.Env(env)) }
func (j jsPath) Set(doc, value any) (any, error) { return j.p.Set(doc, value) }
func (j jsPath) String() string                  { return j.p.String() }
func (j jsPath) Definite() bool                  { return j.p.Definite() }

type jsIntrinsic struct{ e *intrinsic.Expr }

func (j jsIntrinsic) Eval(env pathEnv) (any, error) { return j.e.Eval(jsonpath.Env(env)) }

func parsePath(s string) (compiledPath, error) {
	p, err := jsonpath.Parse(s)
	if err != nil {
		return nil, err
	}
	return jsPath{p}, nil
}

func parseReference(s string) (compiledPath, error) {
	p, err := jsonpath.ParseReference(s)
	if err != nil {
		return nil, err
	}
	return jsPath{p}, nil
}

func isIntrinsic(s string) bool { return intrinsic.IsCall(s) }

func parseIntrinsic(s string) (compiledIntrinsic, error) {
	e, err := intrinsic.Parse(s)
	if err != nil {
		return nil, err
	}
	return jsIntrinsic{e}, nil
}

// pathMsg is the message of a path failure without the "Invalid path '…' : " prefix (Jayway's text).
func pathMsg(err error) string {
	var pe *jsonpath.Error
	if errors.As(err, &pe) {
		return pe.Msg
	}
	return err.Error()
}

// intrinsicFailure words an intrinsic's run-time failure as AWS does: a path argument that found
// nothing names the field and the input; anything else keeps the function's own cause.
func intrinsicFailure(err error, field string) *templateError {
	var ie *intrinsic.Error
	if errors.As(err, &ie) {
		if ie.Path != "" {
			return &templateError{name: ErrRuntime, cause: fmt.Sprintf("The JSONPath '%s' specified for the field '%s' could not be found in the input '%s'", ie.Path, field, mustJSON(ie.Input))}
		}
		return &templateError{name: ie.Name, cause: ie.Cause}
	}
	return &templateError{name: ErrRuntime, cause: err.Error()}
}
