package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// walkthrough is the commands of README.md's blocks fenced as "```sh try", in order.
func walkthrough(t *testing.T, readme string) []string {
	t.Helper()
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	var cur *strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```sh try":
			cur = &strings.Builder{}
		case cur != nil && strings.TrimSpace(line) == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line + "\n")
		}
	}
	if cur != nil {
		t.Fatal("README.md: a sh try block is not closed")
	}
	return blocks
}

// TestReadmeWalkthrough runs README.md's "Try it yourself" commands as written, in one bash at the
// repository's root, in a network namespace of the test's own (its loopback only, so the fixed
// ports the walkthrough uses are free whatever else runs on this machine). Each block must end
// well; the whole must show what the text says it shows.
func TestReadmeWalkthrough(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	blocks := walkthrough(t, filepath.Join(root, "README.md"))
	if len(blocks) < 8 {
		t.Fatalf("README.md has %d sh try blocks, want the walkthrough's 8", len(blocks))
	}
	for _, tool := range []string{"jq", "curl", "aws", "unshare", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not on PATH: the walkthrough test needs it (make deps installs jq, curl and the AWS CLI; unshare and ip come with util-linux and iproute2)", tool)
		}
	}
	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	for i, b := range blocks {
		// A marker after each block, so a failure names the block that did not end well.
		script.WriteString(b)
		script.WriteString("echo '--- walkthrough block " + string(rune('1'+i)) + " done'\n")
	}
	path := filepath.Join(t.TempDir(), "walkthrough.sh")
	if err := os.WriteFile(path, []byte(script.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	// A guard against a hang, not a bound on speed: building and starting local mode is most of it.
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "--net", "--", "bash", "-c", `ip link set lo up && exec bash "$0"`, path)
	cmd.Dir = root
	cmd.Env = walkthroughEnv(debianCLI(t))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	got := out.String()
	if err != nil {
		t.Fatalf("the walkthrough failed (%v):\n%s", err, got)
	}
	for i := range blocks {
		if !strings.Contains(got, "--- walkthrough block "+string(rune('1'+i))+" done") {
			t.Errorf("block %d did not finish", i+1)
		}
	}
	for _, want := range []string{
		`"status": "succeeded"`, // the calls of step 4
		`"status": "awaiting_input"`,
		`"answer": "yes"`, `"answer": "from the AWS CLI"`, `"answer": "from the Go SDK"`, // the three resumes
		"TaskSubmitted", "ExecutionSucceeded", // the history
		"I am the scripted model", // the chat
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the walkthrough's output lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, `"status": "succeeded"`) < 6 {
		t.Errorf("want the three calls and the three answered function calls succeeded:\n%s", got)
	}
}

// walkthroughEnv is this process's environment without anything that would point the walkthrough
// elsewhere than where it says (endpoints, a model, allowed addresses).
// The AWS CLI comes first on its PATH from cliDir.
func walkthroughEnv(cliDir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "AWS_") || strings.HasPrefix(k, "SINEW_") {
			continue
		}
		if k == "PATH" {
			kv = "PATH=" + cliDir + string(os.PathListSeparator) + v
		}
		env = append(env, kv)
	}
	return env
}

// debianCLI is a directory holding only the AWS CLI make deps installs (Debian's awscli), so the
// walkthrough runs with the CLI a reader gets from make deps, not whichever is first on PATH.
func debianCLI(t *testing.T) string {
	t.Helper()
	bin := debianCLIPath
	if out, err := exec.Command(bin, "--version").CombinedOutput(); err != nil {
		t.Fatalf("%s --version: %v %s (make deps installs Debian's awscli)", bin, err, out)
	}
	dir := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(dir, "aws")); err != nil {
		t.Fatal(err)
	}
	return dir
}
