package sandbox_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sinew/internal/sandbox"
)

// run runs a program confined to dir and answers its output and error.
func run(t *testing.T, dir string, env []string, path string, args ...string) (string, error) {
	t.Helper()
	cmd, err := sandbox.CommandContext(context.Background(), sandbox.Spec{Path: path, Args: args, Dir: dir, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	return out.String(), err
}

func needLandlock(t *testing.T) {
	t.Helper()
	if sandbox.Available() == 0 {
		t.Fatal("this kernel has no Landlock (Linux 5.13+ with landlock in its lsm= list): the confinement under test is not there")
	}
}

func TestConfinedProgramReadsOnlyItsDirectory(t *testing.T) {
	needLandlock(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "in.txt"), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("not yours"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Setenv("SINEW_SANDBOX_TEST_SECRET", "canary-4411"); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, dir, nil, "/usr/bin/cat", "in.txt"); err != nil || out != "mine" {
		t.Fatalf("cat in.txt = %q, %v; want its content", out, err)
	}
	if out, err := run(t, dir, nil, "/usr/bin/cp", "in.txt", "out.txt"); err != nil {
		t.Fatalf("cp in.txt out.txt: %v %s", err, out)
	}
	for _, path := range []string{"/etc/passwd", outside, fmt.Sprintf("/proc/%d/environ", os.Getpid()), "/proc/self/environ"} {
		t.Run(path, func(t *testing.T) {
			out, err := run(t, dir, nil, "/usr/bin/cat", path)
			if err == nil || strings.Contains(out, "root:") || strings.Contains(out, "not yours") || strings.Contains(out, "canary-4411") {
				t.Fatalf("cat %s = %q, %v; want it refused", path, out, err)
			}
			if !strings.Contains(out, "Permission denied") {
				t.Errorf("cat %s said %q, want Permission denied", path, out)
			}
		})
	}
	if out, err := run(t, dir, nil, "/usr/bin/cp", "in.txt", filepath.Join(filepath.Dir(outside), "x")); err == nil {
		t.Errorf("writing outside the directory succeeded: %s", out)
	}
}

func TestConfinedProgramHasOnlyItsEnvironment(t *testing.T) {
	if err := os.Setenv("SINEW_SANDBOX_TEST_SECRET", "canary-4411"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if out, err := run(t, dir, nil, "/usr/bin/env"); err != nil || out != "" {
		t.Fatalf("env = %q, %v; want an empty environment", out, err)
	}
	if out, err := run(t, dir, []string{"LC_ALL=C"}, "/usr/bin/env"); err != nil || out != "LC_ALL=C\n" {
		t.Fatalf("env = %q, %v; want LC_ALL=C only", out, err)
	}
}

func TestCommandRefusesRelativePaths(t *testing.T) {
	if _, err := sandbox.CommandContext(context.Background(), sandbox.Spec{Path: "cat", Dir: t.TempDir()}); err == nil {
		t.Fatal("a relative program path was accepted")
	}
	if _, err := sandbox.CommandContext(context.Background(), sandbox.Spec{Path: "/usr/bin/cat", Dir: "work"}); err == nil {
		t.Fatal("a relative work directory was accepted")
	}
}

func TestConfinedProgramMakesNoTCPConnection(t *testing.T) {
	needLandlock(t)
	if sandbox.Available() < 4 {
		t.Fatalf("this kernel's Landlock ABI is %d; TCP rules need ABI 4 (Linux 6.7+)", sandbox.Available())
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- struct{}{}
			_ = c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	// bash's /dev/tcp is a plain connect(2); unconfined it reaches the listener.
	script := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d", port)
	out, err := run(t, t.TempDir(), nil, "/usr/bin/bash", "-c", script)
	if err == nil {
		t.Fatalf("a confined program connected to 127.0.0.1:%d: %s", port, out)
	}
	if !strings.Contains(out, "Permission denied") {
		t.Errorf("bash said %q, want the connect refused with Permission denied", out)
	}
	select {
	case <-accepted:
		t.Fatal("the listener accepted a connection from the confined program")
	default:
	}
}
