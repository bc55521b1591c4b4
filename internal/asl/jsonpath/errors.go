package jsonpath

import (
	"sinew/internal/fault"
)

// ErrorKind tells the engine which AWS failure a path error becomes.
type ErrorKind int

const (
	// ErrSyntax: the text is not a path AWS accepts (a definition error).
	ErrSyntax ErrorKind = iota + 1
	// ErrNotFound: a definite path found nothing, or met a value of the wrong shape. AWS reports it
	// as States.Runtime ("Invalid path '…' : No results for path: …").
	ErrNotFound
	// ErrResultPath: Set could not place the value (AWS's States.ResultPathMatchFailure).
	ErrResultPath
)

// Error is a path failure carrying Jayway's message text, which AWS quotes in its causes.
type Error struct {
	Kind ErrorKind
	Path string // the path as written
	Msg  string // Jayway's message, e.g. "Missing property in path $['no']"
}

// Error renders AWS's wording: "Invalid path '$.no.such' : Missing property in path $['no']".
func (e *Error) Error() string {
	return "Invalid path '" + e.Path + "' : " + e.Msg
}

// Unwrap lets fault.KindOf see a malformed path as InvalidInput (a definition the caller wrote);
// evaluation failures are data problems of the running workflow and carry no fault kind.
func (e *Error) Unwrap() error {
	if e.Kind == ErrSyntax {
		return fault.Invalid("path", "invalid JSONPath %q: %s", e.Path, e.Msg)
	}
	return nil
}

func syntaxErr(path, msg string) *Error { return &Error{Kind: ErrSyntax, Path: path, Msg: msg} }

// notFound is the internal signal of Jayway's PathNotFoundException; it becomes an *Error at the
// top of Eval, where the path text is known.
type notFound struct{ msg string }

func (n *notFound) Error() string { return n.msg }
