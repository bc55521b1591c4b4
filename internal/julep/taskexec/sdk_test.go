package taskexec_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sinew/internal/config"
	"sinew/internal/testenv/ddblocal"
	"sinew/internal/testenv/localmode"
)

// local is local mode running for one test, with a loopback service for api_call tools.
type local struct {
	t    *testing.T
	proc *localmode.Proc
	bin  string
	base string
	svc  string
	tok  string
}

func startLocal(t *testing.T, dataDir string, extra ...string) *local {
	t.Helper()
	return startLocalModel(t, "model.json", dataDir, extra...)
}

// startLocalModel is startLocal with the scripted model playing testdata/<model>.
func startLocalModel(t *testing.T, model, dataDir string, extra ...string) *local {
	t.Helper()
	root, _ := filepath.Abs("../../..")
	tmp := t.TempDir()
	bin, err := localmode.Build(root, filepath.Join(tmp, "local"))
	if err != nil {
		t.Fatal(err)
	}
	var environ []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, ddblocal.EnvEndpoint+"=") {
			environ = append(environ, kv)
		}
	}
	l := &local{t: t, bin: bin, svc: startService(t)}
	environ = append(environ, config.EnvModel+"=scripted:"+filepath.Join(root, "internal/julep/taskexec/testdata", model),
		config.EnvAPICallAllow+"="+l.svc)
	if dataDir == "" {
		dataDir = filepath.Join(tmp, "data")
	}
	l.proc, err = localmode.Start(bin, dataDir, append([]string{"--root", root}, extra...), environ)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.proc.Kill)
	t.Cleanup(func() {
		if t.Failed() {
			if d := os.Getenv("SINEW_TEST_LOG_DIR"); d != "" {
				_ = os.WriteFile(filepath.Join(d, strings.ReplaceAll(t.Name(), "/", "_")+"-"+filepath.Base(l.proc.Dir)+fmt.Sprint(time.Now().UnixNano())+".log"), []byte(l.proc.Stderr.String()), 0o600)
			}
			for _, line := range strings.Split(l.proc.Stderr.String(), "\n") {
				if strings.Contains(strings.ToLower(line), "error") {
					t.Log(line)
				}
			}
		}
	})
	l.base = l.proc.Endpoints["http"]
	out, err := exec.Command(bin, "token", "--dir", l.proc.Dir, "dev-julep").Output()
	if err != nil {
		t.Fatalf("local token: %v", err)
	}
	l.tok = strings.TrimSpace(string(out))
	return l
}

// startService is the api_call tools' loopback service: GET /weather/{city}.
func startService(t *testing.T) string {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /weather/{city}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"city":%q,"temperature":21.5}`, r.PathValue("city"))
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// api calls the HTTP API and decodes its JSON answer, checking the status.
func (l *local) api(method, path string, body any, want int) map[string]any {
	l.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, l.base+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+l.tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		l.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		l.t.Fatalf("%s %s: %d, want %d: %s", method, path, resp.StatusCode, want, raw)
	}
	out := map[string]any{}
	_ = json.Unmarshal(raw, &out)
	return out
}

// sdkOut is what infra/scripts/julep-tasks.mjs prints.
type sdkOut struct {
	Secret map[string]any `json:"secret"`
	Tasks  []sdkTask      `json:"tasks"`
}

type sdkTask struct {
	Name        string           `json:"name"`
	Task        map[string]any   `json:"task"`
	Create      map[string]any   `json:"create"`
	Run         map[string]any   `json:"run"`
	Waited      []map[string]any `json:"waited"`
	Execution   map[string]any   `json:"execution"`
	Transitions []map[string]any `json:"transitions"`
	Listed      []string         `json:"listed"`
}

// runSDK runs Julep's TypeScript SDK through spec's tasks.
func (l *local) runSDK(spec map[string]any) (sdkOut, string) {
	l.t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		l.t.Fatal("node is not on PATH: install Node 20 (apt-get install nodejs, or make deps)")
	}
	root, _ := filepath.Abs("../../..")
	if _, err := os.Stat(filepath.Join(root, "infra/node_modules/@julep/sdk/package.json")); err != nil {
		l.t.Fatal("Julep's TypeScript SDK is not installed: run make deps (npm ci in infra/)")
	}
	b, _ := json.Marshal(spec)
	cmd := exec.Command(node, filepath.Join(root, "infra/scripts/julep-tasks.mjs"), l.base, l.tok, string(b))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	var out sdkOut
	if jerr := json.Unmarshal(raw, &out); jerr != nil {
		l.t.Fatalf("the SDK script: %v; stdout %s; stderr %s; local mode's log: %s", err, raw, stderr.String(), l.proc.Stderr.String())
	}
	return out, string(raw)
}

func (l *local) makeAgent() string {
	return l.api("POST", "/agents", map[string]any{"name": "julep-tasks"}, 201)["id"].(string)
}

func steps(js string) []any {
	var v []any
	if err := json.Unmarshal([]byte(js), &v); err != nil {
		panic(err)
	}
	return v
}

func kinds(ts []map[string]any) string {
	var out []string
	for _, t := range ts {
		out = append(out, fmt.Sprint(t["type"]))
	}
	return strings.Join(out, ",")
}
