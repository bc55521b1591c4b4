package executor

import (
	"errors"

	"sinew/internal/fault"
)

// Redacter replaces known secret values in a text: a call's *secrets.Scope.
type Redacter interface{ Redact(string) string }

// RedactErr is err with every value red knows replaced, when its message holds one: what an
// executor fails with is recorded by call id and travels in the execution's history, and a
// provider's error may echo what it was sent. The kind and field stay; the cause is dropped, as
// its text is what held the value. red is the call's own scope, never the process's redactor:
// another call's secrets must not change what this call answers.
func RedactErr(red Redacter, err error) error {
	if err == nil || red == nil {
		return err
	}
	msg := err.Error()
	r := red.Redact(msg)
	if r == msg {
		return err
	}
	out := &fault.Error{Kind: fault.KindOf(err), Msg: r}
	var fe *fault.Error
	if errors.As(err, &fe) {
		out.Field = fe.Field
	}
	return out
}
