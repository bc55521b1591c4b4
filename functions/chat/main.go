// Command chat is the Lambda behind POST /sessions/{session_id}/chat (package handler/chat).
package main

import (
	"sinew/internal/handler"
	"sinew/internal/handler/chat"
)

func main() { handler.Start(chat.New) }
