// Command demo is sinew's main job on one machine, end to end, through its public interfaces only
// (the HTTP API, the Step Functions API, the AWS CLI): it starts local mode, creates an agent with a
// tool of each type, runs an integration, an api_call, a system call and a function tool that
// pauses until the AWS CLI's send-task-success resumes it, prints a report, and stops what it
// started. It exits non-zero, saying why, if any step fails.
//
//	go run ./infra/demo            (make demo)
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	d := &demo{started: time.Now()}
	err := d.run(ctx)
	d.cleanup()
	if err != nil {
		fmt.Fprintf(os.Stderr, "\ndemo FAILED: %v\n", err)
		os.Exit(1)
	}
}

type demo struct {
	started   time.Time
	dir       string
	bin       string
	local     *exec.Cmd
	localLog  *os.File
	endpoints map[string]string
	token     string
	service   *http.Server
	rows      []row
}

// row is one line of the report.
type row struct {
	call, typ, path, result string
	took                    time.Duration
}

func (d *demo) step(format string, args ...any) {
	fmt.Printf("[%5.1fs] %s\n", time.Since(d.started).Seconds(), fmt.Sprintf(format, args...))
}

func (d *demo) run(ctx context.Context) error {
	var err error
	if d.dir, err = os.MkdirTemp("", "sinew-demo-"); err != nil {
		return err
	}
	// A local HTTP service for the api_call tool: the guarded dialer refuses loopback unless the
	// operator allows it, which the demo does for exactly this address.
	svcAddr, err := d.startService()
	if err != nil {
		return fmt.Errorf("starting the demo's weather service: %w", err)
	}
	if err := d.startLocal(ctx, svcAddr); err != nil {
		return err
	}
	if err := d.scenario(ctx, svcAddr); err != nil {
		return err
	}
	d.report()
	return nil
}

func (d *demo) startService() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /weather/{city}", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != "demo-weather-key" {
			http.Error(w, `{"error":"bad key"}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"city":%q,"units":%q,"temperature":21.5,"sky":"clear"}`, r.PathValue("city"), r.URL.Query().Get("units"))
	})
	d.service = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go d.service.Serve(ln)
	return ln.Addr().String(), nil
}

func (d *demo) startLocal(ctx context.Context, svcAddr string) error {
	d.step("building local mode (go build ./infra/local)...")
	d.bin = filepath.Join(d.dir, "sinew-local")
	build := exec.CommandContext(ctx, "go", "build", "-o", d.bin, "./infra/local")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building local mode: %w", err)
	}
	logPath := filepath.Join(d.dir, "local.log")
	f, err := os.Create(logPath)
	if err != nil {
		return err
	}
	d.localLog = f
	d.step("starting local mode (DynamoDB Local takes a few seconds on a cold JVM); its log: %s", logPath)
	d.local = exec.Command(d.bin, "--dir", filepath.Join(d.dir, "local"))
	d.local.Env = append(os.Environ(), "SINEW_APICALL_ALLOW="+svcAddr)
	d.local.Stdout, d.local.Stderr = f, f
	d.local.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.local.Start(); err != nil {
		return fmt.Errorf("starting local mode: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- d.local.Wait() }()
	epFile := filepath.Join(d.dir, "local", "endpoints.json")
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if b, err := os.ReadFile(epFile); err == nil && json.Unmarshal(b, &d.endpoints) == nil && d.endpoints["http"] != "" {
			break
		}
		select {
		case err := <-exited:
			d.local = nil
			return fmt.Errorf("local mode exited before it was ready (%v); see %s:\n%s", err, logPath, tail(logPath))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("local mode was not ready after 3 minutes; see %s", logPath)
		}
	}
	d.step("local mode is up: HTTP API %s, Step Functions %s, Lambda %s, DynamoDB %s",
		d.endpoints["http"], d.endpoints["stepfunctions"], d.endpoints["lambda"], d.endpoints["dynamodb"])
	out, err := exec.CommandContext(ctx, d.bin, "token", "--dir", filepath.Join(d.dir, "local"), "demo-developer").Output()
	if err != nil {
		return fmt.Errorf("issuing a local token: %w", err)
	}
	d.token = strings.TrimSpace(string(out))
	return nil
}

