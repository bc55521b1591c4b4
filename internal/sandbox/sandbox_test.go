package sandbox_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sinew/internal/sandbox"
)

// dialEnv, set, makes this test binary a client instead: it tries each network=address in the
// value (comma-separated), sends a byte where it connects, and prints what happened.
const dialEnv = "SINEW_SANDBOX_TEST_DIAL"

func TestMain(m *testing.M) {
	if targets := os.Getenv(dialEnv); targets != "" {
		for _, target := range strings.Split(targets, ",") {
			network, address, _ := strings.Cut(target, "=")
			c, err := net.DialTimeout(network, address, time.Second)
			if err != nil {
				fmt.Printf("%s: %v\n", network, err)
				continue
			}
			_, err = c.Write([]byte("x"))
			fmt.Printf("%s: connected, write: %v\n", network, err)
			_ = c.Close()
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

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

// acceptOnce answers a channel that receives when ln accepts a connection.
func acceptOnce(ln net.Listener) <-chan struct{} {
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- struct{}{}
			_ = c.Close()
		}
	}()
	return accepted
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

func TestCommandRefusesBadSpecs(t *testing.T) {
	parent := t.TempDir()
	work := filepath.Join(parent, "run-1")
	tests := []struct {
		name string
		spec sandbox.Spec
		says string
	}{
		{"relative program", sandbox.Spec{Path: "cat", Dir: work}, "absolute"},
		{"relative work directory", sandbox.Spec{Path: "/usr/bin/cat", Dir: "work"}, "absolute"},
		// Every run's work directory is a sibling under the same parent: reading it reads theirs.
		{"read directory holding the work directory", sandbox.Spec{Path: "/usr/bin/cat", Dir: work, ReadDirs: []string{parent}}, "run-1"},
		{"work directory under a system directory", sandbox.Spec{Path: "/usr/bin/cat", Dir: "/opt/sinew/run-1"}, "/opt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := sandbox.CommandContext(context.Background(), tc.spec); err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("err = %v, want a refusal saying %q", err, tc.says)
			}
		})
	}
}

// TestReadablePathsAreReadable checks the list local mode refuses data directories under: it holds
// /usr and /opt (ffmpeg and its libraries, a Lambda layer's), and a confined program can read each.
func TestReadablePathsAreReadable(t *testing.T) {
	needLandlock(t)
	paths := sandbox.ReadablePaths()
	for _, want := range []string{"/usr", "/opt", "/lib", "/etc/ld.so.cache"} {
		if !slices.Contains(paths, want) {
			t.Errorf("ReadablePaths() = %v lacks %s", paths, want)
		}
	}
	dir := t.TempDir()
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil || p == "/dev/urandom" {
			continue // absent here, or a device that never ends
		}
		t.Run(p, func(t *testing.T) {
			prog, args := "/usr/bin/cat", []string{p}
			if st.IsDir() {
				prog, args = "/usr/bin/ls", []string{"-A", p}
			}
			if out, err := run(t, dir, nil, prog, args...); err != nil {
				t.Fatalf("%s %s, confined: %v %s", prog, p, err, out)
			}
		})
	}
}

// TestConfinedProgramOpensNoSocket runs this test binary confined as a client of a unix socket
// outside its work directory and of a UDP port on loopback (Landlock, up to ABI 7, stops neither):
// it gets no socket at all, and neither listener hears from it.
func TestConfinedProgramOpensNoSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "service.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := acceptOnce(ln)
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := []string{dialEnv + "=unix=" + sock + ",udp=" + udp.LocalAddr().String() + ",tcp=127.0.0.1:9"}
	cmd, err := sandbox.CommandContext(context.Background(), sandbox.Spec{Path: exe, Dir: t.TempDir(), Env: env, ReadDirs: []string{filepath.Dir(exe)}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the confined client failed: %v %s", err, out)
	}
	lines := strings.Split(string(out), "\n")
	for _, network := range []string{"unix", "udp", "tcp"} {
		i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, network+": ") })
		if i < 0 || !strings.HasSuffix(lines[i], "socket: permission denied") {
			t.Errorf("the confined client said %q; want its %s socket refused", out, network)
		}
	}
	_ = udp.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if n, from, err := udp.ReadFrom(make([]byte, 16)); err == nil {
		t.Errorf("the UDP listener got %d byte(s) from %v", n, from)
	}
	select {
	case <-accepted:
		t.Error("the unix socket accepted a connection from the confined program")
	default:
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
	accepted := acceptOnce(ln)
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
