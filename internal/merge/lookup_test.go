package merge_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"sinew/internal/awscount"
	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/merge"
	"sinew/internal/store"
	"sinew/internal/store/seal"
	"sinew/internal/testenv/ddblocal"
	"sinew/internal/tool"
)

func TestMain(m *testing.M) { ddblocal.Main(m) }

type fixture struct {
	s                  *store.Store
	n                  *awscount.Counter
	agent, bareAgent   *store.Agent
	task, bareTask     *store.Task
	session, otherSess *store.Session
	tool, bareTool     *tool.Tool
	bareAgentTool      *tool.Tool
}

const dev = "dev-merge"

func newStore(tb testing.TB) (*store.Store, *awscount.Counter) {
	tb.Helper()
	n := &awscount.Counter{}
	db := ddblocal.Client(tb, func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, n.Register) })
	table := ddblocal.NewTable(tb, db)
	sl, err := seal.NewAESGCM(bytes.Repeat([]byte{1}, 32))
	if err != nil {
		tb.Fatal(err)
	}
	return store.New(db, table, sl), n
}

// newFixture stores an agent with metadata for tool "wx", a task and a session of it with their
// own entries, a task and an agent without any, and two stored integration tools.
func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	ctx := context.Background()
	s, n := newStore(tb)
	f := &fixture{s: s, n: n}
	var err error
	check := func() {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
	}
	f.agent, err = s.CreateAgent(ctx, dev, store.Agent{Name: "a", Metadata: obj{
		merge.KeyIntegrationArgs:  obj{"wx": agentArgs, "other": obj{"k": "other-tool"}},
		merge.KeyIntegrationSetup: obj{"wx": agentSet},
	}})
	check()
	f.bareAgent, err = s.CreateAgent(ctx, dev, store.Agent{Name: "bare"})
	check()
	f.task, _, err = s.CreateTask(ctx, dev, f.agent.ID, store.Task{Name: "t", Metadata: obj{
		merge.KeyIntegrationArgs:  obj{"wx": scopeArgs},
		merge.KeyIntegrationSetup: obj{"wx": scopeSet},
	}}, nil)
	check()
	f.bareTask, _, err = s.CreateTask(ctx, dev, f.agent.ID, store.Task{Name: "bare"}, nil)
	check()
	f.session, err = s.CreateSession(ctx, dev, store.Session{AgentID: f.agent.ID, Metadata: obj{
		merge.KeyIntegrationSetup: obj{"wx": scopeSet},
	}})
	check()
	f.otherSess, err = s.CreateSession(ctx, dev, store.Session{AgentID: f.bareAgent.ID})
	check()
	f.tool, err = s.CreateTool(ctx, dev, store.Owner{Kind: store.OwnerAgent, ID: f.agent.ID}, tool.Tool{
		Name: "wx", Type: tool.TypeIntegration,
		Integration: &tool.IntegrationDef{Provider: "dummy", Arguments: defArgs, Setup: toolSetup},
	})
	check()
	f.bareTool, err = s.CreateTool(ctx, dev, store.Owner{Kind: store.OwnerAgent, ID: f.agent.ID}, tool.Tool{
		Name: "plain", Type: tool.TypeIntegration, Integration: &tool.IntegrationDef{Provider: "dummy"},
	})
	check()
	f.bareAgentTool, err = s.CreateTool(ctx, dev, store.Owner{Kind: store.OwnerAgent, ID: f.bareAgent.ID}, tool.Tool{
		Name: "wx", Type: tool.TypeIntegration,
		Integration: &tool.IntegrationDef{Provider: "dummy", Arguments: defArgs, Setup: toolSetup},
	})
	check()
	n.Reset()
	return f
}

