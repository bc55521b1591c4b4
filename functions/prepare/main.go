// Command prepare is tool_call's Prepare (package handler/prepare).
package main

import (
	"sinew/internal/handler"
	"sinew/internal/handler/prepare"
)

func main() { handler.Start(prepare.New) }