func (d *demo) scenario(ctx context.Context, svcAddr string) error {
	d.step("creating an agent whose metadata holds setup and arguments for its tools (x-integration-*, x-api_call-*)")
	agent, err := d.api(ctx, "POST", "/agents", map[string]any{
		"name": "demo-agent", "about": "shows one tool of each type",
		"metadata": map[string]any{
			"x-integration-args":  map[string]any{"echo": map[string]any{"greeting": "from the agent's metadata", "source": "agent"}},
			"x-api_call-setup":    map[string]any{"weather": map[string]any{"headers": map[string]any{"X-Api-Key": "demo-weather-key"}}},
			"x-integration-setup": map[string]any{"echo": map[string]any{"api_key": "a-secret-nobody-sees"}},
		},
	}, 201)
	if err != nil {
		return err
	}
	agentID := agent["id"].(string)
	tools := []map[string]any{
		{"name": "echo", "type": "integration", "description": "echoes its merged arguments",
			"integration": map[string]any{"provider": "dummy", "arguments": map[string]any{"from_definition": true}}},
		{"name": "weather", "type": "api_call", "description": "the demo's local weather service",
			"api_call": map[string]any{"method": "GET", "url": "http://" + svcAddr + "/weather/{city}", "params": map[string]any{"units": "metric"}}},
		{"name": "list_agents", "type": "system", "description": "lists the developer's agents",
			"system": map[string]any{"resource": "agent", "operation": "list", "arguments": map[string]any{"limit": 5}}},
		{"name": "ask_human", "type": "function", "description": "a person answers",
			"function": map[string]any{"parameters": map[string]any{"type": "object", "properties": map[string]any{"question": map[string]any{"type": "string"}}}, "timeout_seconds": 3600}},
	}
	for _, t := range tools {
		if _, err := d.api(ctx, "POST", "/agents/"+agentID+"/tools", t, 201); err != nil {
			return err
		}
	}
	d.step("created tools echo (integration), weather (api_call), list_agents (system), ask_human (function)")
	sess, err := d.api(ctx, "POST", "/sessions", map[string]any{"agent_id": agentID,
		"metadata": map[string]any{"x-integration-args": map[string]any{"echo": map[string]any{"source": "session override"}}}}, 201)
	if err != nil {
		return err
	}
	sessionID := sess["id"].(string)

	calls := []struct {
		tool, typ, path string
		args            map[string]any
		session         bool
	}{
		{"echo", "integration", "tool_call: Prepare → Integration Lambda (dummy) → Settle", map[string]any{"greeting": "from the call"}, true},
		{"weather", "api_call", "tool_call: Prepare → ApiCall Lambda (guarded HTTP) → Settle", map[string]any{"path": map[string]any{"city": "Lisbon"}}, false},
		{"list_agents", "system", "tool_call: Prepare → System Lambda (agent.list) → Settle", map[string]any{}, false},
	}
	for _, c := range calls {
		start := time.Now()
		body := map[string]any{"agent_id": agentID, "task_id": nil, "session_id": nil, "tool": c.tool, "arguments": c.args}
		if c.session {
			body["session_id"] = sessionID
		}
		x, err := d.api(ctx, "POST", "/tool-calls", body, 202)
		if err != nil {
			return err
		}
		id := x["execution_id"].(string)
		d.step("POST /tool-calls %s → execution %s", c.tool, id)
		done, err := d.waitStatus(ctx, id, "succeeded")
		if err != nil {
			return err
		}
		d.rows = append(d.rows, row{c.tool, c.typ, c.path, summarize(done["output"]), time.Since(start)})
	}

	// The function tool: the execution waits on a task token until the client answers.
	start := time.Now()
	x, err := d.api(ctx, "POST", "/tool-calls", map[string]any{"agent_id": agentID, "task_id": nil, "session_id": nil,
		"tool": "ask_human", "arguments": map[string]any{"question": "Ship it?"}}, 202)
	if err != nil {
		return err
	}
	id := x["execution_id"].(string)
	waiting, err := d.waitStatus(ctx, id, "awaiting_input")
	if err != nil {
		return err
	}
	pending, _ := waiting["pending_calls"].([]any)
	if len(pending) != 1 {
		return fmt.Errorf("execution %s is awaiting input with %d pending calls, want 1", id, len(pending))
	}
	token, _ := pending[0].(map[string]any)["task_token"].(string)
	d.step("execution %s is awaiting_input: the function call waits for its client", id)
	cli := []string{"aws", "stepfunctions", "send-task-success", "--endpoint-url", d.endpoints["stepfunctions"],
		"--task-token", token, "--task-output", `{"answer":"yes, ship it"}`}
	d.step("resuming it with the AWS CLI:\n    %s", shellQuote(cli))
	cmd := exec.CommandContext(ctx, cli[0], cli[1:]...)
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "AWS_DEFAULT_REGION=us-east-1")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("aws stepfunctions send-task-success: %v: %s", err, out)
	}
	done, err := d.waitStatus(ctx, id, "succeeded")
	if err != nil {
		return err
	}
	d.rows = append(d.rows, row{"ask_human", "function", "tool_call: Prepare → Function (waitForTaskToken) ⏸ send-task-success → Settle", summarize(done["output"]), time.Since(start)})
	return nil
}

