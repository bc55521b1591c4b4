// Command model is agent_loop's model step (package handler/model).
package main

import (
	"sinew/internal/handler"
	"sinew/internal/handler/model"
)

func main() { handler.Start(model.New) }
