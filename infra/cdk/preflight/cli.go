package preflight

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// CLI reads the account with the AWS CLI, as the deploy will reach it: the shell's credentials,
// the profile the deploy names and its Region.
type CLI struct {
	Bin         string   // the CLI; "aws" when empty
	Profile     string   // --profile, when the deploy names one
	Region      string   // --region, when known
	EndpointURL string   // --endpoint-url: another endpoint (tests use a loopback stand-in)
	Env         []string // the command's environment; nil is this process's
}

// cliTimeout bounds one CLI call, so a machine without a route to AWS is told so soon.
const cliTimeout = 30 * time.Second

// command is the CLI with args, bounded by cliTimeout; cancel releases it.
func (c CLI) command(ctx context.Context, args ...string) (cmd *exec.Cmd, cancel context.CancelFunc) {
	bin := c.Bin
	if bin == "" {
		bin = "aws"
	}
	ctx, cancel = context.WithTimeout(ctx, cliTimeout)
	cmd = exec.CommandContext(ctx, bin, args...)
	env := c.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(env, "AWS_PAGER=") // CLI v2 would otherwise page JSON into less
	return cmd, cancel
}

func (c CLI) run(ctx context.Context, args ...string) ([]byte, error) {
	args = append(args, "--output", "json", "--cli-connect-timeout", "5", "--cli-read-timeout", "10")
	for flag, v := range map[string]string{"--profile": c.Profile, "--region": c.Region, "--endpoint-url": c.EndpointURL} {
		if v != "" {
			args = append(args, flag, v)
		}
	}
	cmd, cancel := c.command(ctx, args...)
	defer cancel()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("aws %s: %s", strings.Join(args[:2], " "), msg)
	}
	return out, nil
}

// Concurrency runs `aws lambda get-account-settings`.
func (c CLI) Concurrency(ctx context.Context) (limit, unreserved int, err error) {
	out, err := c.run(ctx, "lambda", "get-account-settings")
	if err != nil {
		return 0, 0, err
	}
	var s struct {
		AccountLimit struct {
			ConcurrentExecutions, UnreservedConcurrentExecutions *int
		}
	}
	if err := json.Unmarshal(out, &s); err != nil || s.AccountLimit.ConcurrentExecutions == nil || s.AccountLimit.UnreservedConcurrentExecutions == nil {
		return 0, 0, fmt.Errorf("aws lambda get-account-settings: no AccountLimit.ConcurrentExecutions in %q", out)
	}
	return *s.AccountLimit.ConcurrentExecutions, *s.AccountLimit.UnreservedConcurrentExecutions, nil
}

// Reserved runs `aws lambda get-function-concurrency`; a function that does not exist yet reserves
// nothing.
func (c CLI) Reserved(ctx context.Context, function string) (int, error) {
	out, err := c.run(ctx, "lambda", "get-function-concurrency", "--function-name", function)
	if err != nil {
		if strings.Contains(err.Error(), "ResourceNotFoundException") {
			return 0, nil
		}
		return 0, err
	}
	var s struct{ ReservedConcurrentExecutions int }
	if len(bytes.TrimSpace(out)) == 0 {
		return 0, nil // none reserved: Lambda answers {}, which the CLI prints as nothing
	}
	if err := json.Unmarshal(out, &s); err != nil {
		return 0, fmt.Errorf("aws lambda get-function-concurrency: %q: %v", out, err)
	}
	return s.ReservedConcurrentExecutions, nil
}

// ConfiguredRegion is the Region of the CLI's profile (`aws configure get region`), "" if none.
func (c CLI) ConfiguredRegion(ctx context.Context) string {
	args := []string{"configure", "get", "region"}
	if c.Profile != "" {
		args = append(args, "--profile", c.Profile)
	}
	cmd, cancel := c.command(ctx, args...)
	defer cancel()
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// Region is the Region the deploy goes to, found as the CDK CLI finds it: AWS_REGION, then
// AWS_DEFAULT_REGION, then the profile's.
func Region(ctx context.Context, getenv func(string) string, c CLI) string {
	for _, k := range []string{"AWS_REGION", "AWS_DEFAULT_REGION"} {
		if v := getenv(k); v != "" {
			return v
		}
	}
	return c.ConfiguredRegion(ctx)
}

// ParseArgs picks the context values (-c key=value, --context key=value, --context=key=value) and
// the profile (--profile name) out of the arguments given to cdk deploy.
func ParseArgs(args []string) (ctx map[string]string, profile string) {
	ctx = map[string]string{}
	for i := 0; i < len(args); i++ {
		flag, val, inline := strings.Cut(args[i], "=")
		if flag != "-c" && flag != "--context" && flag != "--profile" {
			continue
		}
		if !inline {
			if i+1 == len(args) {
				break
			}
			i++
			val = args[i]
		}
		if flag == "--profile" {
			profile = val
		} else if k, v, ok := strings.Cut(val, "="); ok {
			ctx[k] = v
		}
	}
	return ctx, profile
}

// LoadContext is the context the CDK app will read: cdk.json's context, then cdk.context.json's,
// then the command line's, each over the one before.
func LoadContext(dir string, cli map[string]string) (map[string]any, error) {
	out := map[string]any{}
	var project struct {
		Context map[string]any `json:"context"`
	}
	if err := readJSON(filepath.Join(dir, "cdk.json"), &project); err != nil {
		return nil, err
	}
	var cached map[string]any
	if err := readJSON(filepath.Join(dir, "cdk.context.json"), &cached); err != nil {
		return nil, err
	}
	for _, m := range []map[string]any{project.Context, cached} {
		for k, v := range m {
			out[k] = v
		}
	}
	for k, v := range cli {
		out[k] = v
	}
	return out, nil
}

// readJSON decodes a file into v; a file that does not exist leaves v as it is.
func readJSON(path string, v any) error {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}
