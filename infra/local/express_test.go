package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"sinew/internal/deploy"
)

// A server-side call through local mode's public endpoints runs on tool_call_express: POST
// /tool-calls answers 200 with the result in the request (202 with Prefer: respond-async), and
// aws-sdk-go-v2, the AWS CLI and boto3 start tool_call_express synchronously and get AWS's answer
// shapes, billing details included; DescribeExecution knows no Express execution.
func TestToolCallExpress(t *testing.T) {
	dir := t.TempDir()
	p := startLocal(t, dir, "--in-memory")
	ctx := context.Background()
	dev := newClient(t, p, "dev-express")
	agent := dev.must(t, 201, "POST", "/agents", map[string]any{"name": "quick", "about": "server-side calls in the request"})["id"].(string)
	dev.must(t, 201, "POST", "/agents/"+agent+"/tools", map[string]any{"name": "echo", "type": "integration",
		"integration": map[string]any{"provider": "dummy", "method": "echo"}})

	x := dev.must(t, 200, "POST", "/tool-calls", map[string]any{"agent_id": agent, "tool": "echo", "arguments": map[string]any{"greeting": "now"}})
	out, _ := x["output"].(map[string]any)
	if x["status"] != "succeeded" || x["workflow"] != "tool_call" || out["name"] != "echo" || out["output"] == nil {
		t.Fatalf("POST /tool-calls = %v, want the ended execution with its result", x)
	}
	if again := dev.must(t, 200, "GET", "/executions/"+x["execution_id"].(string), nil); again["status"] != "succeeded" {
		t.Errorf("GET after the 200 = %v", again)
	}
	code, st, raw := dev.do(t, "POST", "/tool-calls", map[string]any{"agent_id": agent, "tool": "echo", "arguments": map[string]any{}}, "Prefer", "respond-async")
	if code != 202 || st["execution_id"] == nil {
		t.Errorf("with Prefer: respond-async = %d %s, want 202", code, raw)
	}

	arn := machineArn(deploy.ToolCallExpress)
	input := func(n string) string {
		b, _ := json.Marshal(map[string]any{"developer_id": "dev-express", "agent_id": agent, "task_id": nil, "session_id": nil, "tool": "echo",
			"arguments": map[string]any{"greeting": n}})
		return string(b)
	}
	res, err := p.sfn().StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(arn), Name: aws.String("sdk-1"), Input: aws.String(input("sdk"))})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != types.SyncExecutionStatusSucceeded || !strings.Contains(aws.ToString(res.Output), `"name":"echo"`) ||
		res.BillingDetails == nil || res.BillingDetails.BilledDurationInMilliseconds < 100 || res.BillingDetails.BilledMemoryUsedInMB != 64 ||
		!strings.Contains(aws.ToString(res.ExecutionArn), ":express:"+deploy.ToolCallExpress+":sdk-1:") {
		t.Fatalf("SDK StartSyncExecution = %s %s %+v %s", res.Status, aws.ToString(res.Output), res.BillingDetails, aws.ToString(res.ExecutionArn))
	}
	if _, err := p.sfn().DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: res.ExecutionArn}); err == nil || !strings.Contains(err.Error(), "InvalidArn") {
		t.Errorf("DescribeExecution of an Express execution: %v, want InvalidArn", err)
	}

	// The CLI on PATH, when it is not Debian's, told (as `local env` tells it) not to prefix the
	// host with sync-, which names no loopback host; Debian's goes through a proxy.
	if !isDebianCLI(t) {
		t.Setenv("AWS_DISABLE_HOST_PREFIX_INJECTION", "true")
		cli := awsJSON(t, p, p.Endpoints["stepfunctions"], "stepfunctions", "start-sync-execution", "--state-machine-arn", arn,
			"--name", "cli-1", "--input", input("cli"))
		billing, _ := cli["billingDetails"].(map[string]any)
		if cli["status"] != "SUCCEEDED" || !strings.Contains(cli["output"].(string), `"name":"echo"`) || billing["billedMemoryUsedInMB"] == nil {
			t.Errorf("aws stepfunctions start-sync-execution = %v", cli)
		}
	}
	syncThroughProxy(t, p, arn, input("debian"))

	py := `import boto3, botocore.config, json, os, sys
c = boto3.client("stepfunctions", endpoint_url=os.environ["SFN_URL"], config=botocore.config.Config(inject_host_prefix=False))
r = c.start_sync_execution(stateMachineArn=sys.argv[1], name="py-1", input=sys.argv[2])
print(json.dumps({"status": r["status"], "output": r.get("output"), "billing": r["billingDetails"], "arn": r["executionArn"]}))`
	cmd := exec.Command(python3WithBoto3(t), "-c", py, arn, input("py"))
	cmd.Env = append(append(os.Environ(), p.AWSEnv()...), "SFN_URL="+p.Endpoints["stepfunctions"])
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pout, err := cmd.Output()
	var got map[string]any
	if err != nil || json.Unmarshal(pout, &got) != nil || got["status"] != "SUCCEEDED" || !strings.Contains(got["output"].(string), `"name":"echo"`) {
		t.Errorf("boto3 start_sync_execution: %v %s\n%s", err, pout, stderr.String())
	}
}

const debianCLIPath = "/usr/bin/aws"

// isDebianCLI reports whether the aws on PATH is Debian's.
func isDebianCLI(t *testing.T) bool {
	path, err := exec.LookPath("aws")
	if err != nil {
		t.Fatal("the AWS CLI (aws) is not on PATH; the CLI-driven tests need it")
	}
	a, errA := os.Stat(path)
	b, errB := os.Stat(debianCLIPath)
	return errA == nil && errB == nil && os.SameFile(a, b)
}

// syncThroughProxy runs start-sync-execution with Debian's AWS CLI (2.9, which make deps installs),
// which predates AWS_DISABLE_HOST_PREFIX_INJECTION and sends to sync-127.0.0.1: told to use the
// Step Functions endpoint as its HTTP proxy, it gets there all the same.
func syncThroughProxy(t *testing.T, p *proc, arn, input string) {
	t.Helper()
	if _, err := os.Stat(debianCLIPath); err != nil {
		t.Fatalf("Debian's AWS CLI (%s) is missing: make deps installs it (apt-get install awscli)", debianCLIPath)
	}
	ep := p.Endpoints["stepfunctions"]
	cmd := exec.Command(debianCLIPath, "stepfunctions", "start-sync-execution", "--state-machine-arn", arn, "--name", "cli-proxy",
		"--input", input, "--endpoint-url", ep, "--output", "json")
	cmd.Env = append(append(os.Environ(), p.AWSEnv()...), "HTTP_PROXY="+ep, "NO_PROXY=", "AWS_DISABLE_HOST_PREFIX_INJECTION=false")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var got map[string]any
	if err != nil || json.Unmarshal(out, &got) != nil || got["status"] != "SUCCEEDED" || !strings.Contains(fmt.Sprint(got["output"]), `"name":"echo"`) {
		t.Errorf("Debian's aws stepfunctions start-sync-execution through HTTP_PROXY: %v %s\n%s", err, out, stderr.String())
	}
}
