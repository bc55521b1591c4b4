package mcpserver_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"sinew/internal/config"
	"sinew/internal/testenv/ddblocal"
	"sinew/internal/testenv/localmode"
)

// Local mode (./infra/local) started once for the package, with a loopback service for the
// api_call tools, and one agent of developer A with a tool of each type.

var (
	envOnce sync.Once
	envVal  *testEnv
	envErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if envVal != nil {
		envVal.proc.Kill()
		_ = os.RemoveAll(envVal.tmp)
	}
	os.Exit(code)
}

// testEnv is the running local mode and what the tests made in it.
type testEnv struct {
	proc    *localmode.Proc
	tmp     string
	bin     string
	base    string // the HTTP API
	svcAddr string
	// the loopback service's counters
	charges   atomic.Int64 // POST /charge: the side effect the idempotency tests count
	goodKeys  atomic.Int64 // weather requests that carried the setup key
	slowGate  chan struct{}
	slowOnce  sync.Once
	secrets   []string // setup values: never in an MCP answer or the log
	weatherPW string
	echoKey   string

	agentID, sessionID string
	answers            lockedBuffer // every raw MCP answer the Go client received
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(s)
	l.b.WriteByte('\n')
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The MCP wait in these tests: long enough for a call on a busy machine, short enough that the
// slow tool outlives it without a long test.
const testWait = "5"

func env(t testing.TB) *testEnv {
	t.Helper()
	envOnce.Do(func() { envVal, envErr = startEnv() })
	if envErr != nil {
		t.Fatal(envErr)
	}
	return envVal
}

func secret(prefix string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

func startEnv() (*testEnv, error) {
	root, err := filepath.Abs("../..")
	if err != nil {
		return nil, err
	}
	e := &testEnv{slowGate: make(chan struct{}), weatherPW: secret("weather-key"), echoKey: secret("echo-setup")}
	e.secrets = []string{e.weatherPW, e.echoKey}
	if err := e.startService(); err != nil {
		return nil, err
	}
	if e.tmp, err = os.MkdirTemp("", "sinew-mcp-"); err != nil {
		return nil, err
	}
	if e.bin, err = localmode.Build(root, filepath.Join(e.tmp, "local")); err != nil {
		return nil, err
	}
	var environ []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, ddblocal.EnvEndpoint+"=") {
			environ = append(environ, kv)
		}
	}
	environ = append(environ, config.EnvModel+"=scripted:"+filepath.Join(root, "events/models/echo_demo.json"),
		config.EnvAPICallAllow+"="+e.svcAddr, config.EnvMCPWait+"="+testWait)
	if e.proc, err = localmode.Start(e.bin, filepath.Join(e.tmp, "data"), []string{"--in-memory", "--root", root}, environ); err != nil {
		return nil, err
	}
	e.base = e.proc.Endpoints["http"]
	if err := e.makeAgent(); err != nil {
		e.proc.Kill()
		return nil, fmt.Errorf("making the agent: %w", err)
	}
	return e, nil
}

