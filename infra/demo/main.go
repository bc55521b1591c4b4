// Command demo is sinew's main job on one machine, end to end, through its public interfaces only
// (the HTTP API, the Step Functions API, the AWS CLI, the DynamoDB API):
//
//   - it starts a weather API and an SMTP server of its own on loopback, makes a small video with
//     ffmpeg, builds and starts local mode with the scripted model of script.json;
//   - it stores the SMTP password as a developer secret, creates an agent with a tool of each type
//     (setup and arguments in the agent's metadata, an override in a session's);
//   - through the tool_call state machine it runs an integration (dummy), an api_call, a system call,
//     the ffmpeg integration on the video, and a function tool that pauses until the AWS CLI's
//     send-task-success, printed for the reader to reuse, resumes it;
//   - over MCP (POST /agents/{id}/mcp), with the official Go SDK's client, it lists the agent's tools
//     and calls four of them, the thumbnail answered as image content;
//   - through chat it plays two turns of the scripted model: one where the model calls the weather
//     API and then the email integration, which sinew runs (the mail reaches the SMTP server), and one
//     where the model calls the function tool, which comes back to the client, whose answer finishes
//     the turn;
//   - it checks that no setup secret reached local mode's log, an API answer, a Step Functions history
//     or DynamoDB in plain text, prints a report with the time of each step, and stops what it started.
//
// It exits non-zero, naming the step that failed and why.
//
//	go run ./infra/demo            (make demo; from the module root or below it)
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		os.Exit(1)
	}
	if _, err := run(ctx, options{root: root, out: os.Stdout}); err != nil {
		fmt.Fprintf(os.Stderr, "\ndemo FAILED: %v\n", err)
		os.Exit(1)
	}
}

// moduleRoot is the directory of sinew's go.mod, found from the working directory upwards.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(b), "module sinew\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run the demo inside the sinew repository (no go.mod of module sinew above the working directory)")
		}
		dir = parent
	}
}
