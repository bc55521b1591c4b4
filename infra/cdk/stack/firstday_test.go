package stack

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"sinew/internal/deploy"
	"sinew/internal/store"
)

// The tests of this file hold what a new account needs on its first day: nothing left behind by a
// first create that rolls back, reserved concurrency for the functions that must not starve, alarms
// that page only for faults of the stack, and an index that is not written twice for nothing.

// TestRemovalPolicies: stateful resources are kept when the stack goes or replaces them in prod,
// but not when their first create rolls back (RetainExceptOnCreate), so a failed first attempt
// leaves no deletion-protected table, keys or pool behind; dev deletes them all.
func TestRemovalPolicies(t *testing.T) {
	openAI := map[string]any{"SINEW_MODEL": "openai:gpt-4o-mini", "SINEW_OPENAI_BASE_URL": "https://llm.example.com/v1"}
	dev := maps.Clone(openAI) // the model key's secret, made only for such an endpoint
	dev[CtxStage] = StageDev
	types := []string{"AWS::DynamoDB::Table", "AWS::KMS::Key", "AWS::Cognito::UserPool", "AWS::SecretsManager::Secret",
		"AWS::Logs::LogGroup", "AWS::SQS::Queue"}
	tests := []struct {
		name            string
		ctx             map[string]any
		deletion, subst string
	}{
		{"prod", openAI, "RetainExceptOnCreate", "Retain"},
		{"dev", dev, "Delete", "Delete"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := synth(t, tt.ctx)
			for _, typ := range types {
				rs := s.resources(typ)
				if len(rs) == 0 {
					t.Errorf("no %s", typ)
				}
				for id, r := range rs {
					if r["DeletionPolicy"] != tt.deletion || r["UpdateReplacePolicy"] != tt.subst {
						t.Errorf("%s %s: DeletionPolicy %v, UpdateReplacePolicy %v; want %s, %s", typ, id, r["DeletionPolicy"], r["UpdateReplacePolicy"], tt.deletion, tt.subst)
					}
				}
			}
		})
	}
}

// nameProps are the properties that give a resource a fixed physical name.
var nameProps = map[string]string{
	"AWS::Lambda::Function": "FunctionName", "AWS::StepFunctions::StateMachine": "StateMachineName", "AWS::Events::EventBus": "Name",
	"AWS::CloudWatch::Dashboard": "DashboardName", "AWS::DynamoDB::Table": "TableName", "AWS::SQS::Queue": "QueueName",
	"AWS::SNS::Topic": "TopicName", "AWS::IAM::Role": "RoleName", "AWS::IAM::ManagedPolicy": "ManagedPolicyName",
	"AWS::IAM::Policy": "PolicyName", "AWS::SecretsManager::Secret": "Name", "AWS::Events::Rule": "Name",
	"AWS::Cognito::UserPool": "UserPoolName", "AWS::Cognito::UserPoolClient": "ClientName", "AWS::ApiGatewayV2::Api": "Name",
	"AWS::Logs::LogGroup": "LogGroupName", "AWS::KMS::Alias": "AliasName", "AWS::Lambda::LayerVersion": "LayerName",
}

// TestFixedNames: the only fixed names are those the stack needs (functions and state machines,
// named by IAM statements without references; the bus clients write rules on), the labels that are
// no identifier (API, user pool, app client) and log groups, whose names end with the stack's id.
// The README's deploy guide says what replacing each one takes.
func TestFixedNames(t *testing.T) {
	s := defaultStack(t)
	allowed := []string{"AWS::Lambda::Function", "AWS::StepFunctions::StateMachine", "AWS::Events::EventBus",
		"AWS::ApiGatewayV2::Api", "AWS::Cognito::UserPool", "AWS::Cognito::UserPoolClient", "AWS::Logs::LogGroup",
		"AWS::IAM::Policy"} // an inline policy's name is local to its role
	for id, r := range s.json["Resources"].(map[string]any) {
		rm := r.(map[string]any)
		typ, _ := rm["Type"].(string)
		prop, ok := nameProps[typ]
		if !ok || props(rm)[prop] == nil {
			continue
		}
		if !slices.Contains(allowed, typ) {
			t.Errorf("%s %s has the fixed name %v", typ, id, props(rm)[prop])
		}
	}
}

// TestReservedConcurrency: api and settle reserve concurrency (the settings, 0 for none); no other
// function does.
func TestReservedConcurrency(t *testing.T) {
	tests := []struct {
		name string
		ctx  map[string]any
		want map[string]float64 // function -> reserved; absent: none
	}{
		{"defaults", map[string]any{}, map[string]float64{"api": DefaultAPIReservedConcurrency, "settle": DefaultSettleReservedConcurrency}},
		{"none", map[string]any{CtxAPIReservedConcurrency: 0, CtxSettleReservedConcurrency: "0"}, map[string]float64{}},
		{"set", map[string]any{CtxAPIReservedConcurrency: "50", CtxSettleReservedConcurrency: 3}, map[string]float64{"api": 50, "settle": 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range stackWith(t, tt.ctx).resources("AWS::Lambda::Function") {
				name := strings.TrimPrefix(props(r)["FunctionName"].(string), "sinew-")
				got, set := props(r)["ReservedConcurrentExecutions"]
				want, reserve := tt.want[name]
				if set != reserve || (set && got != want) {
					t.Errorf("%s: ReservedConcurrentExecutions %v, want %v (reserved: %v)", name, got, want, reserve)
				}
			}
		})
	}
}

