// Command integration is the executor of integration calls (package handler/integration).
package main

import (
	"sinew/internal/handler"
	"sinew/internal/handler/integration"
)

func main() { handler.Start(integration.New) }
