// Command api is the Lambda behind every HTTP route but chat (package handler/api).
package main

import (
	"sinew/internal/handler"
	"sinew/internal/handler/api"
)

func main() { handler.Start(api.New) }
