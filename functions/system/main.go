// Command system is the executor of system calls (package handler/system).
package main

import (
	"sinew/internal/handler"
	"sinew/internal/handler/system"
)

func main() { handler.Start(system.New) }
