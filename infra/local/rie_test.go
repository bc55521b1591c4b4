package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"sinew/internal/deploy"
)

// rieBinary finds the emulator, installing the pinned version through the Go module proxy when it
// is not on PATH (a missing emulator fails the test: a skip would hide that nothing ran).
func rieBinary(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("aws-lambda-rie"); err == nil {
		return p
	}
	gobin := filepath.Join(os.TempDir(), "sinew-rie-bin")
	bin := filepath.Join(gobin, "aws-lambda-rie")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	cmd := exec.Command("go", "install", RIEModule)
	cmd.Env = append(os.Environ(), "GOBIN="+gobin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("installing the Runtime Interface Emulator: %v\n%s", err, out)
	}
	return bin
}

// With --rie, a function runs as its real bootstrap under the emulator, and its errors keep their
// names through the Lambda Invoke API.
func TestRIE(t *testing.T) {
	bin := rieBinary(t)
	dir := t.TempDir()
	p := startLocal(t, dir, "--in-memory", "--rie", "--rie-bin", bin)
	if !strings.Contains(p.Stderr.String(), "function=prepare") {
		t.Fatalf("prepare was not started under the emulator:\n%s", p.Stderr)
	}
	lc := lambda.New(lambda.Options{Region: "us-east-1", BaseEndpoint: aws.String(p.Endpoints["lambda"]),
		Credentials: p.Credentials()})
	out, err := lc.Invoke(context.Background(), &lambda.InvokeInput{FunctionName: aws.String("prepare"), Payload: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(out.FunctionError) != "Unhandled" || !strings.Contains(string(out.Payload), `"errorType":"Sinew.InvalidInput"`) {
		t.Errorf("prepare({}) under the emulator = %s %s", aws.ToString(out.FunctionError), out.Payload)
	}
	p.stop(t)
}

// An emulator that is slow to listen (as on a busy machine) is waited for as long as it lives; one
// that exits at start is an error at once.
func TestRIEReadinessWaitsForASlowEmulator(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 is not on PATH: this test's stand-in emulator needs it")
	}
	dir := t.TempDir()
	slow := filepath.Join(dir, "slow-rie")
	// A stand-in for the emulator: it listens on its --runtime-interface-emulator-address only
	// after 8 s, longer than the fixed number of polls that were once the limit allowed.
	script := "#!/bin/sh\nsleep 8\nexec python3 -c 'import socket,sys,time; h,p=sys.argv[1].rsplit(\":\",1); s=socket.socket(); s.bind((h,int(p))); s.listen(); time.sleep(600)' \"$2\"\n"
	if err := os.WriteFile(slow, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := runRIE(context.Background(), slow, "/bin/true", deploy.Function{Name: "slow", Timeout: time.Second})
	if err != nil {
		t.Fatalf("a slow emulator: %v", err)
	}
	f.stop()

	dead := filepath.Join(dir, "dead-rie")
	if err := os.WriteFile(dead, []byte("#!/bin/sh\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := runRIE(context.Background(), dead, "/bin/true", deploy.Function{Name: "dead", Timeout: time.Second}); err == nil || !strings.Contains(err.Error(), "exited at start") {
		t.Errorf("an emulator that exits: %v", err)
	}
}
