// Command apicall is the executor of api_call calls (package handler/apicall).
package main

import (
	"sinew/internal/handler"
	"sinew/internal/handler/apicall"
)

func main() { handler.Start(apicall.New) }
