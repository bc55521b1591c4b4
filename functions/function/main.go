// Command function is the executor of function calls, which records them for the client (package
// handler/function).
package main

import (
	"sinew/internal/handler"
	"sinew/internal/handler/function"
)

func main() { handler.Start(function.New) }
