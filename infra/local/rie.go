package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"sinew/internal/deploy"
	"sinew/internal/localaws/lambdaapi"
)

// RIEModule is the AWS Lambda Runtime Interface Emulator, pinned (aws-notes.md "Lambda Runtime
// Interface Emulator").
const RIEModule = "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@v0.0.0-20261030222936-bef5c4ba774d"

// rieFunction is one function's real bootstrap, built for this machine, under its own emulator.
// The emulator serves one invocation at a time (two at once made it panic), so calls are
// serialised.
type rieFunction struct {
	name string
	url  string
	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
}

// startRIE builds each described function that has a folder under functions/ and runs it under
// the emulator at bin; the others keep their in-process handler (or none).
func startRIE(ctx context.Context, root, dir, bin string, log *slog.Logger) ([]*rieFunction, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("--rie: the emulator %s is missing (install it: GOBIN=<dir> go install %s): %w", bin, RIEModule, err)
	}
	var out []*rieFunction
	for _, fn := range deploy.Functions() {
		src := filepath.Join(root, "functions", fn.Name)
		if _, err := os.Stat(filepath.Join(src, "main.go")); err != nil {
			continue
		}
		boot := filepath.Join(dir, "rie", fn.Name, "bootstrap")
		build := exec.CommandContext(ctx, "go", "build", "-tags", "lambda.norpc", "-o", boot, "./functions/"+fn.Name)
		build.Dir = root
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if msg, err := build.CombinedOutput(); err != nil {
			stopRIE(out)
			return nil, fmt.Errorf("--rie: build %s: %w\n%s", fn.Name, err, msg)
		}
		f, err := runRIE(ctx, bin, boot, fn)
		if err != nil {
			stopRIE(out)
			return nil, err
		}
		log.Info("function runs its real bootstrap under the Runtime Interface Emulator", "function", fn.Name, "emulator", f.url)
		out = append(out, f)
	}
	return out, nil
}

func runRIE(ctx context.Context, bin, boot string, fn deploy.Function) (*rieFunction, error) {
	ports := make([]int, 2)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ports[i] = l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
	}
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	cmd := exec.Command(bin, "--runtime-interface-emulator-address", addr,
		"--runtime-api-address", "127.0.0.1:"+strconv.Itoa(ports[1]), boot)
	cmd.Env = append(os.Environ(), "AWS_LAMBDA_FUNCTION_NAME="+fn.Name,
		"AWS_LAMBDA_FUNCTION_TIMEOUT="+strconv.Itoa(int(fn.Timeout/time.Second)),
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE="+strconv.Itoa(fn.MemoryMB))
	cmd.Env = append(cmd.Env, fn.RuntimeEnvList()...) // the Go runtime's settings the stack deploys
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("--rie: start the emulator for %s: %w", fn.Name, err)
	}
	f := &rieFunction{name: fn.Name, url: "http://" + addr + "/2015-03-31/functions/function/invocations", cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(f.done) }()
	// Ready once it listens (~60 ms when the machine is quiet, far longer on a busy one): it is
	// polled until then, with no deadline of its own; an emulator that exits is the failure, and
	// local mode's own stop (ctx) ends the wait.
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			_ = c.Close()
			return f, nil
		}
		select {
		case <-f.done:
			return nil, fmt.Errorf("--rie: the emulator for %s exited at start", fn.Name)
		case <-ctx.Done():
			f.stop()
			return nil, fmt.Errorf("--rie: the emulator for %s: %w", fn.Name, ctx.Err())
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// Invoke implements lambdaapi.Invoker. The emulator answers a function error as 200 with
// {"errorMessage", "errorType"} and no X-Amz-Function-Error header, so the body decides.
func (f *rieFunction) Invoke(ctx context.Context, payload []byte) ([]byte, *lambdaapi.FunctionError, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url, bytes.NewReader(payload))
	if err != nil {
		return nil, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("the emulator of %s: %w", f.name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, lambdaapi.MaxSyncPayload+1))
	if err != nil {
		return nil, nil, fmt.Errorf("the emulator of %s: %w", f.name, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("the emulator of %s answered %d: %s", f.name, resp.StatusCode, clipBytes(body))
	}
	var fe struct {
		Type    *string `json:"errorType"`
		Message *string `json:"errorMessage"`
	}
	if json.Unmarshal(body, &fe) == nil && fe.Type != nil && fe.Message != nil {
		return nil, &lambdaapi.FunctionError{Type: *fe.Type, Message: *fe.Message}, nil
	}
	return body, nil, nil
}

func clipBytes(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

func (f *rieFunction) stop() {
	_ = syscall.Kill(-f.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-f.done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-f.cmd.Process.Pid, syscall.SIGKILL)
		<-f.done
	}
}

func stopRIE(fs []*rieFunction) {
	for _, f := range fs {
		f.stop()
	}
}
