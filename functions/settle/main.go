// Command settle is the state machines' Settle step and the status-change events' target (package
// handler/settle).
package main

import (
	"sinew/internal/handler"
	"sinew/internal/handler/settle"
)

func main() { handler.Start(settle.New) }
