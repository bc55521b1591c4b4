package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"sinew/internal/localaws/sfnapi"
	"sinew/internal/testenv/awscli"
	"sinew/internal/testenv/localmode"
)

// onlyAWSEndpoint is an environment for a child process with AWS_ENDPOINT_URL and p's credentials
// and nothing else that points at an endpoint: no AWS_ENDPOINT_URL_<SERVICE>, no config file.
func onlyAWSEndpoint(p *proc, endpoint string) []string {
	env := append([]string{"AWS_ENDPOINT_URL=" + endpoint}, p.AWSEnv()...)
	for _, k := range []string{"PATH", "HOME", "PYENV_ROOT", "PYENV_VERSION"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// The Go SDK, configured from the environment with AWS_ENDPOINT_URL alone, reaches every AWS API
// local mode serves on its one endpoint: Step Functions, Lambda, KMS, EventBridge and DynamoDB.
func TestOneEndpointServesTheGoSDK(t *testing.T) {
	p := startLocal(t, t.TempDir())
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AWS_ENDPOINT_URL_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	for _, kv := range onlyAWSEndpoint(p, p.Endpoints["aws"]) {
		k, v, _ := strings.Cut(kv, "=")
		if k != "PATH" && k != "HOME" {
			t.Setenv(k, v)
		}
	}
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sfn.NewFromConfig(cfg, sfnapi.NoHostPrefix).ListStateMachines(ctx, &sfn.ListStateMachinesInput{}); err != nil {
		t.Errorf("Step Functions ListStateMachines: %v", err)
	}
	out, err := lambda.NewFromConfig(cfg).Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("sinew-test-echo"), Payload: []byte(`{"hi":1}`)})
	if err != nil || string(out.Payload) != `{"hi":1}` {
		t.Errorf("Lambda Invoke: %v %s", err, payloadOf(out))
	}
	enc, err := kms.NewFromConfig(cfg).Encrypt(ctx, &kms.EncryptInput{KeyId: aws.String("alias/sinew-secrets"), Plaintext: []byte("x")})
	if err != nil || len(enc.CiphertextBlob) == 0 {
		t.Errorf("KMS Encrypt: %v", err)
	}
	pe, err := eventbridge.NewFromConfig(cfg).PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{
		{Source: aws.String("test"), DetailType: aws.String("t"), Detail: aws.String("{}")}}})
	if err != nil || pe.FailedEntryCount != 0 {
		t.Errorf("EventBridge PutEvents: %v", err)
	}
	tables, err := dynamodb.NewFromConfig(cfg).ListTables(ctx, &dynamodb.ListTablesInput{})
	if err != nil || !containsString(tables.TableNames, tableName) {
		t.Errorf("DynamoDB ListTables: %v %v", err, tables)
	}
}