// stackWith is the default stack when ctx sets nothing, else a stack of its own.
func stackWith(t *testing.T, ctx map[string]any) *synthed {
	if len(ctx) == 0 {
		return defaultStack(t)
	}
	return synth(t, ctx)
}

// alarmOf is one alarm's metric as the tests read it.
type alarmOf struct {
	id, namespace, metric, function, stat string
}

func alarms(t *testing.T, s *synthed) []alarmOf {
	t.Helper()
	fnOf := map[string]string{}
	for _, f := range deploy.Functions() {
		fnOf[s.logicalID(t, s.s.Functions[f.Name].Node().DefaultChild())] = f.Name
	}
	var out []alarmOf
	for id, r := range s.resources("AWS::CloudWatch::Alarm") {
		p := props(r)
		a := alarmOf{id: id}
		a.namespace, _ = p["Namespace"].(string)
		a.metric, _ = p["MetricName"].(string)
		a.stat, _ = p["Statistic"].(string)
		if ext, ok := p["ExtendedStatistic"].(string); ok {
			a.stat = ext
		}
		dims, _ := p["Dimensions"].([]any)
		for _, d := range dims {
			dm := d.(map[string]any)
			if dm["Name"] == "FunctionName" {
				ref, _ := dm["Value"].(map[string]any)["Ref"].(string)
				a.function = fnOf[ref]
			}
		}
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// TestAlarmsMeanFaults: every function's Lambda errors page, since a tool's failure and a caller's
// mistake are results, never Lambda errors (the ToolErrors metric counts tools' failures, graphed and
// not alarmed); no alarm pages for a caller's cancel (an aborted execution), for a function that
// runs long by design, or for chat's and MCP's waits on the API; the ToolCallPending announcement
// that fails only in a log line pages, and so do deliveries that lose an event.
func TestAlarmsMeanFaults(t *testing.T) {
	s := defaultStack(t)
	got := alarms(t, s)
	per := map[string][]string{} // metric -> functions alarmed
	events := 0
	for _, a := range got {
		if a.namespace == "AWS/Events" {
			events++
		}
		if a.namespace == "AWS/Lambda" {
			per[a.metric] = append(per[a.metric], a.function)
		}
		if a.namespace == "AWS/ApiGateway" && a.metric == "Latency" {
			t.Errorf("%s: the stage-wide latency alarm pages on ordinary chat and MCP waits", a.id)
		}
		if a.metric == "ExecutionsAborted" {
			t.Errorf("%s pages on callers' cancels", a.id)
		}
		if a.metric == "ToolErrors" {
			t.Errorf("%s pages on tools' own failures, which are the callers' (a provider's refusal, a bad argument)", a.id)
		}
	}
	var all []string
	for _, f := range deploy.Functions() {
		all = append(all, f.Name)
	}
	// The lists are written out, not derived from LongByDesign, so a change to it shows here.
	want := map[string][]string{
		"Errors":                      all,
		"Duration":                    {"function", "prepare", "system", "model", "settle"},
		"Throttles":                   all,
		"DestinationDeliveryFailures": {"settle"},
	}
	for metric, fns := range want {
		g := slices.Sorted(slices.Values(per[metric]))
		w := slices.Sorted(slices.Values(fns))
		if !slices.Equal(g, w) {
			t.Errorf("%s alarms on %v, want %v", metric, g, w)
		}
	}

	filters := map[string]string{} // metric name -> filter pattern
	for _, r := range s.resources("AWS::Logs::MetricFilter") {
		for _, m := range props(r)["MetricTransformations"].([]any) {
			filters[m.(map[string]any)["MetricName"].(string)] = props(r)["FilterPattern"].(string)
		}
	}
	for _, tt := range []struct{ metric, stat, pattern string }{
		{defaultRouteLatency, "p99", `"` + defaultRouteKey + `"`},
		{pendingPublishMetric, "Sum", PendingPublishFailed},
	} {
		if !strings.Contains(filters[tt.metric], tt.pattern) {
			t.Errorf("metric filter of %s: pattern %q lacks %s", tt.metric, filters[tt.metric], tt.pattern)
		}
		if !slices.ContainsFunc(got, func(a alarmOf) bool { return a.metric == tt.metric && a.stat == tt.stat }) {
			t.Errorf("no %s alarm on %s", tt.stat, tt.metric)
		}
	}
	// The publish failure is only a log line; the filter must match the line the code writes.
	src, err := os.ReadFile(filepath.Join(repoRoot(t), "internal", "executor", "function.go"))
	if err != nil || !strings.Contains(string(src), `"`+PendingPublishFailed+`"`) {
		t.Errorf("internal/executor/function.go no longer logs %q (%v): the filter matches nothing", PendingPublishFailed, err)
	}
	// ToolErrors is made by the executors' EMF lines: the dashboard's names must be the ones they write.
	emf, err := os.ReadFile(filepath.Join(repoRoot(t), "internal", "executor", "metrics.go"))
	for _, name := range []string{toolErrorsNamespace, toolErrorsMetric, toolTypeDimension, functionDimension} {
		if err != nil || !strings.Contains(string(emf), `= "`+name+`"`) {
			t.Errorf("internal/executor/metrics.go no longer names %q (%v): the dashboard graphs nothing", name, err)
		}
	}
	if events != 2 {
		t.Errorf("%d alarms on the settle rule's deliveries, want FailedInvocations and InvocationsFailedToBeSentToDlq", events)
	}
	if len(got) != 39 {
		t.Errorf("%d alarms, want 39", len(got))
	}
}

// TestAlarmExceptionsAreFunctions: every function LongByDesign and toolTypeOf name is described,
// so a rename cannot silently bring back an alarm they leave out or drop a graph.
func TestAlarmExceptionsAreFunctions(t *testing.T) {
	for name, m := range map[string]map[string]string{"LongByDesign": LongByDesign, "toolTypeOf": toolTypeOf} {
		for fn, why := range m {
			if _, ok := deploy.FunctionByName(fn); !ok || why == "" {
				t.Errorf("%s names %q (%q), which is not a described function or has no reason", name, fn, why)
			}
		}
	}
}

// TestLongRoutesApart: MCP's routes, which wait for their execution by design, are routes of their
// own, so the $default route's latency holds only the answers that should be quick.
func TestLongRoutesApart(t *testing.T) {
	s := defaultStack(t)
	keys := map[string]string{}
	for _, r := range s.resources("AWS::ApiGatewayV2::Route") {
		auth, _ := props(r)["AuthorizationType"].(string)
		keys[props(r)["RouteKey"].(string)] = auth
	}
	for _, p := range mcpPaths {
		if k := "POST " + p; keys[k] != "JWT" {
			t.Errorf("route %s: authorization %q, want its own route behind the JWT authorizer", k, keys[k])
		}
	}
	// Every MCP route of the api function's OpenAPI document is among them.
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "internal", "app", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for path, ops := range doc.Paths {
		if _, post := ops["post"]; post && strings.HasSuffix(path, "/mcp") && keys["POST "+path] == "" {
			t.Errorf("POST %s waits by design but has no route of its own", path)
		}
	}
}

// TestIndexAndCaps: gsi1 projects only what the lists decode, and the table and its index have
// on-demand maximums (settings; 0 for none).
func TestIndexAndCaps(t *testing.T) {
	type caps struct{ read, write float64 }
	tests := []struct {
		name string
		ctx  map[string]any
		want *caps
	}{
		{"defaults", map[string]any{}, &caps{DefaultTableMaxReadUnits, DefaultTableMaxWriteUnits}},
		{"set", map[string]any{CtxTableMaxReadUnits: "300", CtxTableMaxWriteUnits: 100}, &caps{300, 100}},
		{"none", map[string]any{CtxTableMaxReadUnits: 0, CtxTableMaxWriteUnits: "0"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range stackWith(t, tt.ctx).resources("AWS::DynamoDB::Table") {
				p := props(r)
				odts := []any{p["OnDemandThroughput"]}
				for _, g := range p["GlobalSecondaryIndexes"].([]any) {
					gm := g.(map[string]any)
					odts = append(odts, gm["OnDemandThroughput"])
					proj := gm["Projection"].(map[string]any)
					attrs := asStrings(proj["NonKeyAttributes"])
					// gsi1 holds what the lists decode; gsi2, the sweep's, only keys.
					wantType, want := "KEYS_ONLY", []string(nil)
					if gm["IndexName"] == store.GSI1 {
						wantType, want = "INCLUDE", []string{"doc", "error", "exp", "first_state", "output", "st", "token", "updated"}
					}
					if proj["ProjectionType"] != wantType || !slices.Equal(attrs, want) {
						t.Errorf("%v projects %v %v, want %s %v", gm["IndexName"], proj["ProjectionType"], attrs, wantType, want)
					}
				}
				for i, o := range odts {
					var want any
					if tt.want != nil {
						want = map[string]any{"MaxReadRequestUnits": tt.want.read, "MaxWriteRequestUnits": tt.want.write}
					}
					gj, _ := json.Marshal(o)
					wj, _ := json.Marshal(want)
					if string(gj) != string(wj) {
						t.Errorf("OnDemandThroughput %d (0: the table, then its indexes): %s, want %s", i, gj, wj)
					}
				}
			}
		})
	}
}
