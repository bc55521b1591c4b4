package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"sinew/internal/deploy"
)

var buildFlags = []string{"build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w"}

func buildBootstrap(ctx context.Context, arch, pkg, out string) error {
	argv := append([]string{"go"}, buildFlags...)
	argv = append(argv, "-o", out, pkg)
	_, err := runCmd(ctx, argv, []string{"GOOS=linux", "GOARCH=" + arch, "CGO_ENABLED=0"})
	return err
}

func partLambda(ctx context.Context, o options, r *report) error {
	tmp, err := os.MkdirTemp("", "sinewbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	fns, err := filepath.Glob("functions/*")
	if err != nil || len(fns) == 0 {
		return fmt.Errorf("no functions/ found (run from the module root): %v", err)
	}
	// Sizes: arm64, as deployed (scripts/build.sh's flags), beside hello-world built the same way.
	r.printf("lambda", "### bootstrap size (linux/arm64, as deployed: `infra/scripts/build.sh arm64` flags)\n\n| function | bytes | MiB |\n|---|---|---|\n")
	pkgs := map[string]string{}
	for _, f := range fns {
		pkgs[filepath.Base(f)] = "./" + f
	}
	if o.smoke {
		// A check that the part runs: one sinew function beside the baseline, not all eight builds per arch.
		pkgs = map[string]string{"prepare": "./functions/prepare"}
	}
	pkgs["hello-world (baseline)"] = "./infra/bench/hello"
	names := make([]string, 0, len(pkgs))
	for n := range pkgs {
		names = append(names, n)
	}
	slices.Sort(names)
	var largest, plainLargest, modelLargest int64 // plain: the functions that link no model client
	broken := map[string]bool{}
	for _, n := range names {
		out := filepath.Join(tmp, "arm64", n, "bootstrap")
		if err := buildBootstrap(ctx, "arm64", pkgs[n], out); err != nil {
			// Another engineer's function may be mid-edit: say so and measure the rest.
			broken[n] = true
			r.printf("lambda", "| %s | does not build in this run: %s | – |\n", n, oneLine(err))
			continue
		}
		st, err := os.Stat(out)
		if err != nil {
			return err
		}
		largest = max(largest, st.Size())
		if n == "chat" || n == "model" {
			modelLargest = max(modelLargest, st.Size())
		} else if n != "hello-world (baseline)" {
			plainLargest = max(plainLargest, st.Size())
		}
		r.printf("lambda", "| %s | %d | %.1f |\n", n, st.Size(), float64(st.Size())/(1<<20))
	}
	r.headline("Largest arm64 bootstrap: %.1f MiB", float64(largest)/(1<<20))
	mib := func(n int64) float64 { return float64(n) / (1 << 20) }
	r.goal("largest arm64 bootstrap of a function that links no model client", "≤ 16 MiB", mib(plainLargest) <= 16, "%.1f MiB", mib(plainLargest))
	r.goal("largest arm64 bootstrap of chat and model", "≤ 26 MiB", mib(modelLargest) <= 26, "%.1f MiB", mib(modelLargest))
	r.printf("lambda", "\nCommand: `GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o bootstrap ./functions/<name>` (what `infra/scripts/build.sh arm64` runs).\n\n")
	return lambdaColdStarts(ctx, o, r, tmp, names, pkgs, broken)
}

// lambdaColdStarts measures each function that built (not broken) under the RIE, host architecture.
func lambdaColdStarts(ctx context.Context, o options, r *report, tmp string, names []string, pkgs map[string]string, broken map[string]bool) error {
	rie := filepath.Join(tmp, "aws-lambda-rie")
	if _, err := runCmd(ctx, []string{"go", "build", "-o", rie, "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie"}, nil); err != nil {
		return err
	}
	r.printf("lambda", "### Cold start under the Runtime Interface Emulator (linux/%s builds, %d per function)\n\n", runtime.GOARCH, o.colds)
	r.printf("lambda", "Process start (the emulator with the bootstrap) to the first response to an invoke of `{}`, polled every 0.5 ms, "+
		"the functions taken in turn in each round; "+
		"the functions get placeholder AWS settings and endpoints on a closed loopback port, so their init builds its clients "+
		"without reaching anything, and none of this machine's own AWS_* settings (an AWS_CA_BUNDLE would cost each start a parse of the bundle, which Lambda does not set); "+
		"each sinew function runs with the Go runtime's GOGC and GOMEMLIMIT the stack gives it (internal/deploy's RuntimeEnv), hello-world with Go's defaults. Median and min–max in ms; the ratio is to hello-world's median.\n\n")
	r.printf("lambda", "| function | median ms | spread | ÷ hello-world | first answer |\n|---|---|---|---|---|\n")
	cold := map[string]samples{}
	answer := map[string]string{}
	order := append([]string{"hello-world (baseline)"}, slices.DeleteFunc(slices.Clone(names), func(s string) bool { return s == "hello-world (baseline)" || broken[s] })...)
	for _, n := range order {
		if err := buildBootstrap(ctx, runtime.GOARCH, pkgs[n], filepath.Join(tmp, runtime.GOARCH, n, "bootstrap")); err != nil {
			return err
		}
	}
	// Round-robin: each round starts every function once, so a change in the shared machine's load
	// during the run weighs on every function alike, hello-world's baseline included.
	for range o.colds {
		for _, n := range order {
			d, ans, err := coldStart(ctx, rie, filepath.Join(tmp, runtime.GOARCH, n, "bootstrap"), n)
			if err != nil {
				return fmt.Errorf("cold start %s: %w", n, err)
			}
			cold[n] = append(cold[n], float64(d)/1e6)
			answer[n] = ans
		}
	}
	base := cold["hello-world (baseline)"].median()
	for _, n := range order {
		m, sp := fmtStat(cold[n], 1, 1)
		r.printf("lambda", "| %s | %s | %s | %.2f× | %s |\n", n, m, sp, cold[n].median()/base, answer[n])
	}
	var worst string
	for _, n := range order[1:] { // the slowest sinew function: hello-world, order[0], is the baseline
		if worst == "" || cold[n].median() > cold[worst].median() {
			worst = n
		}
	}
	r.headline("Cold start under the RIE: hello-world %.1f ms, slowest sinew function (%s) %.1f ms (median of %d)", base, worst, cold[worst].median(), o.colds)
	ratio := cold[worst].median() / base
	r.goal("slowest function's cold start under the RIE ÷ hello-world's", "≤ 1.5×", ratio <= 1.5, "%.2f× (%s)", ratio, worst)
	r.printf("lambda", "\nThe emulator's own start is inside every figure, hello-world's too; `go run ./infra/bench/cmd/sinewbench -only lambda -out /tmp/lambda.md` runs this part alone.\n")
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// coldStart starts the emulator with bin and times until the first HTTP answer to an invoke.
func coldStart(ctx context.Context, rie, bin, name string) (time.Duration, string, error) {
	invokePort, err := freePort()
	if err != nil {
		return 0, "", err
	}
	apiPort, err := freePort()
	if err != nil {
		return 0, "", err
	}
	closed, err := freePort() // nothing listens here: endpoints that refuse at once
	if err != nil {
		return 0, "", err
	}
	dead := fmt.Sprintf("http://127.0.0.1:%d", closed)
	cmd := exec.CommandContext(ctx, rie, "--runtime-interface-emulator-address", fmt.Sprintf("127.0.0.1:%d", invokePort),
		"--runtime-api-address", fmt.Sprintf("127.0.0.1:%d", apiPort), "--log-level", "error", bin)
	cmd.Dir = filepath.Dir(bin)
	cmd.Env = append(lambdaHostEnv(), "AWS_LAMBDA_FUNCTION_NAME="+name, "AWS_LAMBDA_FUNCTION_TIMEOUT=10", "AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=bench", "AWS_SECRET_ACCESS_KEY=bench", "SINEW_TABLE=sinew-bench", "SINEW_SECRETS_KEY=alias/sinew-bench",
		"AWS_ENDPOINT_URL="+dead, "AWS_ENDPOINT_URL_DYNAMODB="+dead, "AWS_ENDPOINT_URL_SFN="+dead, "AWS_ENDPOINT_URL_KMS="+dead,
		"AWS_ENDPOINT_URL_LAMBDA="+dead, "AWS_ENDPOINT_URL_EVENTBRIDGE="+dead)
	if f, ok := deploy.FunctionByName(name); ok {
		// The Go runtime's settings the stack deploys it with; hello-world keeps Go's defaults.
		cmd.Env = append(cmd.Env, f.RuntimeEnvList()...)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, "", err
	}
	defer func() {
		_ = cmd.Process.Kill() // the emulator we started; it has no graceful stop we need
		_ = cmd.Wait()
	}()
	url := fmt.Sprintf("http://127.0.0.1:%d/2015-03-31/functions/function/invocations", invokePort)
	client := &http.Client{Timeout: 20 * time.Second}
	deadline := t0.Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := client.Post(url, "application/json", bytes.NewReader([]byte(`{}`)))
		if err != nil {
			time.Sleep(500 * time.Microsecond)
			continue
		}
		d := time.Since(t0)
		var body bytes.Buffer
		_, _ = body.ReadFrom(resp.Body)
		resp.Body.Close()
		return d, summarize(resp.StatusCode, body.String()), nil
	}
	return 0, "", fmt.Errorf("no answer in 30 s; emulator stderr: %s", trim(stderr.String(), 500))
}

// lambdaHostEnv is this process's environment less its AWS_* settings, which a deployed function
// never has: an AWS_CA_BUNDLE (a sandbox may set one for its proxy) makes every SDK client parse
// the whole bundle at the function's start, 10–15 ms that Lambda never spends.
func lambdaHostEnv() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "AWS_") })
}

// summarize says what the first answer was: a handler's answer (an error for the empty input is
// expected) or an init failure.
func summarize(status int, body string) string {
	b := trim(body, 80)
	for _, c := range []string{"|", "\n"} {
		b = string(bytes.ReplaceAll([]byte(b), []byte(c), []byte(" ")))
	}
	return fmt.Sprintf("HTTP %d `%s`", status, b)
}