func payloadOf(out *lambda.InvokeOutput) string {
	if out == nil {
		return ""
	}
	return string(out.Payload)
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// The AWS CLI, told nothing but the lines `local env` prints to export, reaches every API; and the
// JS SDK (v3) and boto3 with those lines alone invoke a function.
func TestOneEndpointServesTheCLIAndJS(t *testing.T) {
	dir := t.TempDir()
	p := startLocal(t, dir)
	base := localEnvExports(t, p)
	cli := awscli.Find(t)
	invoke := append([]string{"lambda", "invoke", "--function-name", "sinew-test-echo", "--payload", `{"hi":1}`, filepath.Join(dir, "out.json")},
		cli.RawBlobArgs()...)
	var endpointArgs []string
	if !cli.HonoursEndpointURL() {
		// As local mode's own lines tell the user of such a CLI: the one endpoint, given on each command.
		t.Logf("AWS CLI %s ignores AWS_ENDPOINT_URL: each command gets --endpoint-url", cli.Version)
		endpointArgs = []string{"--endpoint-url", p.Endpoints["aws"]}
	}
	for _, args := range [][]string{
		{"stepfunctions", "list-state-machines"},
		invoke,
		{"kms", "encrypt", "--key-id", "alias/sinew-secrets", "--plaintext", "eA=="},
		{"events", "put-events", "--entries", `[{"Source":"cli","DetailType":"t","Detail":"{}"}]`},
		{"dynamodb", "list-tables"},
	} {
		cmd := exec.Command(cli.Path, append(append(args, endpointArgs...), "--output", "json")...)
		cmd.Env = base
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("aws %s: %v\n%s", strings.Join(args[:2], " "), err, out)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "out.json")); err != nil || string(b) != `{"hi":1}` {
		t.Errorf("aws lambda invoke wrote %q (%v)", b, err)
	}

	root, _ := filepath.Abs("../..")
	js := `const {LambdaClient, InvokeCommand} = require("@aws-sdk/client-lambda");
new LambdaClient({}).send(new InvokeCommand({FunctionName: "sinew-test-echo", Payload: Buffer.from('{"js":2}')}))
  .then(o => process.stdout.write(Buffer.from(o.Payload).toString()), e => { console.error(e); process.exit(1); });`
	cmd := exec.Command("node", "-e", js)
	cmd.Env = append(base, "NODE_PATH="+filepath.Join(root, "infra", "node_modules"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || string(out) != `{"js":2}` {
		t.Errorf("JS SDK Lambda Invoke: %v %q\n%s", err, out, stderr.String())
	}

	// boto3 (Debian's python3-boto3, which make deps installs) honours AWS_ENDPOINT_URL from 1.28
	// on; Debian's is older, so the endpoint is passed as boto3 users pass it.
	py := `import boto3, json, os
c = boto3.client("lambda", endpoint_url=os.environ["AWS_ENDPOINT_URL"])
print(c.invoke(FunctionName="sinew-test-echo", Payload=b'{"py":3}')["Payload"].read().decode(), end="")`
	cmd = exec.Command(python3WithBoto3(t), "-c", py)
	cmd.Env = base
	stderr.Reset()
	cmd.Stderr = &stderr
	if out, err = cmd.Output(); err != nil || string(out) != `{"py":3}` {
		t.Errorf("boto3 Lambda Invoke: %v %q\n%s", err, out, stderr.String())
	}
}

// python3WithBoto3 is Debian's python3, where python3-boto3 installs boto3 (a python3 earlier on
// PATH, such as pyenv's, does not see it).
func python3WithBoto3(t *testing.T) string {
	t.Helper()
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import boto3").Run(); err != nil {
		t.Fatalf("%s cannot import boto3 (%v): make deps installs Debian's python3-boto3", py, err)
	}
	return py
}

// localEnvExports runs `local env` on p's directory and gives the environment its export lines
// make, checking that they name p's endpoint and credentials, with PATH and HOME to run programs.
func localEnvExports(t *testing.T, p *proc) []string {
	t.Helper()
	out, err := exec.Command(binPath, "env", "--dir", p.Dir).Output()
	if err != nil {
		t.Fatalf("local env: %v", err)
	}
	env := exportedEnv(t, string(out))
	if env["AWS_ENDPOINT_URL"] != p.Endpoints["aws"] || env["AWS_ACCESS_KEY_ID"] != p.Creds.AccessKeyID || env["AWS_SECRET_ACCESS_KEY"] != p.Creds.SecretAccessKey {
		t.Fatalf("local env printed %q; want the endpoint %s and the directory's credentials", out, p.Endpoints["aws"])
	}
	list := []string{"AWS_EC2_METADATA_DISABLED=true", "AWS_PAGER=", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null"}
	for k, v := range env {
		list = append(list, k+"="+v)
	}
	for _, k := range []string{"PATH", "HOME", "PYENV_ROOT", "PYENV_VERSION"} {
		if v, ok := os.LookupEnv(k); ok {
			list = append(list, k+"="+v)
		}
	}
	return list
}

// exportedEnv reads the "export K=V ..." lines local mode printed.
func exportedEnv(t *testing.T, stdout string) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, line := range strings.Split(stdout, "\n") {
		rest, ok := strings.CutPrefix(line, "export ")
		if !ok {
			continue
		}
		for _, kv := range strings.Fields(rest) {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
	}
	return env
}

// What local mode prints holds for every AWS CLI: a current one honours AWS_ENDPOINT_URL (the test
// above), so nothing printed may say that a current CLI ignores it or that every command needs
// --endpoint-url; an older one (Debian 12's 2.9) is told to pass --endpoint-url, naming the
// versions.
func TestPrintedAdviceMatchesTheCLI(t *testing.T) {
	cli := awscli.Find(t)
	p := startLocal(t, t.TempDir())
	printed := p.Stdout.String()
	for _, wrong := range []string{"always pass --endpoint-url", "ignore AWS_ENDPOINT_URL_", "v1 ignores"} {
		if strings.Contains(printed, wrong) {
			t.Errorf("local mode says %q, though a current CLI honours AWS_ENDPOINT_URL (the one here is %s):\n%s", wrong, cli.Version, printed)
		}
	}
	if !strings.Contains(printed, "export AWS_ENDPOINT_URL="+p.Endpoints["aws"]+"\n") {
		t.Errorf("no AWS_ENDPOINT_URL to export:\n%s", printed)
	}
	if old := "older than 1.29 or 2.13 ignores AWS_ENDPOINT_URL: pass --endpoint-url " + p.Endpoints["aws"]; !strings.Contains(printed, old) {
		t.Errorf("local mode does not tell the user of an older CLI what to pass (%q):\n%s", old, printed)
	}
}

// A port in use ends local mode with one line naming the port and the flag that moves it; the
// default port is the fixed one documented.
func TestAWSPortInUse(t *testing.T) {
	if DefaultAWSPort != 4599 {
		t.Errorf("DefaultAWSPort %d: the README documents 4599", DefaultAWSPort)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	_, err = localmode.Start(binPath, t.TempDir(), []string{"--aws-port", port, "--root", "../.."}, nil)
	if err == nil {
		t.Fatal("local mode started on a port in use")
	}
	want := fmt.Sprintf("local: port %s (the aws endpoint) is in use, perhaps by another local mode: stop it, or choose another port with --aws-port N (0 picks a free one)", port)
	if !strings.Contains(err.Error(), "stderr:\n"+want+"\n") || strings.Count(err.Error(), "in use") != 1 {
		t.Errorf("got %v\nwant the one line %q", err, want)
	}
}

// endpoints.json describes a running local mode: it goes when local mode stops, and names the
// process that wrote it (a crash leaves it, and its pid tells it is stale).
func TestEndpointsFileGoesWithTheProcess(t *testing.T) {
	dir := t.TempDir()
	p := startLocal(t, dir)
	data, err := os.ReadFile(filepath.Join(dir, "endpoints.json"))
	if err != nil {
		t.Fatal(err)
	}
	var eps map[string]string
	if err := json.Unmarshal(data, &eps); err != nil || eps["pid"] != strconv.Itoa(p.Cmd.Process.Pid) {
		t.Errorf("endpoints.json pid %q, want %d (%v)", eps["pid"], p.Cmd.Process.Pid, err)
	}
	p.stop(t)
	if _, err := os.Stat(filepath.Join(dir, "endpoints.json")); !os.IsNotExist(err) {
		t.Errorf("endpoints.json after local mode stopped: %v", err)
	}
}
