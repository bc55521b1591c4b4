package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"sinew/internal/localaws/sfnapi"
)

// binPath is ./infra/local built once for every test: the tests drive the real process.
var binPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sinew-local-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "local")
	if out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building ./infra/local: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// proc is a running local mode.
type proc struct {
	cmd    *exec.Cmd
	dir    string
	eps    map[string]string
	stdout *syncBuf
	stderr *syncBuf
	done   chan struct{}
	err    error
}

// startLocal runs the binary on dir and waits for it to print "ready".
func startLocal(t testing.TB, dir string, extra ...string) *proc {
	t.Helper()
	args := append([]string{"--dir", dir, "--test-functions", "--root", "../.."}, extra...)
	p := &proc{cmd: exec.Command(binPath, args...), dir: dir, stdout: &syncBuf{}, stderr: &syncBuf{}, done: make(chan struct{})}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stdout, p.cmd.Stderr = pw, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = pw.Close()
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		once := sync.Once{}
		for sc.Scan() {
			fmt.Fprintln(p.stdout, sc.Text())
			if sc.Text() == "ready" {
				once.Do(func() { close(ready) })
			}
		}
	}()
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	// A guard against a hang, not a performance bound: a cold DynamoDB Local JVM takes seconds.
	select {
	case <-ready:
	case <-p.done:
		t.Fatalf("local mode exited before it was ready: %v\nstdout:\n%s\nstderr:\n%s", p.err, p.stdout, p.stderr)
	case <-time.After(3 * time.Minute):
		t.Fatalf("local mode was not ready after 3 minutes\nstderr:\n%s", p.stderr)
	}
	data, err := os.ReadFile(filepath.Join(dir, "endpoints.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &p.eps); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"stepfunctions", "lambda", "http", "dynamodb"} {
		if !strings.HasPrefix(p.eps[k], "http://127.0.0.1:") {
			t.Fatalf("endpoints.json %s = %q, want a loopback URL", k, p.eps[k])
		}
	}
	return p
}

// kill9 kills the process as a crash would.
func (p *proc) kill9(t testing.TB) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
}

// stop ends the process with SIGTERM and checks that it shut down cleanly.
func (p *proc) stop(t testing.TB) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		t.Fatal("local mode did not stop within a minute of SIGTERM")
	}
	if p.err != nil {
		t.Errorf("local mode exited with %v\nstderr:\n%s", p.err, p.stderr)
	}
}

func (p *proc) sfn() *sfn.Client {
	return sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String(p.eps["stepfunctions"]),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}, sfnapi.NoHostPrefix)
}

// awsCLI runs the AWS CLI against endpoint and gives stdout, stderr and the error.
func awsCLI(t testing.TB, endpoint string, args ...string) (string, string, error) {
	t.Helper()
	if _, err := exec.LookPath("aws"); err != nil {
		t.Fatal("the AWS CLI (aws) is not on PATH; the CLI-driven tests need it")
	}
	cmd := exec.Command("aws", append(args, "--endpoint-url", endpoint, "--output", "json")...)
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "AWS_DEFAULT_REGION=us-east-1",
		"AWS_EC2_METADATA_DISABLED=true", "AWS_PAGER=", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// awsJSON runs the CLI and decodes what it prints; it must succeed.
func awsJSON(t testing.TB, endpoint string, args ...string) map[string]any {
	t.Helper()
	out, errOut, err := awsCLI(t, endpoint, args...)
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
