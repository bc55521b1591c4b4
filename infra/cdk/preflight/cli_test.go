package preflight

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sinew/infra/cdk/stack"
)

// lambdaStandIn answers the two Lambda operations the preflight calls as Lambda documents them
// (https://docs.aws.amazon.com/lambda/latest/api/API_GetAccountSettings.html,
// https://docs.aws.amazon.com/lambda/latest/api/API_GetFunctionConcurrency.html): an account
// with limit executions, unreserved of them free, and the named functions' reservations; any other
// function does not exist.
func lambdaStandIn(t *testing.T, limit, unreserved int, reserved map[string]int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ") {
			t.Errorf("%s %s: not signed", r.Method, r.URL.Path)
		}
		w.Header().Set("Content-Type", "application/json")
		fn, isFn := strings.CutPrefix(r.URL.Path, "/2019-09-30/functions/")
		switch {
		case r.Method == http.MethodGet && strings.TrimSuffix(r.URL.Path, "/") == "/2016-08-19/account-settings":
			_ = json.NewEncoder(w).Encode(map[string]any{"AccountLimit": map[string]any{"TotalCodeSize": 80530636800,
				"ConcurrentExecutions": limit, "UnreservedConcurrentExecutions": unreserved}, "AccountUsage": map[string]any{"FunctionCount": len(reserved)}})
		case r.Method == http.MethodGet && isFn && strings.HasSuffix(fn, "/concurrency"):
			name := strings.TrimSuffix(fn, "/concurrency")
			n, ok := reserved[name]
			switch {
			case !ok:
				w.Header().Set("X-Amzn-Errortype", "ResourceNotFoundException")
				w.WriteHeader(http.StatusNotFound)
				_ = json.NewEncoder(w).Encode(map[string]string{"Type": "User", "message": "Function not found: " + name})
			case n == 0:
				_, _ = w.Write([]byte("{}"))
			default:
				_ = json.NewEncoder(w).Encode(map[string]int{"ReservedConcurrentExecutions": n})
			}
		default:
			t.Errorf("unexpected %s %s", r.Method, r.URL.Path)
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// cliEnv is an environment for the AWS CLI that reaches nothing but what the test names: fixed
// credentials, a config file of the test's own, one attempt per call.
func cliEnv(t *testing.T, config string) []string {
	t.Helper()
	if _, err := exec.LookPath("aws"); err != nil {
		t.Fatalf("the AWS CLI is not on PATH, so the preflight's path through it cannot be tested: make deps installs it (apt-get install awscli): %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	return append(env, "AWS_ACCESS_KEY_ID=AKIDLOOPBACKTEST", "AWS_SECRET_ACCESS_KEY=loopback", "AWS_EC2_METADATA_DISABLED=true",
		"AWS_CONFIG_FILE="+filepath.Join(dir, "config"), "AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(dir, "none"), "AWS_MAX_ATTEMPTS=1")
}

// closedURL is a loopback address nothing listens on: AWS out of reach.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// TestCLI runs the real AWS CLI against the loopback stand-in: the account's limits, a function's
// reservation, none, a function not created yet, and an endpoint out of reach.
func TestCLI(t *testing.T) {
	env := cliEnv(t, "")
	srv := lambdaStandIn(t, 50, 20, map[string]int{"sinew-api": 20, "sinew-settle": 0})
	cli := CLI{Region: "us-east-1", EndpointURL: srv.URL, Env: env}
	ctx := context.Background()

	limit, unreserved, err := cli.Concurrency(ctx)
	if err != nil || limit != 50 || unreserved != 20 {
		t.Errorf("Concurrency = %d, %d, %v; want 50, 20", limit, unreserved, err)
	}
	for fn, want := range map[string]int{"sinew-api": 20, "sinew-settle": 0, "sinew-new": 0} {
		if n, err := cli.Reserved(ctx, fn); err != nil || n != want {
			t.Errorf("Reserved(%s) = %d, %v; want %d", fn, n, err, want)
		}
	}
	away := CLI{Region: "us-east-1", EndpointURL: closedURL(t), Env: env}
	if _, _, err := away.Concurrency(ctx); err == nil || !strings.Contains(err.Error(), "get-account-settings") {
		t.Errorf("Concurrency out of reach: %v, want the CLI's error", err)
	}
}

// TestRunThroughCLI is the deploy's preflight with the CLI as its account: refused at a new
// account's limit of 10, passed on a redeploy whose functions already hold their reservations,
// and passed with a note when AWS is out of reach.
func TestRunThroughCLI(t *testing.T) {
	env := cliEnv(t, "")
	tests := []struct {
		name     string
		endpoint string
		refused  bool
		note     string
	}{
		{"new account", lambdaStandIn(t, 10, 10, nil).URL, true, ""},
		{"redeploy", lambdaStandIn(t, 150, 120, map[string]int{"sinew-api": 20, "sinew-settle": 10}).URL, false, ""},
		{"out of reach", closedURL(t), false, "could not read the account's Lambda concurrency"},
	}
	s, err := stack.ParseSettings(func(string) (any, bool) { return nil, false }, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w bytes.Buffer
			cli := CLI{Region: "us-east-1", EndpointURL: tt.endpoint, Env: env}
			err := Run(context.Background(), Input{Settings: s, StackName: "sinew", Region: cli.Region, Account: cli}, &w)
			if (err != nil) != tt.refused || !strings.Contains(w.String(), tt.note) {
				t.Errorf("refusal %v, said %q; want refused %v and %q", err, w.String(), tt.refused, tt.note)
			}
		})
	}
}

// TestRegion finds the Region as the CDK CLI does: AWS_REGION, AWS_DEFAULT_REGION, then the
// profile's in the CLI's config.
func TestRegion(t *testing.T) {
	env := cliEnv(t, "[default]\nregion = eu-north-1\n[profile dev]\nregion = ap-south-1\n")
	tests := []struct {
		name    string
		vars    map[string]string
		profile string
		want    string
	}{
		{"AWS_REGION", map[string]string{"AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "us-west-2"}, "", "eu-west-1"},
		{"AWS_DEFAULT_REGION", map[string]string{"AWS_DEFAULT_REGION": "us-west-2"}, "", "us-west-2"},
		{"default profile", nil, "", "eu-north-1"},
		{"named profile", nil, "dev", "ap-south-1"},
		{"profile without one", nil, "other", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Region(context.Background(), func(k string) string { return tt.vars[k] }, CLI{Profile: tt.profile, Env: env})
			if got != tt.want {
				t.Errorf("Region = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestParseArgs reads the settings and the profile out of cdk deploy's arguments in each form the
// CDK CLI takes, and nothing else.
func TestParseArgs(t *testing.T) {
	tests := []struct {
		args    []string
		want    map[string]string
		profile string
	}{
		{[]string{"-c", "stage=dev", "--context", "SINEW_MODEL=bedrock:eu.x.y:0", "--context=alarmEmail=a@example.com", "-c=tags=a=b"},
			map[string]string{"stage": "dev", "SINEW_MODEL": "bedrock:eu.x.y:0", "alarmEmail": "a@example.com", "tags": "a=b"}, ""},
		{[]string{"--require-approval", "never", "--profile", "dev", "-c", "stage=prod"}, map[string]string{"stage": "prod"}, "dev"},
		{[]string{"--profile=ops", "-c"}, map[string]string{}, "ops"},
		{nil, map[string]string{}, ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			got, profile := ParseArgs(tt.args)
			if !maps.Equal(got, tt.want) || profile != tt.profile {
				t.Errorf("ParseArgs = %v, %q; want %v, %q", got, profile, tt.want, tt.profile)
			}
		})
	}
}

// TestLoadContext layers the context as the CDK does: cdk.json, cdk.context.json, the command line.
func TestLoadContext(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"cdk.json":         `{"app": "go run .", "context": {"@aws-cdk/flag": true, "stage": "prod", "apiReservedConcurrency": 5}}`,
		"cdk.context.json": `{"stage": "dev", "tags": "a=b"}`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := LoadContext(dir, map[string]string{"tags": "c=d"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"@aws-cdk/flag": true, "stage": "dev", "apiReservedConcurrency": 5.0, "tags": "c=d"}
	if !maps.Equal(got, want) {
		t.Errorf("LoadContext = %v, want %v", got, want)
	}
	if _, err := LoadContext(t.TempDir(), nil); err != nil {
		t.Errorf("without the files: %v", err)
	}
}
