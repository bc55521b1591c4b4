package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"sinew/internal/config"
	"sinew/internal/deploy"
)

// lambdaTool is a developer's function --lambda-tool registers: its name and its bootstrap.
type lambdaTool struct{ name, boot string }

var lambdaToolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// lambdaToolFlag parses one --lambda-tool NAME=BOOTSTRAP.
func lambdaToolFlag(dst *[]lambdaTool) func(string) error {
	return func(v string) error {
		name, boot, ok := strings.Cut(v, "=")
		if !ok || !lambdaToolName.MatchString(name) || boot == "" {
			return fmt.Errorf("--lambda-tool %q: want NAME=BOOTSTRAP, NAME a Lambda function name ([a-zA-Z0-9_-], at most 64) and BOOTSTRAP the path of its provided.al2023 bootstrap built for this machine", v)
		}
		abs, err := filepath.Abs(boot)
		if err != nil {
			return err
		}
		if st, err := os.Stat(abs); err != nil || st.IsDir() {
			return fmt.Errorf("--lambda-tool %s: %s is not a file", name, abs)
		}
		*dst = append(*dst, lambdaTool{name, abs})
		return nil
	}
}

// lambdaToolTimeout bounds each invocation of a developer's function, as a deployed function's
// own timeout would.
const lambdaToolTimeout = 60 * time.Second

// allowLambdaTools adds the registered functions to SINEW_AWS_LAMBDA_FUNCTIONS, as naming them at
// deploy time grants them: registering one is the local form of that choice. It runs before any
// function starts, so the emulated bootstraps (--rie) inherit it too.
func allowLambdaTools(tools []lambdaTool) error {
	if len(tools) == 0 {
		return nil
	}
	names := []string{}
	if cur := os.Getenv(config.EnvLambdaTools); cur != "" {
		names = append(names, cur)
	}
	for _, t := range tools {
		names = append(names, t.name)
	}
	return os.Setenv(config.EnvLambdaTools, strings.Join(names, ","))
}

// emulatorBinary is the emulator: --rie-bin, else aws-lambda-rie on PATH.
func emulatorBinary(o options) (string, error) {
	if o.rieBin != "" {
		return o.rieBin, nil
	}
	bin, err := exec.LookPath("aws-lambda-rie")
	if err != nil {
		return "", fmt.Errorf("aws-lambda-rie is not on PATH (install it: GOBIN=<dir> go install %s, or give --rie-bin)", RIEModule)
	}
	return bin, nil
}

// registerLambdaTools runs each developer function's bootstrap under its own emulator, as --rie
// runs sinew's, and registers it with the Lambda API; stop ends them.
func registerLambdaTools(ctx context.Context, o options, fns *functions, log *slog.Logger) (stop func(), err error) {
	stop = func() {}
	if len(o.lambdaTools) == 0 {
		return stop, nil
	}
	bin, err := emulatorBinary(o)
	if err != nil {
		return stop, fmt.Errorf("--lambda-tool: %w", err)
	}
	var started []*rieFunction
	stop = func() { stopRIE(started) }
	for _, t := range o.lambdaTools {
		if _, ok := deploy.FunctionByName(t.name); ok {
			stop()
			return func() {}, fmt.Errorf("--lambda-tool %s: that is one of sinew's own functions", t.name)
		}
		f, err := runRIE(ctx, bin, t.boot, deploy.Function{Name: t.name, Timeout: lambdaToolTimeout, MemoryMB: 512})
		if err != nil {
			stop()
			return func() {}, fmt.Errorf("--lambda-tool %s: %w", t.name, err)
		}
		started = append(started, f)
		if err := fns.register(t.name, f); err != nil {
			stop()
			return func() {}, fmt.Errorf("--lambda-tool %s: %w", t.name, err)
		}
		log.Info("a developer's function runs under the Runtime Interface Emulator for aws_lambda tools", "function", t.name, "emulator", f.url)
	}
	return stop, nil
}
