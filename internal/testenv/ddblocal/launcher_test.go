package ddblocal

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// stubProxyServer is DynamoDB Local's DynamoDBProxyServer as a release that renamed or retyped
// its Jetty server would have it; stubRunner builds one.
const (
	stubProxyServer = `package software.amazon.dynamodb.services.local.server;
public class DynamoDBProxyServer {
	private final FIELD;
	public DynamoDBProxyServer() {}
	public void start() {}
}`
	stubRunner = `package software.amazon.dynamodb.services.local.main;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;
public class ServerRunner {
	public static DynamoDBProxyServer createServerFromCommandLineArgs(String[] args) { return new DynamoDBProxyServer(); }
}`
)

// TestLauncherFailsRatherThanListenEverywhere runs the launcher where it cannot bind 127.0.0.1
// as it means to: it must exit non-zero and say why, never serve on every interface.
func TestLauncherFailsRatherThanListenEverywhere(t *testing.T) {
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatalf("java not found: %s", installHint)
	}
	dir, err := findJarDir()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	classes, err := launcherClasses(ctx, java, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		field string // the stub's field in place of "Server server"; "" runs the real jar
		want  string
	}{
		{"the Jetty server field is gone", "Object jetty = null", "NoSuchFieldException: server"},
		{"the Jetty server field is of another type", `Object server = "a string"`, "not a Jetty Server"},
		{"the port is taken", "", "cannot run DynamoDB Local on 127.0.0.1 only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := jvm{java, dir, classes}
			port := takenPort(t)
			cmd := j.command(Options{}, port)
			if tc.field != "" {
				stubs := compileStubs(t, java, dir, tc.field)
				// The stubs come first on the class path, so they hide the jar's classes.
				for i, a := range cmd.Args {
					if a == "-cp" {
						cmd.Args[i+1] = stubs + string(os.PathListSeparator) + cmd.Args[i+1]
					}
				}
			}
			out, err := runWithin(cmd, time.Minute)
			if err == nil {
				t.Fatalf("the launcher exited 0; output:\n%s", out)
			}
			if !strings.Contains(out, "LoopbackLauncher: ") || !strings.Contains(out, tc.want) {
				t.Errorf("output %q, want it to say %q", out, tc.want)
			}
		})
	}
}

// takenPort listens on a port of 127.0.0.1 until t ends: a server that should fail before it
// binds fails there too, and one that binds cannot take it.
func takenPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.Addr().(*net.TCPAddr).Port
}

// compileStubs compiles stubProxyServer (with field) and stubRunner into a directory.
func compileStubs(t *testing.T, java, jarDir, field string) string {
	t.Helper()
	src, out := t.TempDir(), t.TempDir()
	files := map[string]string{
		"DynamoDBProxyServer.java": strings.Replace(stubProxyServer, "FIELD", field, 1),
		"ServerRunner.java":        stubRunner,
	}
	args := []string{"-m", "jdk.compiler/com.sun.tools.javac.Main", "-proc:none", "-d", out}
	for name, text := range files {
		p := filepath.Join(src, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	if b, err := exec.Command(java, args...).CombinedOutput(); err != nil {
		t.Fatalf("compile the stubs: %v\n%s", err, b)
	}
	return out
}

// runWithin runs cmd and returns its output, killing it after limit: a launcher that serves
// instead of failing would otherwise run forever.
func runWithin(cmd *exec.Cmd, limit time.Duration) (string, error) {
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	timer := time.AfterFunc(limit, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	err := cmd.Wait()
	return out.String(), err
}