// startService is the api_call tools' loopback service.
func (e *testEnv) startService() error {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return err
	}
	e.svcAddr = ln.Addr().String()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /weather/{city}", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != e.weatherPW {
			http.Error(w, `{"error":"wrong key"}`, http.StatusUnauthorized)
			return
		}
		e.goodKeys.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"city":%q,"temperature":21.5}`, r.PathValue("city"))
	})
	mux.HandleFunc("POST /charge", func(w http.ResponseWriter, r *http.Request) {
		n := e.charges.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"charge":%d}`, n)
	})
	mux.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-e.slowGate:
		case <-time.After(2 * time.Minute):
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"slow":"done"}`)
	})
	go func() { _ = (&http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}).Serve(ln) }()
	return nil
}

func (e *testEnv) releaseSlow() { e.slowOnce.Do(func() { close(e.slowGate) }) }

// makeAgent makes developer A's agent: setup in its metadata, a tool of each type, and a session
// whose metadata overrides echo's arguments.
func (e *testEnv) makeAgent() error {
	agent, err := e.api("dev-a", "POST", "/agents", map[string]any{"name": "mcp-agent", "metadata": map[string]any{
		"x-integration-setup": map[string]any{"echo": map[string]any{"api_key": e.echoKey}},
		"x-integration-args":  map[string]any{"echo": map[string]any{"source": "agent"}},
		"x-api_call-setup":    map[string]any{"weather": map[string]any{"headers": map[string]any{"X-Api-Key": e.weatherPW}}},
	}}, 201)
	if err != nil {
		return err
	}
	e.agentID, _ = agent["id"].(string)
	city := map[string]any{"type": "object", "description": "the URL's path parameters: {\"city\": ...}"}
	tools := []map[string]any{
		{"name": "echo", "type": "integration", "description": "echoes its merged arguments",
			"integration": map[string]any{"provider": "dummy", "arguments": map[string]any{"from_definition": true}}},
		{"name": "weather", "type": "api_call", "description": "the weather in a city",
			"api_call": map[string]any{"method": "GET", "url": "http://" + e.svcAddr + "/weather/{city}",
				"params_schema": map[string]any{"type": "object", "properties": map[string]any{"path": city}, "required": []any{"path"}}}},
		{"name": "charge", "type": "api_call", "description": "a call with a side effect",
			"api_call": map[string]any{"method": "POST", "url": "http://" + e.svcAddr + "/charge"}},
		{"name": "slow", "type": "api_call", "description": "answers when the test lets it",
			"api_call": map[string]any{"method": "GET", "url": "http://" + e.svcAddr + "/slow", "timeout": 120}},
		{"name": "get_agent", "type": "system", "system": map[string]any{"resource": "agent", "operation": "get"}},
		{"name": "list_agents", "type": "system", "system": map[string]any{"resource": "agent", "operation": "list", "arguments": map[string]any{"limit": 5}}},
		{"name": "ask_human", "type": "function", "description": "the client's own",
			"function": map[string]any{"parameters": map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}}},
	}
	for _, tl := range tools {
		if _, err := e.api("dev-a", "POST", "/agents/"+e.agentID+"/tools", tl, 201); err != nil {
			return err
		}
	}
	sess, err := e.api("dev-a", "POST", "/sessions", map[string]any{"agent_id": e.agentID,
		"metadata": map[string]any{"x-integration-args": map[string]any{"echo": map[string]any{"source": "session"}}}}, 201)
	if err != nil {
		return err
	}
	e.sessionID, _ = sess["id"].(string)
	return nil
}

var (
	tokMu  sync.Mutex
	tokens = map[string]string{}
)

// token is a JWT for dev from local mode's own signer.
func (e *testEnv) token(dev string) (string, error) {
	tokMu.Lock()
	defer tokMu.Unlock()
	if tok, ok := tokens[dev]; ok {
		return tok, nil
	}
	out, err := exec.Command(e.bin, "token", "--dir", e.proc.Dir, dev).Output()
	if err != nil {
		return "", fmt.Errorf("local token %s: %w", dev, err)
	}
	tokens[dev] = strings.TrimSpace(string(out))
	return tokens[dev], nil
}

// api calls the HTTP API as dev and decodes its JSON object answer, checking the status.
func (e *testEnv) api(dev, method, path string, body any, want int, hdr ...string) (map[string]any, error) {
	tok, err := e.token(dev)
	if err != nil {
		return nil, err
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return nil, fmt.Errorf("%s %s answered %d, want %d: %s", method, path, resp.StatusCode, want, raw)
	}
	out := map[string]any{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			return nil, fmt.Errorf("%s %s: not a JSON object: %s", method, path, raw)
		}
	}
	return out, nil
}

// clientTransport adds the bearer token (and headers) to every request and keeps each answer.
type clientTransport struct {
	tok     string
	headers map[string]string
	answers *lockedBuffer
}

func (c *clientTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+c.tok)
	for k, v := range c.headers {
		r.Header.Set(k, v)
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || c.answers == nil {
		return resp, err
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	c.answers.add(fmt.Sprintf("%s %s -> %d %v %s", r.Method, r.URL.Path, resp.StatusCode, resp.Header, raw))
	resp.Body = io.NopCloser(bytes.NewReader(raw))
	return resp, nil
}

// connect opens an MCP session with the official Go SDK's client, as dev, on path.
func (e *testEnv) connect(ctx context.Context, dev, path string, headers map[string]string) (*mcp.ClientSession, error) {
	tok, err := e.token(dev)
	if err != nil {
		return nil, err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "sinew-test", Version: "1"}, nil)
	return client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.base + path, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: &clientTransport{tok: tok, headers: headers, answers: &e.answers}}}, nil)
}
