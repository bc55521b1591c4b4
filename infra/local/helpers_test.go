package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"sinew/internal/localaws/sfnapi"
	"sinew/internal/testenv/awscli"
	"sinew/internal/testenv/localmode"
)

// binPath is ./infra/local built once for every test: the tests drive the real process.
var binPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sinew-local-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if binPath, err = localmode.Build("../..", filepath.Join(dir, "local")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// proc is a running local mode.
type proc struct{ *localmode.Proc }

// startLocal runs the binary on dir and waits for it to be ready.
func startLocal(t testing.TB, dir string, extra ...string) *proc {
	t.Helper()
	lp, err := localmode.Start(binPath, dir, append([]string{"--test-functions", "--root", "../.."}, extra...), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lp.Kill)
	return &proc{lp}
}

// kill9 kills the process as a crash would.
func (p *proc) kill9(t testing.TB) {
	t.Helper()
	if err := p.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.Done()
}

// stop ends the process with SIGTERM and checks that it shut down cleanly.
func (p *proc) stop(t testing.TB) {
	t.Helper()
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(time.Minute):
		t.Fatal("local mode did not stop within a minute of SIGTERM")
	}
	if p.Err() != nil {
		t.Errorf("local mode exited with %v\nstderr:\n%s", p.Err(), p.Stderr)
	}
}

func (p *proc) sfn() *sfn.Client {
	return sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String(p.Endpoints["stepfunctions"]),
		Credentials: p.Credentials()}, sfnapi.NoHostPrefix)
}

// awsCLI runs the AWS CLI on PATH against endpoint, signed with p's credentials, and gives stdout,
// stderr and the error. Either major version reads and prints as v1 does (awscli.V1ShapesEnv).
func awsCLI(t testing.TB, p *proc, endpoint string, args ...string) (string, string, error) {
	t.Helper()
	cli := awscli.Find(t)
	cmd := exec.Command(cli.Path, append(args, "--endpoint-url", endpoint, "--output", "json")...)
	cmd.Env = append(append(os.Environ(), p.AWSEnv()...), cli.V1ShapesEnv(t))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// awsJSON runs the CLI and decodes what it prints; it must succeed.
func awsJSON(t testing.TB, p *proc, endpoint string, args ...string) map[string]any {
	t.Helper()
	out, errOut, err := awsCLI(t, p, endpoint, args...)
	if err != nil {
		t.Fatalf("aws %s: %v\n%s", strings.Join(args, " "), err, errOut)
	}
	var v map[string]any
	if strings.TrimSpace(out) == "" {
		return v
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("aws %s printed %q", strings.Join(args, " "), out)
	}
	return v
}

// invocations reads what the sinew-test-record function recorded.
func invocations(t testing.TB, dir string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, testInvocationsFile))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range splitLines(data) {
		var v map[string]any
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatalf("bad invocation line %q", line)
		}
		out = append(out, v)
	}
	return out
}

func countCalls(t testing.TB, dir, id string) int {
	n := 0
	for _, v := range invocations(t, dir) {
		if v["id"] == id {
			n++
		}
	}
	return n
}

// eventually polls cond until it holds; the bound only guards against a hang.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(5 * time.Millisecond):
		}
	}
}
