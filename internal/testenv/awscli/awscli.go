// Package awscli finds the AWS CLI a test drives and says what its version needs. Tests run
// whichever `aws` is first on PATH, and the two major versions differ where sinew's tests look:
// the CLI v2 reads blob parameters (a Lambda payload) as base64 unless told otherwise and prints
// timestamps as ISO 8601 where v1 prints them as they travel, and AWS_ENDPOINT_URL is honoured
// only from 1.29 and 2.13 on (Debian 12's awscli is 2.9).
package awscli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
)

// CLI is an installed AWS CLI.
type CLI struct {
	Path    string // as found on PATH
	Version string // e.g. "2.9.19"
	major   int
	minor   int
}

var versionRE = regexp.MustCompile(`^aws-cli/(\d+)\.(\d+)\.(\d+)`)

// found keeps each path's CLI: `aws --version` starts Python, and a test may run the CLI many times.
var found sync.Map // path → CLI

// Find is the `aws` first on PATH; a missing or unreadable CLI fails the test, saying how to
// install one.
func Find(t testing.TB) CLI {
	t.Helper()
	path, err := exec.LookPath("aws")
	if err != nil {
		t.Fatal("the AWS CLI (aws) is not on PATH: make deps installs it (apt-get install awscli)")
	}
	if c, ok := found.Load(path); ok {
		return c.(CLI)
	}
	out, err := exec.Command(path, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", path, err, out)
	}
	c, err := parse(path, string(out))
	if err != nil {
		t.Fatal(err)
	}
	found.Store(path, c)
	return c
}

// parse reads `aws --version`'s line, e.g. "aws-cli/2.9.19 Python/3.11.2 Linux/6.1 ...".
func parse(path, line string) (CLI, error) {
	m := versionRE.FindStringSubmatch(line)
	if m == nil {
		return CLI{}, fmt.Errorf("%s --version printed %q, not aws-cli/<version>", path, line)
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return CLI{Path: path, Version: m[1] + "." + m[2] + "." + m[3], major: major, minor: minor}, nil
}

// V2 reports whether this is the CLI v2.
func (c CLI) V2() bool { return c.major >= 2 }

// HonoursEndpointURL reports whether the CLI reads AWS_ENDPOINT_URL (1.29 and 2.13 on); an older
// one needs --endpoint-url on each command.
func (c CLI) HonoursEndpointURL() bool {
	switch c.major {
	case 1:
		return c.minor >= 29
	case 2:
		return c.minor >= 13
	}
	return c.major > 2
}

// RawBlobArgs are the arguments that make a blob parameter (`lambda invoke --payload`) go as the
// text given: v1 does so already, v2 needs to be told.
func (c CLI) RawBlobArgs() []string {
	if c.V2() {
		return []string{"--cli-binary-format", "raw-in-base64-out"}
	}
	return nil
}

// V1ShapesEnv is the environment entry that makes the CLI read and print what v1 does by default:
// a blob parameter's text sent as its bytes, and timestamps printed as they travel (epoch seconds on
// the JSON protocols). For v2, a config file of the test's own (cli_binary_format =
// raw-in-base64-out, cli_timestamp_format = wire); for v1, none. Put it after any other
// AWS_CONFIG_FILE.
func (c CLI) V1ShapesEnv(t testing.TB) string {
	t.Helper()
	if !c.V2() {
		return "AWS_CONFIG_FILE=" + os.DevNull
	}
	path := filepath.Join(t.TempDir(), "aws-config")
	config := "[default]\ncli_binary_format = raw-in-base64-out\ncli_timestamp_format = wire\n"
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return "AWS_CONFIG_FILE=" + path
}
