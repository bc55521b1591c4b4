// Command ddblocal runs a command with one DynamoDB Local for all of it, so that every test binary
// of `make test` shares one JVM instead of starting its own:
//
//	go run ./internal/testenv/ddblocal/cmd/ddblocal -- go test ./...
//
// It starts DynamoDB Local on a free loopback port, runs the command with
// SINEW_TEST_DYNAMODB_ENDPOINT set to it, stops the server and exits with the command's status.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"sinew/internal/testenv/ddblocal"
)

func main() { os.Exit(run()) }

func run() int {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: ddblocal -- command [args...]")
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	srv, err := ddblocal.Start(ctx)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ddblocal:", err)
		return 1
	}
	defer srv.Close()

	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), ddblocal.EnvEndpoint+"="+srv.Endpoint())
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "ddblocal:", err)
		return 1
	}
	// Pass an interrupt on to the command and let it finish, so the server is stopped after it.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ddblocal:", err)
		return 1
	}
	return 0
}
