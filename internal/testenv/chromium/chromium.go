// Package chromium starts Debian's headless Chromium for tests, with its DevTools endpoint on
// 127.0.0.1 and a port the browser picks, read back from the DevToolsActivePort file. A test that
// needs it fails, never skips, when the browser is missing: `make deps` installs it.
package chromium

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Browser is a running headless Chromium.
type Browser struct {
	Port int
	// WSURL is the browser's DevTools websocket, ws://127.0.0.1:PORT/devtools/browser/ID.
	WSURL string
	// HTTPURL is http://127.0.0.1:PORT, whose /json/version names WSURL.
	HTTPURL string
	// Dir holds all that the browser writes: its profile, its HOME (and so its Downloads folder)
	// and its working directory.
	Dir string
}

// Path finds the browser binary: SINEW_CHROMIUM_PATH, else chromium or chromium-browser on PATH.
func Path() (string, error) {
	if p := os.Getenv("SINEW_CHROMIUM_PATH"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no chromium on PATH")
}

// Start runs a browser until the test ends, with flags added to the headless ones (for example
// --host-resolver-rules to give a test host name a loopback address).
func Start(t testing.TB, flags ...string) *Browser {
	t.Helper()
	bin, err := Path()
	if err != nil {
		t.Fatalf("Chromium is not installed: `make deps` installs it (%v)", err)
	}
	root := t.TempDir()
	dir, home, work := filepath.Join(root, "profile"), filepath.Join(root, "home"), filepath.Join(root, "work")
	for _, d := range []string{dir, home, work} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	args := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--no-default-browser-check", "--mute-audio",
		"--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
		"--user-data-dir=" + dir}, flags...)
	cmd := exec.Command(bin, append(args, "about:blank")...)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	cmd.Stdout = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Whatever the browser saves lands under root, not in the real HOME or the package's folder.
	cmd.Dir = work
	cmd.Env = append(withoutHome(os.Environ()), "HOME="+home)
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
		}
	})
	// The browser writes the port and the browser path once DevTools listens.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	portFile := filepath.Join(dir, "DevToolsActivePort")
	for {
		if b, err := os.ReadFile(portFile); err == nil {
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			if len(lines) == 2 {
				port, err := strconv.Atoi(lines[0])
				if err == nil && port > 0 {
					return &Browser{
						Port:    port,
						WSURL:   fmt.Sprintf("ws://127.0.0.1:%d%s", port, lines[1]),
						HTTPURL: fmt.Sprintf("http://127.0.0.1:%d", port),
						Dir:     root,
					}
				}
			}
		}
		select {
		case <-exited:
			t.Fatalf("chromium exited before DevTools listened:\n%s", stderr.String())
		case <-ctx.Done():
			t.Fatalf("chromium's DevTools did not come up within 60 s:\n%s", stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// withoutHome drops HOME and the XDG folders, which would send the browser's files elsewhere.
func withoutHome(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "XDG_") && !strings.HasPrefix(kv, "HOME=") {
			out = append(out, kv)
		}
	}
	return out
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 64<<10 {
		return len(p), nil // keep the start, where the reason a launch failed is
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
