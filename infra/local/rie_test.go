package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
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
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")})
	out, err := lc.Invoke(context.Background(), &lambda.InvokeInput{FunctionName: aws.String("prepare"), Payload: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(out.FunctionError) != "Unhandled" || !strings.Contains(string(out.Payload), `"errorType":"Sinew.InvalidInput"`) {
		t.Errorf("prepare({}) under the emulator = %s %s", aws.ToString(out.FunctionError), out.Payload)
	}
	p.stop(t)
}