// waitStatus polls GET /executions/{id} until it reaches want (or a final status that is not want).
func (d *demo) waitStatus(ctx context.Context, id, want string) (map[string]any, error) {
	deadline := time.Now().Add(90 * time.Second)
	for {
		x, err := d.api(ctx, "GET", "/executions/"+id, nil, 200)
		if err != nil {
			// The execution is recorded by its first state, a moment after POST /tool-calls
			// answers 202 (a known gap: the route could record it itself).
			if strings.Contains(err.Error(), "answered 404") && time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			return nil, err
		}
		st, _ := x["status"].(string)
		if st == want {
			return x, nil
		}
		switch st {
		case "succeeded", "failed", "timed_out", "cancelled":
			return nil, fmt.Errorf("execution %s ended %s, want %s: %v", id, st, want, summarize(x["error"]))
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("execution %s still %s after 90 s, want %s", id, st, want)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// api calls the local HTTP API and decodes its JSON answer, checking the status.
func (d *demo) api(ctx context.Context, method, path string, body any, want int) (map[string]any, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, d.endpoints["http"]+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+d.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return nil, fmt.Errorf("%s %s answered %d, want %d: %s", method, path, resp.StatusCode, want, raw)
	}
	out := map[string]any{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			return nil, fmt.Errorf("%s %s: the answer is not a JSON object: %s", method, path, raw)
		}
	}
	return out, nil
}

func (d *demo) report() {
	fmt.Printf("\nsinew demo: every call went through the local HTTP API, the Step Functions API and the Lambdas\n\n")
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "CALL\tTYPE\tTIME\tPATH\tRESULT")
	for _, r := range d.rows {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.call, r.typ, r.took.Round(time.Millisecond), r.path, r.result)
	}
	w.Flush()
	fmt.Printf(`
Try next (local mode: go run ./infra/local, or make local):
  export AWS_ENDPOINT_URL_SFN=<stepfunctions endpoint>  AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local AWS_DEFAULT_REGION=us-east-1
  TOKEN=$(go run ./infra/local token my-developer)
  curl -H "Authorization: Bearer $TOKEN" <http endpoint>/openapi.json
  aws stepfunctions list-executions --state-machine-arn <tool_call ARN>
`)
}

func (d *demo) cleanup() {
	if d.local != nil && d.local.Process != nil {
		// The whole process group: local mode and the DynamoDB Local JVM it started.
		_ = syscall.Kill(-d.local.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _, _ = d.local.Process.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-d.local.Process.Pid, syscall.SIGKILL)
		}
	}
	if d.service != nil {
		_ = d.service.Close()
	}
	if d.localLog != nil {
		d.localLog.Close()
	}
	if d.dir != "" {
		_ = os.RemoveAll(d.dir)
	}
}

func summarize(v any) string {
	if v == nil {
		return "null"
	}
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 110 {
		s = s[:107] + "..."
	}
	return s
}

func shellQuote(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " {}\"'") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}
