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
	"time"
)

// buildLocal builds local mode, so that its process is the server itself (go run would put a
// parent between the demo and the server). The binary is kept in <root>/.local/demo (make clean
// removes it): go build skips the link when that file is already up to date, which saves most of
// the step on the next run. The run uses a hard link to it, which another run's build cannot change.
func (d *demo) buildLocal(ctx context.Context) (string, error) {
	binDir := filepath.Join(d.root, ".local", "demo")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return "", err
	}
	kept := filepath.Join(binDir, "sinew-local")
	before, _ := os.Stat(kept)
	build := exec.CommandContext(ctx, "go", "build", "-o", kept, "./infra/local")
	build.Dir = d.root
	var out bytes.Buffer
	build.Stdout, build.Stderr = &out, &out
	stop := d.progress("go build ./infra/local (compiling; the first build on a machine takes longest)", nil)
	err := build.Run()
	stop()
	if err != nil {
		return "", fmt.Errorf("go build ./infra/local: %v\n%s", err, out.String())
	}
	d.bin = filepath.Join(d.dir, "sinew-local")
	if err := os.Link(kept, d.bin); err != nil {
		d.bin = kept // another file system: run the kept binary itself
	}
	after, err := os.Stat(kept)
	if err != nil {
		return "", err
	}
	// A relink replaces the file (a new inode); an up-to-date one is only touched.
	if before != nil && os.SameFile(before, after) {
		return "local mode was up to date: " + kept, nil
	}
	return "built local mode: " + kept, nil
}

// startLocal starts local mode as a subprocess, configured for the demo: the scripted model, the
// allowlist entries for the demo's two loopback services, and the CA of its SMTP server. It waits
// for endpoints.json and issues a token for the demo's developer.
func (d *demo) startLocal(ctx context.Context) (string, error) {
	script := filepath.Join(d.dir, "script.json")
	if err := os.WriteFile(script, modelScript, 0o600); err != nil {
		return "", err
	}
	d.localLog = filepath.Join(d.dir, "local.log")
	f, err := os.Create(d.localLog)
	if err != nil {
		return "", err
	}
	defer f.Close() // the child holds its own descriptor
	dataDir := filepath.Join(d.dir, "local")
	// A free port for the one AWS endpoint: the default may be taken by the reader's own local mode.
	d.local = exec.Command(d.bin, "--dir", dataDir, "--root", d.root, "--aws-port", "0")
	d.local.Env = append(childEnv(),
		// The guarded dialer refuses loopback unless the operator allows it: the demo allows
		// exactly its weather API and its SMTP server.
		"SINEW_APICALL_ALLOW="+d.svcAddr+","+d.mail.Addr.String(),
		"SINEW_EMAIL_CA_FILE="+d.mailCA,
		"SINEW_MODEL=scripted:"+script,
	)
	d.local.Stdout, d.local.Stderr = f, f
	d.local.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.local.Start(); err != nil {
		return "", fmt.Errorf("starting local mode: %w", err)
	}
	d.exited = make(chan error, 1)
	go func() { d.exited <- d.local.Wait() }()
	d.detail("its log: %s", d.localLog)

	stop := d.progress("waiting for local mode (DynamoDB Local starts a JVM)", func() string { return lastLine(d.localLog) })
	defer stop()
	epFile := filepath.Join(dataDir, "endpoints.json")
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if b, err := os.ReadFile(epFile); err == nil && json.Unmarshal(b, &d.endpoints) == nil && d.endpoints["http"] != "" {
			break
		}
		select {
		case err := <-d.exited:
			d.local = nil
			return "", fmt.Errorf("local mode exited before it was ready (%v); the end of its log:\n%s", err, tail(d.localLog, 20))
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("local mode was not ready after 3 minutes; see %s:\n%s", d.localLog, tail(d.localLog, 20))
		}
	}
	stop()
	d.detail("HTTP API       %s", d.endpoints["http"])
	d.detail("Step Functions %s", d.endpoints["stepfunctions"])
	d.detail("Lambda         %s", d.endpoints["lambda"])
	d.detail("DynamoDB       %s (on the AWS endpoint)", d.endpoints["aws"])
	out, err := exec.CommandContext(ctx, d.bin, "env", "--dir", dataDir).Output()
	if err != nil {
		return "", fmt.Errorf("reading local mode's AWS exports (local env --dir %s): %w", dataDir, err)
	}
	d.awsEnv = exports(string(out))
	// Local mode's AWS secret key is searched for with the setup secrets: it too must never
	// reach a log, a history, an item or an answer.
	d.secrets["local mode's AWS secret access key"] = d.awsEnv["AWS_SECRET_ACCESS_KEY"]
	d.detail("AWS credentials: local mode's own, made for %s (local env prints the exports)", dataDir)
	out, err = exec.CommandContext(ctx, d.bin, "token", "--dir", dataDir, "demo-developer").Output()
	if err != nil {
		return "", fmt.Errorf("issuing a local token (local token --dir %s demo-developer): %w", dataDir, err)
	}
	d.token = strings.TrimSpace(string(out))
	return "local mode is up, with the scripted model of infra/demo/script.json; a JWT for developer demo-developer", nil
}

// exports reads the "export K=V ..." lines of `local env`.
func exports(text string) map[string]string {
	env := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(line, "export ")
		if !ok {
			continue
		}
		for _, kv := range strings.Fields(rest) {
			if k, v, ok := strings.Cut(kv, "="); ok {
				env[k] = v
			}
		}
	}
	return env
}

// environ is the demo's environment with local mode's AWS exports in place of the shell's.
func (d *demo) environ() []string {
	env := []string{"AWS_SESSION_TOKEN="}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); d.awsEnv[k] == "" {
			env = append(env, kv)
		}
	}
	for k, v := range d.awsEnv {
		env = append(env, k+"="+v)
	}
	return env
}

// lastLine is the last line of a log, cut short, for progress lines.
func lastLine(path string) string {
	s := tail(path, 1)
	if len(s) > 100 {
		s = s[:97] + "..."
	}
	return s
}

// childEnv is the demo's environment without what would make local mode share state: the tests'
// shared DynamoDB endpoint (make test sets it), so the demo's data stays in its own directory.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SINEW_TEST_DYNAMODB_ENDPOINT=") {
			env = append(env, kv)
		}
	}
	return env
}
