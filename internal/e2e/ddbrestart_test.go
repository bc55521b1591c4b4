package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"sinew/internal/testenv/ddblocal"
	"sinew/internal/workflow"
)

// gateServer is an api_call target that holds every request until open is closed, so calls are
// in flight when the test wants them to be.
type gateServer struct {
	*httptest.Server
	open chan struct{}
	mu   sync.Mutex
	hits map[string]int
}

func newGateServer(t testing.TB) *gateServer {
	g := &gateServer{open: make(chan struct{}), hits: map[string]int{}}
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := strings.TrimPrefix(r.URL.Path, "/hit/")
		g.mu.Lock()
		g.hits[id]++
		n := g.hits[id]
		g.mu.Unlock()
		select {
		case <-g.open:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"call_id": id, "n": n})
	}))
	t.Cleanup(g.Close)
	return g
}

func (g *gateServer) total() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, v := range g.hits {
		n += v
	}
	return n
}

// TestDynamoDBRestart: DynamoDB Local (its data on disk, -dbPath) is killed while tool_call
// executions are in flight (api_calls waiting on their server, then others started while it is
// down) and started again. The executions fail transiently while it is down, their Tasks are
// retried within a budget longer than the restart, and every one SUCCEEDS with its result; what
// was stored before (the agent, its tools, an ended execution's record) is still there.
func TestDynamoDBRestart(t *testing.T) {
	ctx := context.Background()
	ddb, err := ddblocal.StartWith(ctx, ddblocal.Options{DBPath: t.TempDir(), Own: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ddb.Close() })
	gate := newGateServer(t)
	hit := newHitServer(t)
	p := startLocal(t, t.TempDir(), []string{ddblocal.EnvEndpoint + "=" + ddb.Endpoint(),
		"SINEW_APICALL_ALLOW=" + gate.Listener.Addr().String() + "," + hit.addr()})
	if p.Endpoints["dynamodb"] != ddb.Endpoint() {
		t.Fatalf("local mode uses DynamoDB at %s, want the test's own %s", p.Endpoints["dynamodb"], ddb.Endpoint())
	}
	dev := "dev-ddb-restart"
	a := p.apiFor(t, dev)
	c := p.sfnClient()
	agent := a.must(t, "POST", "/agents", map[string]any{"name": "restart-agent"}, 201)["id"].(string)
	for _, tl := range append(loadTools(hit.addr()),
		map[string]any{"name": "held", "type": "api_call", "api_call": map[string]any{"method": "GET", "url": gate.URL + "/hit/{id}"}}) {
		a.must(t, "POST", "/agents/"+agent+"/tools", tl, 201)
	}
	start := func(name, tool string, args any) {
		t.Helper()
		if _, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(toolCallARN), Name: aws.String(name),
			Input: aws.String(toolCallInput(dev, agent, tool, args))}); err != nil {
			t.Fatalf("StartExecution %s: %v", name, err)
		}
	}
	// One execution ends before the outage: its record must survive it.
	start("before", "echo", map[string]any{"n": -1})
	if d := waitEnded(t, c, "before", time.Minute); d.Status != types.ExecutionStatusSucceeded {
		t.Fatalf("before: %s %s", d.Status, aws.ToString(d.Cause))
	}

	// In flight when DynamoDB goes: api_calls held by their server.
	const held = 4
	for i := range held {
		name := fmt.Sprintf("held-%d", i)
		start(name, "held", map[string]any{"path": map[string]any{"id": workflow.CallIDFor(dev, name)}})
	}
	deadline := time.Now().Add(time.Minute)
	for gate.total() < held {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d held calls reached their server", gate.total(), held)
		}
		time.Sleep(20 * time.Millisecond)
	}

	down := time.Now()
	if err := ddb.Stop(); err != nil {
		t.Fatal(err)
	}
	// Started while it is down: each type's first Lambda (Prepare) fails until it is back.
	type started struct{ name, kind string }
	var during []started
	for i, kind := range []string{"integration", "api_call", "system", "function", "integration", "api_call", "system", "function"} {
		name := fmt.Sprintf("during-%d", i)
		switch kind {
		case "integration":
			start(name, "echo", map[string]any{"n": i})
		case "api_call":
			start(name, "hit", map[string]any{"path": map[string]any{"id": workflow.CallIDFor(dev, name)}})
		case "system":
			start(name, "get_agent", map[string]any{"agent_id": agent})
		case "function":
			start(name, "ask", map[string]any{"n": i})
		}
		during = append(during, started{name, kind})
	}
	// The held calls get their answers now, while the store is down: Settle fails and is retried.
	close(gate.open)
	time.Sleep(2 * time.Second)
	if err := ddb.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	outage := time.Since(down)
	t.Logf("DynamoDB Local was down for %v (stop, 2 s, restart until it answered)", outage.Round(time.Millisecond))

	// The function calls started during the outage wait for their client once it is back; the
	// client answers through the HTTP route.
	for i, s := range during {
		if s.kind != "function" {
			continue
		}
		callID := workflow.CallIDFor(dev, s.name)
		deadline := time.Now().Add(5 * time.Minute)
		for {
			code, body, err := a.do(ctx, "POST", "/executions/"+s.name+"/calls/"+callID+"/result", map[string]any{"output": map[string]any{"answer": i}})
			if err == nil && code == 200 {
				break
			}
			if d, derr := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(execARN(s.name))}); derr == nil && d.Status != types.ExecutionStatusRunning {
				break // ended without waiting: checked below
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never took its answer: %d %v %v", s.name, code, body, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}

	// Every execution SUCCEEDS with its own result, and the outage shows as retried failures.
	retried := 0
	check := func(name, kind string, want func(res map[string]any) bool) {
		t.Helper()
		d := waitEnded(t, c, name, 5*time.Minute)
		h := historyOf(t, c, name)
		if d.Status != types.ExecutionStatusSucceeded {
			t.Errorf("%s (%s): %s %s %s\n%v", name, kind, d.Status, aws.ToString(d.Error), aws.ToString(d.Cause), h)
			return
		}
		out := decodeOutput(t, d)
		res, _ := out["output"].(map[string]any)
		if out["id"] != workflow.CallIDFor(dev, name) || out["error"] != nil || res == nil || !want(res) {
			t.Errorf("%s (%s): output %s\n%v", name, kind, aws.ToString(d.Output), h)
		}
		if n := count(h, "TaskFailed Sinew.Transient"); n > 0 {
			retried++
			span, _ := failedSpan(t, c, name)
			t.Logf("%s (%s): %d transient failures retried over %v", name, kind, n, span.Round(time.Millisecond))
		}
	}
	for i := range held {
		name := fmt.Sprintf("held-%d", i)
		check(name, "api_call in flight", func(res map[string]any) bool {
			body, _ := res["json"].(map[string]any)
			return body["call_id"] == workflow.CallIDFor(dev, name) && body["n"] == float64(1)
		})
	}
	for i, s := range during {
		switch s.kind {
		case "integration":
			check(s.name, s.kind, func(res map[string]any) bool { return res["n"] == float64(i) })
		case "api_call":
			check(s.name, s.kind, func(res map[string]any) bool {
				body, _ := res["json"].(map[string]any)
				return body["n"] == float64(1) && hit.count(workflow.CallIDFor(dev, s.name)) == 1
			})
		case "system":
			check(s.name, s.kind, func(res map[string]any) bool { return res["id"] == agent })
		case "function":
			check(s.name, s.kind, func(res map[string]any) bool { return res["answer"] == float64(i) })
		}
	}
	if retried == 0 {
		t.Error("no execution's history shows a transient failure: the outage was not seen")
	}
	// Nothing stored before the outage is lost.
	if got := a.must(t, "GET", "/agents/"+agent, nil, 200); got["name"] != "restart-agent" {
		t.Errorf("the agent after the restart: %v", got)
	}
	if tools, _ := a.must(t, "GET", "/agents/"+agent+"/tools?limit=100", nil, 200)["items"].([]any); len(tools) != 5 {
		t.Errorf("the agent has %d tools after the restart, want 5", len(tools))
	}
	if rec := a.must(t, "GET", "/executions/before", nil, 200); rec["status"] != "succeeded" {
		t.Errorf("the record of the execution that ended before the outage: %v", rec)
	}
	for _, s := range append(during, started{"held-0", "api_call"}) {
		if rec := a.must(t, "GET", "/executions/"+s.name, nil, 200); rec["status"] != "succeeded" {
			t.Errorf("sinew's record of %s: %v", s.name, rec)
		}
	}
}
