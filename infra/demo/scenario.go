package main

import (
	"bytes"
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/http"
	"net/mail"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// modelScript is what the demo's model does: local mode plays it with SINEW_MODEL=scripted:<file>.
//
//go:embed script.json
var modelScript []byte

// The demo's fixed names.
const (
	smtpUser       = "demo"
	smtpSecretName = "smtp_password"
	// secret purposes, the keys of demo.secrets (the values are made per run and never printed)
	secretSMTP    = "the SMTP password (a developer secret)"
	secretWeather = "the weather API key (x-api_call-setup)"
	secretEcho    = "echo's api_key (x-integration-setup)"
)

func (d *demo) scenario() []step {
	return []step{
		{"start the demo's own services on loopback: a weather API and an SMTP server", d.startServices},
		{"make a 2-second test video with ffmpeg (the file a client sends)", d.makeVideo},
		{"build local mode (go build ./infra/local)", d.buildLocal},
		{"start local mode: DynamoDB Local, the Step Functions engine, the Lambdas, the HTTP API", d.startLocal},
		{"store the SMTP password as a developer secret (PUT /secrets/" + smtpSecretName + ")", d.storeSecret},
		{"create an agent with a tool of each type (setup in its metadata) and a session that overrides it", d.createAgent},
		{"tool_call: integration echo (the dummy provider echoes its merged arguments)", d.callEcho},
		{"tool_call: api_call weather (guarded HTTP to the demo's weather API)", d.callWeather},
		{"tool_call: system list_agents (sinew's own resources)", d.callSystem},
		{"tool_call: integration make_thumbnail (ffmpeg on the test video)", d.callFFmpeg},
		{"tool_call: function ask_human, paused until the AWS CLI answers it", d.callFunction},
		{"MCP: list the agent's tools and call four of them with the official Go SDK's MCP client", d.callMCP},
		{"chat 1: the model calls weather, then send_email; sinew runs both; the model answers", d.chatTools},
		{"chat 2: the model calls the function tool ask_human; the client answers it; the model finishes", d.chatFunction},
		{"check that no setup secret is in a log, an answer, a history or the table in plain text", d.checkSecrets},
	}
}

func randomSecret() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (d *demo) startServices(ctx context.Context) (string, error) {
	var err error
	if d.dir, err = os.MkdirTemp("", "sinew-demo-"); err != nil {
		return "", err
	}
	for _, k := range []string{secretSMTP, secretWeather, secretEcho} {
		d.secrets[k] = randomSecret()
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("the weather API: %w", err)
	}
	d.svcAddr = ln.Addr().String()
	key := d.secrets[secretWeather]
	mux := http.NewServeMux()
	mux.HandleFunc("GET /weather/{city}", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != key {
			http.Error(w, `{"error":"missing or wrong X-Api-Key"}`, http.StatusUnauthorized)
			return
		}
		d.weatherHits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"city":%q,"units":%q,"temperature":21.5,"sky":"clear"}`, r.PathValue("city"), r.URL.Query().Get("units"))
	})
	d.weather = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = d.weather.Serve(ln) }()
	if d.mail, d.mailCA, err = startMailServer(d.dir, smtpUser, d.secrets[secretSMTP]); err != nil {
		return "", fmt.Errorf("the SMTP server: %w", err)
	}
	d.detail("weather API  http://%s/weather/{city} (wants the header X-Api-Key)", d.svcAddr)
	d.detail("SMTP server  %s (STARTTLS on a certificate local mode trusts through SINEW_EMAIL_CA_FILE; AUTH PLAIN for user %s)", d.mail.Addr, smtpUser)
	return "weather API and SMTP server listening", nil
}

func (d *demo) makeVideo(ctx context.Context) (string, error) {
	clip, err := makeClip(ctx, d.dir)
	if err != nil {
		return "", err
	}
	d.clip = clip
	return fmt.Sprintf("clip.mp4: %d bytes, 160x120 test pattern with a 440 Hz tone", len(clip)), nil
}

func (d *demo) storeSecret(ctx context.Context) (string, error) {
	if _, err := d.api(ctx, "PUT", "/secrets/"+smtpSecretName, map[string]any{"value": d.secrets[secretSMTP]}, 201); err != nil {
		return "", err
	}
	list, err := d.api(ctx, "GET", "/secrets", nil, 200)
	if err != nil {
		return "", err
	}
	items, _ := list["items"].([]any)
	if len(items) != 1 {
		return "", fmt.Errorf("GET /secrets lists %d secrets, want 1: %s", len(items), summarize(list, 300))
	}
	d.detail("GET /secrets answers %s", summarize(items[0], 200))
	return "stored encrypted; answers name it, never show it", nil
}

func (d *demo) createAgent(ctx context.Context) (string, error) {
	agent, err := d.api(ctx, "POST", "/agents", map[string]any{
		"name": "demo-agent", "about": "shows one tool of each type",
		"instructions": "You are sinew's demo agent.",
		"metadata": map[string]any{
			"x-integration-setup": map[string]any{
				"echo": map[string]any{"api_key": d.secrets[secretEcho]},
				"send_email": map[string]any{"host": "127.0.0.1", "port": int(d.mail.Addr.Port()), "user": smtpUser,
					"password": map[string]any{"secret": smtpSecretName}},
			},
			"x-integration-args": map[string]any{"echo": map[string]any{"greeting": "from the agent's metadata", "source": "agent"}},
			"x-api_call-setup":   map[string]any{"weather": map[string]any{"headers": map[string]any{"X-Api-Key": d.secrets[secretWeather]}}},
		},
	}, 201)
	if err != nil {
		return "", err
	}
	d.agentID, _ = agent["id"].(string)
	fn := func(props map[string]any) map[string]any {
		return map[string]any{"parameters": map[string]any{"type": "object", "properties": props}, "timeout_seconds": 3600}
	}
	tools := []map[string]any{
		{"name": "echo", "type": "integration", "description": "echoes its merged arguments",
			"integration": map[string]any{"provider": "dummy", "arguments": map[string]any{"from_definition": true}}},
		{"name": "send_email", "type": "integration", "description": "sends an email",
			"integration": map[string]any{"provider": "email", "method": "send"}},
		{"name": "make_thumbnail", "type": "integration", "description": "runs ffmpeg on a media file",
			"integration": map[string]any{"provider": "ffmpeg", "method": "bash_cmd"}},
		{"name": "weather", "type": "api_call", "description": "the current weather in a city",
			"api_call": map[string]any{"method": "GET", "url": "http://" + d.svcAddr + "/weather/{city}", "params": map[string]any{"units": "metric"}}},
		{"name": "list_agents", "type": "system", "description": "lists the developer's agents",
			"system": map[string]any{"resource": "agent", "operation": "list", "arguments": map[string]any{"limit": 5}}},
		{"name": "ask_human", "type": "function", "description": "asks a person and waits for the answer",
			"function": fn(map[string]any{"question": map[string]any{"type": "string"}})},
	}
	var names []string
	for _, t := range tools {
		if _, err := d.api(ctx, "POST", "/agents/"+d.agentID+"/tools", t, 201); err != nil {
			return "", err
		}
		names = append(names, fmt.Sprintf("%s (%s)", t["name"], t["type"]))
	}
	d.detail("agent %s with tools %s", d.agentID, strings.Join(names, ", "))
	sess, err := d.api(ctx, "POST", "/sessions", map[string]any{"agent_id": d.agentID,
		"metadata": map[string]any{"x-integration-args": map[string]any{"echo": map[string]any{"source": "session override"}}}}, 201)
	if err != nil {
		return "", err
	}
	d.sessID, _ = sess["id"].(string)
	d.detail("session %s, whose x-integration-args.echo replaces the agent's", d.sessID)
	// Setup values are answered as "<redacted>".
	got, err := d.api(ctx, "GET", "/agents/"+d.agentID, nil, 200)
	if err != nil {
		return "", err
	}
	md, _ := got["metadata"].(map[string]any)
	setup, _ := md["x-integration-setup"].(map[string]any)
	echo, _ := setup["echo"].(map[string]any)
	if echo["api_key"] != "<redacted>" {
		return "", fmt.Errorf("GET /agents/%s answers echo's api_key as %s, want \"<redacted>\"", d.agentID, summarize(echo["api_key"], 20))
	}
	d.detail("GET /agents/{id} answers x-integration-setup as %s", summarize(setup, 200))
	return fmt.Sprintf("agent, %d tools and a session created", len(tools)), nil
}

// toolCall starts tool_call through POST /tool-calls, waits for it, and checks the tool's output;
// check returns the report's result.
func (d *demo) toolCall(ctx context.Context, name, typ, path string, args map[string]any, inSession bool, check func(out map[string]any) (string, error)) (string, error) {
	start := time.Now()
	body := map[string]any{"agent_id": d.agentID, "task_id": nil, "session_id": nil, "tool": name, "arguments": args}
	if inSession {
		body["session_id"] = d.sessID
	}
	x, err := d.api(ctx, "POST", "/tool-calls", body, 202)
	if err != nil {
		return "", err
	}
	id, _ := x["execution_id"].(string)
	d.executions = append(d.executions, id)
	d.detail("POST /tool-calls → 202, execution %s", id)
	done, err := d.waitStatus(ctx, id, "succeeded")
	if err != nil {
		return "", err
	}
	out, err := d.output(ctx, done)
	if err != nil {
		return "", err
	}
	result, err := check(out)
	if err != nil {
		return "", fmt.Errorf("execution %s succeeded with the wrong output: %w", id, err)
	}
	d.rows = append(d.rows, row{name, typ, path, result, time.Since(start)})
	return name + " → " + result, nil
}

// output is an execution's tool output, read back through GET /payloads when it travelled as a
// reference.
func (d *demo) output(ctx context.Context, x map[string]any) (map[string]any, error) {
	res, _ := x["output"].(map[string]any)
	if ref, ok := res["sinew:ref"].(string); ok {
		var err error
		if res, err = d.api(ctx, "GET", "/payloads/"+ref, nil, 200); err != nil {
			return nil, err
		}
	}
	out, ok := res["output"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the execution's result has no output object: %s", summarize(res, 300))
	}
	return out, nil
}

func (d *demo) callEcho(ctx context.Context) (string, error) {
	return d.toolCall(ctx, "echo", "integration", "tool_call: Dispatch → integration Lambda (dummy)",
		map[string]any{"greeting": "from the call"}, true, func(out map[string]any) (string, error) {
			// call ∪ definition ∪ metadata, the session's entry replacing the agent's.
			want := map[string]any{"greeting": "from the call", "from_definition": true, "source": "session override"}
			for k, v := range want {
				if out[k] != v {
					return "", fmt.Errorf("echo's %s is %s, want %s: %s", k, summarize(out[k], 60), summarize(v, 60), summarize(out, 200))
				}
			}
			return summarize(out, 100) + " (call ∪ definition ∪ session metadata)", nil
		})
}

func (d *demo) callWeather(ctx context.Context) (string, error) {
	return d.toolCall(ctx, "weather", "api_call", "tool_call: Dispatch → apicall Lambda (guarded HTTP)",
		map[string]any{"path": map[string]any{"city": "Lisbon"}}, false, func(out map[string]any) (string, error) {
			js, _ := out["json"].(map[string]any)
			if out["status_code"] != 200.0 || js["temperature"] != 21.5 || js["units"] != "metric" {
				return "", fmt.Errorf("want status 200 and 21.5 metric: %s", summarize(out, 300))
			}
			return "200 " + summarize(js, 90), nil
		})
}

func (d *demo) callSystem(ctx context.Context) (string, error) {
	return d.toolCall(ctx, "list_agents", "system", "tool_call: Dispatch → system Lambda (agent.list)",
		map[string]any{}, false, func(out map[string]any) (string, error) {
			items, _ := out["items"].([]any)
			var names []string
			for _, it := range items {
				m, _ := it.(map[string]any)
				n, _ := m["name"].(string)
				names = append(names, n)
			}
			if !slices.Contains(names, "demo-agent") {
				return "", fmt.Errorf("the list does not hold demo-agent: %s", summarize(out, 300))
			}
			return fmt.Sprintf("%d agent(s): %s", len(names), strings.Join(names, ", ")), nil
		})
}

func (d *demo) callFFmpeg(ctx context.Context) (string, error) {
	args := map[string]any{
		"args": []string{"-i", "clip.mp4", "-ss", "1", "-frames:v", "1", "-vf", "scale=96:-1", "thumb.png"},
		"file": base64.StdEncoding.EncodeToString(d.clip),
	}
	d.detail("arguments: args %s, file: the video in base64 (%d bytes)", summarize(args["args"], 200), len(args["file"].(string)))
	return d.toolCall(ctx, "make_thumbnail", "integration", "tool_call: Dispatch → integration Lambda (ffmpeg, no shell)",
		args, false, func(out map[string]any) (string, error) {
			b64, _ := out["fileoutput"].(string)
			png, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				return "", fmt.Errorf("fileoutput is not base64: %v", err)
			}
			w, h, err := pngSize(png)
			if err != nil {
				return "", err
			}
			if w != 96 || h != 72 || out["mime_type"] != "image/png" {
				return "", fmt.Errorf("want a 96x72 image/png, got %dx%d %v", w, h, out["mime_type"])
			}
			return fmt.Sprintf("thumb.png: a %dx%d %s of %d bytes, from the video's frame at 1 s", w, h, out["mime_type"], len(png)), nil
		})
}

func (d *demo) callFunction(ctx context.Context) (string, error) {
	start := time.Now()
	x, err := d.api(ctx, "POST", "/tool-calls", map[string]any{"agent_id": d.agentID, "task_id": nil, "session_id": nil,
		"tool": "ask_human", "arguments": map[string]any{"question": "Ship it?"}}, 202)
	if err != nil {
		return "", err
	}
	id, _ := x["execution_id"].(string)
	d.executions = append(d.executions, id)
	d.detail("POST /tool-calls → 202, execution %s", id)
	waiting, err := d.waitStatus(ctx, id, "awaiting_input")
	if err != nil {
		return "", err
	}
	pending, _ := waiting["pending_calls"].([]any)
	if len(pending) != 1 {
		return "", fmt.Errorf("execution %s is awaiting input with %d pending calls, want 1", id, len(pending))
	}
	token, _ := pending[0].(map[string]any)["task_token"].(string)
	d.detail("execution %s is awaiting_input: the function call waits for its client (GET /calls?status=pending lists it)", id)
	cli := []string{"aws", "stepfunctions", "send-task-success", "--endpoint-url", d.endpoints["stepfunctions"],
		"--task-token", token, "--task-output", `{"answer":"yes, ship it"}`}
	d.detail("the client answers with the AWS CLI:\n  %s", shellQuote(cli))
	cmd := exec.CommandContext(ctx, cli[0], cli[1:]...)
	cmd.Env = d.environ()
	stop := d.progress("the AWS CLI is starting (python)", nil)
	out, err := cmd.CombinedOutput()
	stop()
	if err != nil {
		return "", fmt.Errorf("aws stepfunctions send-task-success: %v: %s", err, out)
	}
	done, err := d.waitStatus(ctx, id, "succeeded")
	if err != nil {
		return "", err
	}
	res, err := d.output(ctx, done)
	if err != nil {
		return "", err
	}
	if res["answer"] != "yes, ship it" {
		return "", fmt.Errorf("the tool's output is %s, want the client's answer", summarize(res, 200))
	}
	result := summarize(res, 100) + " (the client's task output)"
	d.rows = append(d.rows, row{"ask_human", "function", "tool_call: Dispatch → function Lambda (waitForTaskToken) ⏸ send-task-success → settle (status-change event)", result, time.Since(start)})
	return "ask_human → " + result, nil
}

// scriptReply is the content of the script's reply in turn i, which a chat's answer must carry.
func scriptReply(i int) (string, error) {
	var s struct {
		Turns []struct {
			Reply *struct {
				Content string `json:"content"`
			} `json:"reply"`
		} `json:"turns"`
	}
	if err := json.Unmarshal(modelScript, &s); err != nil {
		return "", fmt.Errorf("script.json: %w", err)
	}
	if i >= len(s.Turns) || s.Turns[i].Reply == nil {
		return "", fmt.Errorf("script.json has no reply in turn %d", i)
	}
	return s.Turns[i].Reply.Content, nil
}

// chat posts one chat request in the demo's session and checks the choice's finish reason.
func (d *demo) chat(ctx context.Context, messages []map[string]any, finish string) (map[string]any, map[string]any, error) {
	resp, err := d.api(ctx, "POST", "/sessions/"+d.sessID+"/chat", map[string]any{"messages": messages, "auto_run_tools": true}, 200)
	if err != nil {
		return nil, nil, err
	}
	if resp["scripted"] != true {
		return nil, nil, fmt.Errorf("the answer is not marked scripted: %s", summarize(resp, 300))
	}
	choices, _ := resp["choices"].([]any)
	if len(choices) != 1 {
		return nil, nil, fmt.Errorf("the answer has %d choices, want 1", len(choices))
	}
	c, _ := choices[0].(map[string]any)
	if c["finish_reason"] != finish {
		return nil, nil, fmt.Errorf("finish_reason %v, want %s: %s", c["finish_reason"], finish, summarize(resp, 400))
	}
	msg, _ := c["message"].(map[string]any)
	return resp, msg, nil
}

func (d *demo) chatTools(ctx context.Context) (string, error) {
	start := time.Now()
	hits := d.weatherHits.Load()
	ask := "What is the weather in Lisbon? Email it to ops@example.com."
	d.detail("user: %s", ask)
	resp, msg, err := d.chat(ctx, []map[string]any{{"role": "user", "content": ask}}, "stop")
	if err != nil {
		return "", err
	}
	results, _ := resp["tool_results"].([]any)
	var ran []string
	for _, r := range results {
		m, _ := r.(map[string]any)
		if m["error"] != nil {
			return "", fmt.Errorf("sinew ran %v and it failed: %s", m["name"], summarize(m["error"], 300))
		}
		ran = append(ran, fmt.Sprint(m["name"]))
		out := m["output"]
		if o, ok := out.(map[string]any); ok && o["json"] != nil {
			out = map[string]any{"status_code": o["status_code"], "json": o["json"]} // not the body again in base64
		}
		d.detail("sinew ran %v (%v): %s", m["name"], m["type"], summarize(out, 110))
	}
	if len(ran) != 2 {
		return "", fmt.Errorf("sinew ran %d tools (%v), want weather and send_email", len(ran), ran)
	}
	if d.weatherHits.Load() != hits+1 {
		return "", fmt.Errorf("the weather API served %d requests in this chat, want 1", d.weatherHits.Load()-hits)
	}
	want, err := scriptReply(2)
	if err != nil {
		return "", err
	}
	if msg["content"] != want {
		return "", fmt.Errorf("the model answered %q, want the script's %q", msg["content"], want)
	}
	d.detail("model: %s", msg["content"])
	arrived, err := d.checkMail()
	if err != nil {
		return "", err
	}
	d.detail("the SMTP server received: %s", arrived)
	d.rows = append(d.rows, row{"chat 1", "chat", "chat Lambda: model → apicall Lambda (weather) → model → integration Lambda (email → SMTP) → model", fmt.Sprint(msg["content"]), time.Since(start)})
	return "the model called weather and send_email through sinew, and answered; the email arrived", nil
}

// checkMail checks the one message the SMTP server received and describes it.
func (d *demo) checkMail() (string, error) {
	msgs := d.mail.Messages()
	if len(msgs) != 1 {
		return "", fmt.Errorf("the SMTP server received %d messages, want 1", len(msgs))
	}
	m := msgs[0]
	if !m.TLS || m.User != smtpUser || m.From != "demo@example.com" || len(m.To) != 1 || m.To[0] != "ops@example.com" {
		return "", fmt.Errorf("the message arrived with TLS=%v user=%q from %q to %v; want TLS, user %s, demo@example.com to ops@example.com", m.TLS, m.User, m.From, m.To, smtpUser)
	}
	parsed, err := mail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		return "", fmt.Errorf("the arrived message does not parse: %w", err)
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(parsed.Header.Get("Subject"))
	if err != nil {
		return "", fmt.Errorf("the subject: %w", err)
	}
	var body []byte
	if strings.EqualFold(parsed.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
		body, err = io.ReadAll(quotedprintable.NewReader(parsed.Body))
	} else {
		body, err = io.ReadAll(parsed.Body)
	}
	if err != nil {
		return "", fmt.Errorf("the body: %w", err)
	}
	if subject != "Weather in Lisbon" || !strings.Contains(string(body), "Lisbon: 21.5 °C, clear sky.") {
		return "", fmt.Errorf("the message says %q / %q, want the model's subject and body", subject, body)
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(body)), "\n")
	return fmt.Sprintf("from %s to %s over STARTTLS as %s, subject %q, body %q…", m.From, m.To[0], m.User, subject, strings.TrimSpace(first)), nil
}

func (d *demo) chatFunction(ctx context.Context) (string, error) {
	start := time.Now()
	ask := "Can we ship the release today?"
	d.detail("user: %s", ask)
	resp, msg, err := d.chat(ctx, []map[string]any{{"role": "user", "content": ask}}, "tool_calls")
	if err != nil {
		return "", err
	}
	pending, _ := resp["pending_calls"].([]any)
	if len(pending) != 1 {
		return "", fmt.Errorf("the answer has %d pending calls, want 1: %s", len(pending), summarize(resp, 400))
	}
	p, _ := pending[0].(map[string]any)
	if p["tool"] != "ask_human" {
		return "", fmt.Errorf("the pending call is for %v, want ask_human", p["tool"])
	}
	mcid, _ := p["model_call_id"].(string)
	d.detail("model: %s → calls ask_human %s", msg["content"], summarize(p["arguments"], 100))
	d.detail("sinew hands it back: pending_calls [{call_id %v, model_call_id %s, tool ask_human}]", p["call_id"], mcid)
	// A request that leaves the call unanswered is refused, and nothing is lost.
	if _, err := d.api(ctx, "POST", "/sessions/"+d.sessID+"/chat", map[string]any{
		"messages": []map[string]any{{"role": "user", "content": "Well?"}}, "auto_run_tools": true}, 422); err != nil {
		return "", fmt.Errorf("a chat that leaves the pending call unanswered: %w", err)
	}
	d.detail("a next request that does not answer it is refused: 422")
	answer := "yes, ship it"
	d.detail("client: {\"role\": \"tool\", \"tool_call_id\": %q, \"content\": %q}", mcid, answer)
	_, msg, err = d.chat(ctx, []map[string]any{{"role": "tool", "tool_call_id": mcid, "content": answer}}, "stop")
	if err != nil {
		return "", err
	}
	want, err := scriptReply(4)
	if err != nil {
		return "", err
	}
	if msg["content"] != want {
		return "", fmt.Errorf("the model answered %q, want the script's %q", msg["content"], want)
	}
	d.detail("model: %s", msg["content"])
	d.rows = append(d.rows, row{"chat 2", "chat", "chat Lambda: model → pending ask_human ⏸ the client's tool message → model", fmt.Sprint(msg["content"]), time.Since(start)})
	return "the function call went to the client and its answer finished the turn", nil
}
