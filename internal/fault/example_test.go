package fault_test

import (
	"errors"
	"fmt"
	"os"

	"sinew/internal/fault"
)

// A domain function refuses bad input with the field at fault; whoever wraps the error keeps its
// kind, which the HTTP boundary turns into a 400 and the Lambda boundary into the error name the
// state machines match on. A failure with a cause keeps the cause for logs only.
func Example() {
	refused := fmt.Errorf("create agent: %w", fault.Invalid("name", "name is required"))
	fmt.Println(fault.KindOf(refused), fault.FieldOf(refused))
	fmt.Println(fault.Message(refused))

	_, cause := os.Open("/no/such/file")
	failed := fault.Wrap(fault.Transient, cause, "read the settings")
	fmt.Println(fault.KindOf(failed), fault.Is(failed, fault.Transient), errors.Is(failed, os.ErrNotExist))
	fmt.Println(fault.Message(failed))

	// A plain error is sinew's own fault.
	fmt.Println(fault.KindOf(errors.New("boom")))
	// Output:
	// Sinew.InvalidInput name
	// name is required
	// Sinew.Transient true true
	// read the settings
	// Sinew.Internal
}
