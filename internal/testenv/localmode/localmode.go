// Package localmode builds local mode (./infra/local) and runs it as a child process, for the
// tests that drive the real process (infra/local, internal/app, internal/e2e).
package localmode

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"sinew/internal/localaws/awsauth"
)

// Build gives the path of ./infra/local built from the module at root. go run keeps a linked
// executable in the build cache once it has been built twice (Go 1.24+), where go build -o links
// every time (tens of seconds on a busy machine): "go run -exec echo" names the cached executable
// without running it. When the cache does not keep it, the binary is built to fallback.
func Build(root, fallback string) (string, error) {
	for i := 0; i < 2; i++ {
		cmd := exec.Command("go", "run", "-exec", "echo", "./infra/local")
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			break
		}
		// An executable that was not cached was built in a temporary directory go run has
		// removed by now.
		if p := strings.TrimSpace(string(out)); filepath.IsAbs(p) {
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
		}
	}
	build := exec.Command("go", "build", "-o", fallback, "./infra/local")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building ./infra/local: %v\n%s", err, out)
	}
	return fallback, nil
}

// Proc is a running local mode.
type Proc struct {
	Cmd       *exec.Cmd
	Dir       string            // its --dir: endpoints.json, the journal, the key files
	Endpoints map[string]string // endpoints.json
	// Creds are the AWS credentials local mode made for Dir: its AWS endpoints answer only
	// requests signed with them.
	Creds   awsauth.Credentials
	Stdout  *Buffer
	Stderr  *Buffer // its log
	done    chan struct{}
	err     error
	started time.Time
}

// Start runs bin on dir with args after --dir, and env (KEY=VALUE) in place of the process's own
// when not nil, and waits until it prints "ready" and has written loopback endpoints. The AWS
// endpoint gets a free port unless args give --aws-port: tests run side by side. On an error the
// process has been stopped.
func Start(bin, dir string, args, env []string) (*Proc, error) {
	if !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--aws-port") }) {
		args = append([]string{"--aws-port", "0"}, args...)
	}
	p := &Proc{Cmd: exec.Command(bin, append([]string{"--dir", dir}, args...)...), Dir: dir,
		Stdout: &Buffer{}, Stderr: &Buffer{}, done: make(chan struct{})}
	p.Cmd.Env = env
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	p.Cmd.Stdout, p.Cmd.Stderr = pw, p.Stderr
	p.started = time.Now()
	if err := p.Cmd.Start(); err != nil {
		return nil, err
	}
	_ = pw.Close()
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		once := sync.Once{}
		for sc.Scan() {
			fmt.Fprintln(p.Stdout, sc.Text())
			if sc.Text() == "ready" {
				once.Do(func() { close(ready) })
			}
		}
	}()
	go func() { p.err = p.Cmd.Wait(); close(p.done) }()
	if err := p.waitReady(ready); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(dir, "endpoints.json"))
	if err == nil {
		err = json.Unmarshal(data, &p.Endpoints)
	}
	for _, k := range []string{"aws", "stepfunctions", "lambda", "http", "dynamodb"} {
		if err == nil && !strings.HasPrefix(p.Endpoints[k], "http://127.0.0.1:") {
			err = fmt.Errorf("endpoints.json %s = %q, want a loopback URL", k, p.Endpoints[k])
		}
	}
	if err == nil {
		p.Creds, err = awsauth.Load(dir)
	}
	if err != nil {
		p.Kill()
		return nil, err
	}
	return p, nil
}

// Region is local mode's one region.
const Region = "us-east-1"

// AWSEnv is the environment a child process (the AWS CLI, a Node or Python SDK) needs to call
// local mode's AWS endpoints: its credentials and region, with no shared config or metadata
// service to fall back on. It holds no endpoint: callers pass the one they test.
func (p *Proc) AWSEnv() []string {
	return append(p.Creds.Env(), "AWS_DEFAULT_REGION="+Region, "AWS_REGION="+Region, "AWS_SESSION_TOKEN=",
		"AWS_EC2_METADATA_DISABLED=true", "AWS_PAGER=", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null")
}

// Credentials is the AWS SDK for Go's provider of Creds.
func (p *Proc) Credentials() aws.CredentialsProvider { return p.Creds.Provider() }

// hungAfter is how long local mode may go without a line of output before it is taken as hung.
// Start-up has no overall deadline: on a busy machine it takes as long as it takes (--rie builds
// every function), and each step of it logs a line.
const hungAfter = 3 * time.Minute

// waitReady waits for ready while the process lives and keeps printing.
func (p *Proc) waitReady(ready <-chan struct{}) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ready:
			return nil
		case <-p.done:
			return fmt.Errorf("local mode exited before it was ready: %v\nstdout:\n%s\nstderr:\n%s", p.err, p.Stdout, p.Stderr)
		case <-tick.C:
			last := p.started
			for _, t := range []time.Time{p.Stdout.last(), p.Stderr.last()} {
				if t.After(last) {
					last = t
				}
			}
			if idle := time.Since(last); idle > hungAfter {
				p.Kill()
				return fmt.Errorf("local mode printed nothing for %s and was not ready\nstderr:\n%s", idle.Round(time.Second), p.Stderr)
			}
		}
	}
}

// Done is closed when the process has ended.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Err is how the process ended, once Done is closed.
func (p *Proc) Err() error {
	<-p.done
	return p.err
}

// Kill kills the process, if it still runs, and waits for it.
func (p *Proc) Kill() {
	select {
	case <-p.done:
	default:
		_ = p.Cmd.Process.Kill()
		<-p.done
	}
}

// Buffer is an output buffer written by one goroutine while others read it.
type Buffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	lastAt time.Time
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastAt = time.Now()
	return s.b.Write(p)
}

// last is when the buffer was last written.
func (s *Buffer) last() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastAt
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
