package taskexec_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// flow is one SDK method's call as infra/scripts/julep-flows.mjs reports it.
type flow struct {
	Name    string `json:"name"`
	OK      bool   `json:"ok"`
	Skipped bool   `json:"skipped"`
	Status  *int   `json:"status"`
	Error   string `json:"error"`
}

// TestJulepSDKFlows calls every resource method of Julep's own TypeScript SDK against local mode
// and reports how many work ("Julep's own SDK runs N of its M flows") and why the others do not.
// It fails when the SDK has a method the script does not call, when a call gets a 5xx or no HTTP
// answer at all (an unsupported route must be a clear 4xx), or when a flow sinew serves fails.
func TestJulepSDKFlows(t *testing.T) {
	l := startLocalModel(t, "flows-model.json", "", "--in-memory")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not on PATH: install Node 20 (apt-get install nodejs, or make deps)")
	}
	root, _ := filepath.Abs("../../..")
	if _, err := os.Stat(filepath.Join(root, "infra/node_modules/@julep/sdk/package.json")); err != nil {
		t.Fatal("Julep's TypeScript SDK is not installed: run make deps (npm ci in infra/)")
	}
	cmd := exec.Command(node, filepath.Join(root, "infra/scripts/julep-flows.mjs"), l.base, l.tok)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	var out struct {
		Methods []string `json:"methods"`
		Flows   []flow   `json:"flows"`
	}
	if jerr := json.Unmarshal(raw, &out); jerr != nil {
		t.Fatalf("the SDK script: %v; stdout %s; stderr %s", err, raw, stderr.String())
	}
	called := map[string]flow{}
	for _, f := range out.Flows {
		called[f.Name] = f
	}
	n := 0
	for _, m := range out.Methods {
		f, ok := called[m]
		switch {
		case !ok:
			t.Errorf("%s: the SDK has this method and the script does not call it", m)
		case f.OK:
			n++
		case f.Skipped:
			t.Logf("not served: %s: it needs what an earlier flow did not make (%s)", m, f.Error)
		case f.Status == nil:
			t.Errorf("%s: no HTTP answer: %s", m, f.Error)
		case *f.Status >= 500:
			t.Errorf("%s: %d, never a 5xx: %s", m, *f.Status, f.Error)
		default:
			t.Logf("not served: %s: %s", m, f.Error)
		}
	}
	t.Logf("Julep's own SDK runs %d of its %d flows", n, len(out.Methods))
	if n != len(servedFlows) {
		// internal/julep/README.md gives this count: a flow that starts or stops running belongs
		// in servedFlows and the README.
		t.Errorf("%d flows ran; servedFlows lists %d", n, len(servedFlows))
	}
	for _, m := range servedFlows {
		if f := called[m]; !f.OK {
			t.Errorf("%s, which sinew serves, failed: %v %s", m, f.Status, f.Error)
		}
	}
	if !slices.IsSorted(out.Methods) || len(out.Methods) < len(servedFlows) {
		t.Errorf("methods %v", out.Methods)
	}
}

// servedFlows are SDK methods sinew serves: each must succeed.
var servedFlows = []string{
	"agents.docs.create", "agents.docs.list", "agents.docs.search", "agents.docs.delete",
	"users.docs.create", "users.docs.list", "users.docs.search", "users.docs.delete", "sessions.list", "sessions.update",
	"healthz.check", "agents.create", "agents.get", "agents.update", "agents.reset", "agents.list",
	"agents.tools.create", "agents.tools.update", "agents.tools.reset", "agents.tools.list", "agents.tools.delete",
	"users.create", "users.get", "users.update", "users.reset", "users.list", "users.delete",
	"sessions.create", "sessions.get", "sessions.chat", "sessions.history", "sessions.delete",
	"tasks.create", "tasks.get", "tasks.list", "tasks.createOrUpdate",
	"executions.create", "executions.get", "executions.status.get", "executions.list", "executions.changeStatus",
	"executions.transitions.list", "executions.transitions.retrieve", "secrets.create", "secrets.list", "secrets.update", "secrets.delete",
	"agents.createOrUpdate", "users.createOrUpdate", "agents.listModels", "agents.delete",
	"agents.docs.bulkDelete", "users.docs.bulkDelete", "sessions.reset", "sessions.createOrUpdate",
}