// TestLookupAndMerge runs the whole merge of an integration call, from DynamoDB Local: the lookup
// in one BatchGetItem, then the pure merge, with each level missing in turn.
func TestLookupAndMerge(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name                string
		ref                 store.MergeRef
		call, def           obj
		wantArgs, wantSetup obj
	}{
		{
			name: "agent and task: the task's entry replaces the agent's",
			ref:  store.MergeRef{AgentID: f.agent.ID, TaskID: f.task.ID, Tool: "wx", ToolID: f.tool.ID},
			call: callArgs, def: defArgs,
			wantArgs:  obj{"k": "scope", "call_only": int64(1), "def_only": int64(2), "scope_only": int64(4)},
			wantSetup: obj{"key": "scope-setup", "tool_only": "t", "scope_only": "s"},
		},
		{
			name: "agent and session: the session has setup only, the agent's args stay",
			ref:  store.MergeRef{AgentID: f.agent.ID, SessionID: f.session.ID, Tool: "wx", ToolID: f.tool.ID},
			call: callArgs, def: defArgs,
			wantArgs:  obj{"k": "agent", "call_only": int64(1), "def_only": int64(2), "agent_only": int64(3)},
			wantSetup: obj{"key": "scope-setup", "tool_only": "t", "scope_only": "s"},
		},
		{
			name: "task without metadata: the agent's entries",
			ref:  store.MergeRef{AgentID: f.agent.ID, TaskID: f.bareTask.ID, Tool: "wx", ToolID: f.tool.ID},
			call: callArgs, def: defArgs,
			wantArgs:  obj{"k": "agent", "call_only": int64(1), "def_only": int64(2), "agent_only": int64(3)},
			wantSetup: obj{"key": "agent-setup", "tool_only": "t", "agent_only": "a"},
		},
		{
			name: "no task or session",
			ref:  store.MergeRef{AgentID: f.agent.ID, Tool: "wx", ToolID: f.tool.ID},
			call: callArgs, def: defArgs,
			wantArgs:  obj{"k": "agent", "call_only": int64(1), "def_only": int64(2), "agent_only": int64(3)},
			wantSetup: obj{"key": "agent-setup", "tool_only": "t", "agent_only": "a"},
		},
		{
			name: "agent without metadata: definition > call",
			ref:  store.MergeRef{AgentID: f.bareAgent.ID, SessionID: f.otherSess.ID, Tool: "wx", ToolID: f.bareAgentTool.ID},
			call: callArgs, def: defArgs,
			wantArgs:  obj{"k": "definition", "call_only": int64(1), "def_only": int64(2)},
			wantSetup: toolSetup,
		},
		{
			name:      "stored tool without setup",
			ref:       store.MergeRef{AgentID: f.agent.ID, Tool: "wx", ToolID: f.bareTool.ID},
			call:      callArgs,
			wantArgs:  obj{"k": "agent", "call_only": int64(1), "agent_only": int64(3)},
			wantSetup: agentSet,
		},
		{
			name:      "inline tool (no stored setup)",
			ref:       store.MergeRef{AgentID: f.agent.ID, TaskID: f.task.ID, Tool: "wx"},
			call:      callArgs,
			wantArgs:  obj{"k": "scope", "call_only": int64(1), "scope_only": int64(4)},
			wantSetup: scopeSet,
		},
		{
			name: "a tool no metadata names",
			ref:  store.MergeRef{AgentID: f.agent.ID, TaskID: f.task.ID, Tool: "nobody"},
			call: callArgs, def: defArgs,
			wantArgs:  obj{"k": "definition", "call_only": int64(1), "def_only": int64(2)},
			wantSetup: obj{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f.n.Reset()
			src, err := f.s.MergeSources(context.Background(), dev, tc.ref)
			if err != nil {
				t.Fatal(err)
			}
			if ops := f.n.Ops(); f.n.Total() != 1 || ops["BatchGetItem"] != 1 {
				t.Errorf("the lookup sent %v, want one BatchGetItem", ops)
			}
			args, setup := merge.Integration(tc.call, &tool.IntegrationDef{Provider: "dummy", Arguments: tc.def}, *src)
			if !jsonv.Equal(args, tc.wantArgs) {
				t.Errorf("arguments %s, want %s", jsonv.EncodeString(args), jsonv.EncodeString(tc.wantArgs))
			}
			if !jsonv.Equal(setup, tc.wantSetup) {
				t.Errorf("setup %s, want %s", jsonv.EncodeString(setup), jsonv.EncodeString(tc.wantSetup))
			}
		})
	}
}

func TestLookupRefusals(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name  string
		dev   string
		ref   store.MergeRef
		kind  fault.Kind
		field string
	}{
		{"task and session both", dev, store.MergeRef{AgentID: f.agent.ID, TaskID: f.task.ID, SessionID: f.session.ID, Tool: "wx"}, fault.InvalidInput, "session_id"},
		{"bad tool name", dev, store.MergeRef{AgentID: f.agent.ID, Tool: "no spaces"}, fault.InvalidInput, "tool"},
		{"bad agent id", dev, store.MergeRef{AgentID: "x", Tool: "wx"}, fault.InvalidInput, "agent_id"},
		{"unknown agent", dev, store.MergeRef{AgentID: f.task.ID, Tool: "wx"}, fault.NotFound, ""},
		{"task of another agent", dev, store.MergeRef{AgentID: f.bareAgent.ID, TaskID: f.task.ID, Tool: "wx"}, fault.NotFound, ""},
		{"session of another agent", dev, store.MergeRef{AgentID: f.agent.ID, SessionID: f.otherSess.ID, Tool: "wx"}, fault.NotFound, ""},
		{"stored tool of another agent", dev, store.MergeRef{AgentID: f.bareAgent.ID, Tool: "wx", ToolID: f.tool.ID}, fault.NotFound, ""},
		{"another developer", "dev-other", store.MergeRef{AgentID: f.agent.ID, Tool: "wx", ToolID: f.tool.ID}, fault.NotFound, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.s.MergeSources(context.Background(), tc.dev, tc.ref)
			if !fault.Is(err, tc.kind) || fault.FieldOf(err) != tc.field {
				t.Fatalf("error %v (kind %s, field %q), want %s on %q", err, fault.KindOf(err), fault.FieldOf(err), tc.kind, tc.field)
			}
		})
	}
}

// BenchmarkMergeLookup measures the merge's read (one BatchGetItem) against DynamoDB
// Local: agent + task metadata and the stored tool's sealed setup, opened, then merged.
func BenchmarkMergeLookup(b *testing.B) {
	f := newFixture(b)
	ctx := context.Background()
	ref := store.MergeRef{AgentID: f.agent.ID, TaskID: f.task.ID, Tool: "wx", ToolID: f.tool.ID}
	def := &tool.IntegrationDef{Provider: "dummy", Arguments: defArgs}
	f.n.Reset()
	b.ResetTimer()
	for b.Loop() {
		src, err := f.s.MergeSources(ctx, dev, ref)
		if err != nil {
			b.Fatal(err)
		}
		if args, _ := merge.Integration(callArgs, def, *src); args["k"] != "scope" {
			b.Fatalf("merged %v", args)
		}
	}
	b.ReportMetric(float64(f.n.Total())/float64(b.N), "ddb-requests/op")
}
