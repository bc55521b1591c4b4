package stack

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"sinew/internal/config"
	"sinew/internal/deploy"
	"sinew/internal/httpapi"
	"sinew/internal/store"
)

func TestResourceCounts(t *testing.T) {
	s := defaultStack(t)
	nf, nm := len(deploy.Functions()), len(deploy.StateMachines())
	want := map[string]int{
		"AWS::Lambda::Function":            nf,
		"AWS::StepFunctions::StateMachine": nm,
		"AWS::DynamoDB::Table":             1,
		"AWS::KMS::Key":                    2,           // the table's and the setup secrets'
		"AWS::IAM::Role":                   nf + nm + 2, // and rotate-secrets' role, and Julep tasks' machines'
		"AWS::Logs::LogGroup":              nf + nm + 1, // each function, each state machine, the API's access logs
		// Errors and throttles of every function, durations where they mean faults (LongByDesign),
		// each state machine's three, the API's two, the table's two, the two queues, the settle
		// rule's two, settle's destination, the ToolCallPending publish.
		"AWS::CloudWatch::Alarm":         nf + nf + (nf - len(LongByDesign)) + 3*nm + 2 + 2 + 2 + 2 + 1 + 1,
		"AWS::Logs::MetricFilter":        2, // the $default route's latency, the ToolCallPending publish failures
		"AWS::CloudWatch::Dashboard":     1,
		"AWS::SQS::Queue":                2, // the settle rule's and settle's dead letters
		"AWS::Lambda::EventInvokeConfig": 1,
		"AWS::IAM::ManagedPolicy":        1, // the task responder's
		"AWS::SNS::Topic":                1,
		"AWS::Events::EventBus":          1,
		"AWS::Events::Rule":              2,
		"AWS::Cognito::UserPool":         1,
		"AWS::Cognito::UserPoolClient":   1,
		"AWS::ApiGatewayV2::Api":         1,
		"AWS::ApiGatewayV2::Stage":       1,
		"AWS::ApiGatewayV2::Authorizer":  1,
		// $default to api, the two public routes, the chat route, the MCP metadata's two, MCP's two,
		// the MCP imports' two
		"AWS::ApiGatewayV2::Route":       10,
		"AWS::ApiGatewayV2::Integration": 2,
		"AWS::SecretsManager::Secret":    0, // no OpenAI-compatible endpoint by default
		"AWS::Lambda::LayerVersion":      0,
	}
	for typ, n := range want {
		check(t, typ, func() { s.tpl.ResourceCountIs(jsii.String(typ), jsii.Number(n)) })
	}
	for _, o := range []string{"ApiUrl", "TableName", "ToolCallStateMachineArn", "AgentLoopStateMachineArn", "EventBusName",
		"UserPoolId", "UserPoolClientId", "AlarmTopicArn", "SecretsRotationRoleArn", "TaskResponderPolicyArn", "DashboardName"} {
		check(t, "output "+o, func() { s.tpl.HasOutput(jsii.String(o), map[string]any{}) })
	}
}

func TestTable(t *testing.T) {
	s := defaultStack(t)
	spec := store.TableSpec("x")
	check(t, "table", func() {
		s.tpl.HasResource(jsii.String("AWS::DynamoDB::Table"), map[string]any{
			"DeletionPolicy":      "RetainExceptOnCreate",
			"UpdateReplacePolicy": "Retain",
			"Properties": map[string]any{
				"BillingMode":                      "PAY_PER_REQUEST",
				"KeySchema":                        []any{map[string]any{"AttributeName": store.AttrPK, "KeyType": "HASH"}, map[string]any{"AttributeName": store.AttrSK, "KeyType": "RANGE"}},
				"TimeToLiveSpecification":          map[string]any{"AttributeName": store.AttrTTL, "Enabled": true},
				"PointInTimeRecoverySpecification": map[string]any{"PointInTimeRecoveryEnabled": true},
				"DeletionProtectionEnabled":        false,
				"SSESpecification": map[string]any{"SSEEnabled": true, "SSEType": "KMS",
					"KMSMasterKeyId": map[string]any{"Fn::GetAtt": []any{s.logicalID(t, s.s.TableKey.Node().DefaultChild()), "Arn"}}},
				"GlobalSecondaryIndexes": []any{map[string]any{
					"IndexName":  *spec.GlobalSecondaryIndexes[0].IndexName,
					"KeySchema":  []any{map[string]any{"AttributeName": store.AttrGSI1PK, "KeyType": "HASH"}, map[string]any{"AttributeName": store.AttrGSI1SK, "KeyType": "RANGE"}},
					"Projection": map[string]any{"ProjectionType": "INCLUDE", "NonKeyAttributes": asAny(spec.GlobalSecondaryIndexes[0].Projection.NonKeyAttributes)},
				}, map[string]any{
					"IndexName":  *spec.GlobalSecondaryIndexes[1].IndexName,
					"KeySchema":  []any{map[string]any{"AttributeName": store.AttrGSI2PK, "KeyType": "HASH"}, map[string]any{"AttributeName": store.AttrGSI2SK, "KeyType": "RANGE"}},
					"Projection": map[string]any{"ProjectionType": "KEYS_ONLY"},
				}},
			},
		})
	})
	check(t, "keys rotate", func() {
		s.tpl.AllResourcesProperties(jsii.String("AWS::KMS::Key"), map[string]any{"EnableKeyRotation": true})
	})

	destroy := synth(t, map[string]any{CtxRemovalPolicy: "destroy"})
	for _, typ := range []string{"AWS::DynamoDB::Table", "AWS::KMS::Key", "AWS::Logs::LogGroup", "AWS::Cognito::UserPool"} {
		check(t, "destroy "+typ, func() {
			destroy.tpl.AllResources(jsii.String(typ), map[string]any{"DeletionPolicy": "Delete"})
		})
	}
	check(t, "destroy lifts deletion protection", func() {
		destroy.tpl.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), map[string]any{"DeletionProtectionEnabled": false})
	})
}

func TestFunctions(t *testing.T) {
	s := defaultStack(t)
	fns := s.resources("AWS::Lambda::Function")
	byName := map[string]map[string]any{}
	for _, r := range fns {
		byName[props(r)["FunctionName"].(string)] = props(r)
	}
	for _, f := range deploy.Functions() {
		p := byName["sinew-"+f.Name]
		if p == nil {
			t.Errorf("no function sinew-%s", f.Name)
			continue
		}
		if p["Runtime"] != deploy.Runtime || !slices.Equal(asStrings(p["Architectures"]), []string{deploy.Architecture}) || p["Handler"] != deploy.Handler {
			t.Errorf("%s: runtime %v %v %v", f.Name, p["Runtime"], p["Architectures"], p["Handler"])
		}
		if p["MemorySize"] != float64(f.MemoryMB) || p["Timeout"] != f.Timeout.Seconds() {
			t.Errorf("%s: memory %v timeout %v, want %d and %v", f.Name, p["MemorySize"], p["Timeout"], f.MemoryMB, f.Timeout.Seconds())
		}
		if tc, _ := p["TracingConfig"].(map[string]any); tc["Mode"] != "Active" {
			t.Errorf("%s: tracing %v", f.Name, p["TracingConfig"])
		}
		if p["LoggingConfig"] == nil {
			t.Errorf("%s: no log group of its own", f.Name)
		}
		vars := map[string]any{}
		if e, ok := p["Environment"].(map[string]any); ok {
			vars = e["Variables"].(map[string]any)
		}
		for _, name := range f.Env {
			_, set := vars[name]
			operator := deploy.ValueOf(name).Kind == deploy.OperatorSetting
			if !set && !operator {
				t.Errorf("%s: %s is not set", f.Name, name)
			}
			if set && operator {
				t.Errorf("%s: operator setting %s set although the operator gave none", f.Name, name)
			}
		}
		for name := range vars {
			if _, goRuntime := f.RuntimeEnv()[name]; !slices.Contains(f.Env, name) && !goRuntime {
				t.Errorf("%s: gets %s, which its description does not list", f.Name, name)
			}
		}
		if f.Name == "chat" && vars[config.FunctionEnv("integration")] != "sinew-integration" {
			t.Errorf("chat: %s = %v", config.FunctionEnv("integration"), vars[config.FunctionEnv("integration")])
		}
	}
	// Log groups keep the operator's retention.
	check(t, "log retention", func() {
		s.tpl.AllResourcesProperties(jsii.String("AWS::Logs::LogGroup"), map[string]any{"RetentionInDays": float64(DefaultLogRetentionDays)})
	})

}

func TestOperatorSettings(t *testing.T) {
	zip := filepath.Join(t.TempDir(), "ffmpeg.zip")
	if err := os.WriteFile(zip, []byte("PK\x05\x06"+strings.Repeat("\x00", 18)), 0o644); err != nil {
		t.Fatal(err)
	}
	s := synth(t, map[string]any{"SINEW_APICALL_ALLOW": "10.0.0.0/8", CtxLogRetentionDays: 90, "SINEW_MODEL": "openai:gpt-4o-mini",
		"SINEW_OPENAI_BASE_URL": "https://llm.example.com/v1", CtxFFmpegLayerZip: zip, CtxEventBusName: "default"})
	secret := s.logicalID(t, s.s.Stack.Node().FindChild(jsii.String("OpenAIKey")).Node().DefaultChild())
	for _, r := range s.resources("AWS::Lambda::Function") {
		p := props(r)
		name := strings.TrimPrefix(p["FunctionName"].(string), "sinew-")
		f, _ := deploy.FunctionByName(name)
		vars := p["Environment"].(map[string]any)["Variables"].(map[string]any)
		for _, v := range []struct {
			name string
			want any
		}{
			{config.EnvAPICallAllow, "10.0.0.0/8"},
			{config.EnvOpenAIBaseURL, "https://llm.example.com/v1"},
			{config.EnvModel, "openai:gpt-4o-mini"},
			{config.EnvOpenAIKey, map[string]any{"Ref": secret}},
			{config.EnvEventBus, "default"},
		} {
			got, ok := vars[v.name]
			if ok != slices.Contains(f.Env, v.name) {
				t.Errorf("%s: %s set %v, but its description lists it: %v", name, v.name, ok, slices.Contains(f.Env, v.name))
			}
			if ok {
				gj, _ := json.Marshal(got)
				wj, _ := json.Marshal(v.want)
				if string(gj) != string(wj) {
					t.Errorf("%s: %s = %s, want %s", name, v.name, gj, wj)
				}
			}
		}
		layers := asStrings(p["Layers"])
		if (len(layers) == 1) != (name == "integration") {
			t.Errorf("%s: layers %v; only integration gets ffmpeg", name, layers)
		}
	}
	check(t, "retention", func() {
		s.tpl.AllResourcesProperties(jsii.String("AWS::Logs::LogGroup"), map[string]any{"RetentionInDays": 90})
	})
	check(t, "no bus of its own", func() { s.tpl.ResourceCountIs(jsii.String("AWS::Events::EventBus"), jsii.Number(0)) })
	check(t, "layer", func() {
		s.tpl.HasResourceProperties(jsii.String("AWS::Lambda::LayerVersion"), map[string]any{
			"CompatibleArchitectures": []any{"arm64"}, "CompatibleRuntimes": []any{"provided.al2023"}})
	})
	// The key's secret is read by exactly the functions that prompt a model.
	for fn, sts := range s.rolePolicies(t) {
		f, _ := deploy.FunctionByName(fn)
		reads := hasAction(sts, "secretsmanager:GetSecretValue")
		if (len(reads) == 1) != f.Allows(deploy.ReadModelKeySecret, "") {
			t.Errorf("%s: %d statements read the model key's secret", fn, len(reads))
		}
		for _, st := range reads {
			if !slices.Equal(st.Resources, []string{`{"Ref":"` + secret + `"}`}) {
				t.Errorf("%s reads secrets %v", fn, st.Resources)
			}
		}
	}
}

func TestStateMachines(t *testing.T) {
	s := defaultStack(t)
	root := repoRoot(t)
	for _, m := range deploy.StateMachines() {
		sm := s.StateMachines(t, m.Name)
		p := props(sm)
		if p["StateMachineType"] != m.Type {
			t.Errorf("%s: type %v", m.Name, p["StateMachineType"])
		}
		if tc, _ := p["TracingConfiguration"].(map[string]any); tc["Enabled"] != true {
			t.Errorf("%s: tracing %v", m.Name, p["TracingConfiguration"])
		}
		// Both log errors only: a Standard execution's history already keeps every event, and
		// every event of every Express call would cost more than the call.
		level := "ERROR"
		if lc, _ := p["LoggingConfiguration"].(map[string]any); lc["Level"] != level {
			t.Errorf("%s: logging %v, want level %s", m.Name, p["LoggingConfiguration"], level)
		}
		// The definition is inline and, when the file exists, is the file itself.
		def, ok := definition(p)
		if !ok {
			t.Errorf("%s: DefinitionString is %v, want the definition inline", m.Name, p["DefinitionString"])
			continue
		}
		if raw, err := os.ReadFile(filepath.Join(root, m.File)); err == nil &&
			def != strings.ReplaceAll(string(raw), `"arn:aws:`, `"arn:<partition>:`) {
			t.Errorf("%s: the inline definition differs from %s (but for the partition)", m.Name, m.File)
		}
		subs, _ := p["DefinitionSubstitutions"].(map[string]any)
		var got []string
		for k := range subs {
			got = append(got, k)
		}
		var want []string
		for _, sub := range m.Substitutions {
			want = append(want, sub.Placeholder)
			v, _ := json.Marshal(subs[sub.Placeholder])
			if sub.Value.Kind == deploy.FunctionARN {
				id := s.logicalID(t, s.s.Functions[sub.Value.Target].Node().DefaultChild())
				if string(v) != getAtt(id, "Arn") {
					t.Errorf("%s: ${%s} = %s, want the ARN of %s", m.Name, sub.Placeholder, v, sub.Value.Target)
				}
			}
		}
		sort.Strings(got)
		sort.Strings(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: substitutions %v, want %v", m.Name, got, want)
		}
	}
}

// StateMachines finds a state machine's resource by its deployed name.
func (s *synthed) StateMachines(t *testing.T, name string) map[string]any {
	t.Helper()
	for _, r := range s.resources("AWS::StepFunctions::StateMachine") {
		if props(r)["StateMachineName"] == "sinew-"+name {
			return r
		}
	}
	t.Fatalf("no state machine sinew-%s", name)
	return nil
}

// TestIAM checks each function's identity policies against its description: what it may do and,
// as importantly, what it may not.
func TestIAM(t *testing.T) {
	s := defaultStack(t)
	pols := s.rolePolicies(t)
	secretsKey := getAtt(s.logicalID(t, s.s.SecretsKey.Node().DefaultChild()), "Arn")
	tableKey := getAtt(s.logicalID(t, s.s.TableKey.Node().DefaultChild()), "Arn")
	table := getAtt(s.logicalID(t, s.s.Table.Node().DefaultChild()), "Arn")
	bus := getAtt(s.logicalID(t, s.s.EventBus.Node().DefaultChild()), "Arn")

	for _, f := range deploy.Functions() {
		sts := pols[f.Name]
		f.Permissions = Permissions(f)
		t.Run(f.Name, func(t *testing.T) {
			allowsItems := func(a deploy.Action) []deploy.ItemKind {
				for _, p := range f.Permissions {
					if p.Action == a {
						return p.Items
					}
				}
				return nil
			}
			type rule struct {
				action   string
				want     bool
				resource string // a substring every resource of the action holds
			}
			acc := tableAccessOf[f.Name]
			readsIndex := slices.Contains(acc.indexes, store.GSI1)
			rules := []rule{
				{"dynamodb:Query", slices.Contains(acc.actions, "dynamodb:Query") || len(acc.indexes) > 0, table},
				{"dynamodb:PutItem", slices.Contains(acc.actions, "dynamodb:PutItem"), table},
				{"dynamodb:Scan", false, ""},
				{"kms:Decrypt", f.Allows(deploy.SecretsKeyDecrypt, "") || allowsItems(deploy.TableRead) != nil, ""},
				{"kms:GenerateDataKey", f.Allows(deploy.SecretsKeyEncrypt, "") || writes(acc.actions), ""},
				{"events:PutEvents", f.Allows(deploy.PutEvents, ""), bus},
				{"bedrock:InvokeModel", f.Allows(deploy.BedrockInvoke, ""), "anthropic.claude-haiku-4-5-20251001-v1:0"}, // the default model's profile and model
				{"states:StartExecution", f.Allows(deploy.StartExecution, deploy.ToolCall) || f.Allows(deploy.StartExecution, deploy.AgentLoop), ":stateMachine:sinew-"},
				{"states:SendTaskSuccess", f.Allows(deploy.SendTaskResult, deploy.ToolCall) || f.Allows(deploy.AnswerOwnTask, deploy.ToolCall), ":stateMachine:sinew-"},
				{"states:SendTaskHeartbeat", f.Allows(deploy.SendTaskResult, deploy.ToolCall), ":stateMachine:sinew-"},
				{"states:StopExecution", f.Allows(deploy.ManageExecution, deploy.ToolCall), ":execution:sinew-"},
				{"states:DescribeExecution", f.Allows(deploy.DescribeExecution, deploy.ToolCall) || f.Allows(deploy.DescribeExecution, deploy.AgentLoop), ":execution:sinew-"},
				{"lambda:InvokeFunction", slices.ContainsFunc(f.Permissions, func(p deploy.Permission) bool { return p.Action == deploy.InvokeFunction }), ":function:sinew-"},
				{"secretsmanager:GetSecretValue", false, ""}, // no OpenAI-compatible endpoint by default
			}
			for _, r := range rules {
				got := hasAction(sts, r.action)
				if (len(got) > 0) != r.want {
					t.Errorf("%s: %d statements allow %s, want it allowed: %v", f.Name, len(got), r.action, r.want)
				}
				for _, st := range got {
					for _, res := range st.Resources {
						if !strings.Contains(res, r.resource) || res == "*" {
							t.Errorf("%s: %s on %s", f.Name, r.action, res)
						}
					}
				}
			}
			// Secrets: decrypt only with the secrets key for the executors, else only through
			// DynamoDB with the table key.
			unseals := false
			for _, st := range hasAction(sts, "kms:Decrypt") {
				unseals = unseals || slices.Contains(st.Resources, secretsKey)
				if slices.Contains(st.Resources, tableKey) && st.Sid != "TableKeyRead" {
					t.Errorf("%s: table key used outside DynamoDB: %+v", f.Name, st)
				}
			}
			if unseals != f.Allows(deploy.SecretsKeyDecrypt, "") {
				t.Errorf("%s: may decrypt with the secrets key: %v", f.Name, unseals)
			}
			indexed := slices.ContainsFunc(hasAction(sts, "dynamodb:Query"), func(st statement) bool { return contains(st.Resources, "/index/"+store.GSI1) })
			if indexed != readsIndex {
				t.Errorf("%s: may query the index: %v, reads listed items: %v", f.Name, indexed, readsIndex)
			}
			var invoked []string
			for _, st := range hasAction(sts, "lambda:InvokeFunction") {
				for _, res := range st.Resources {
					invoked = append(invoked, res[strings.LastIndex(res, ":function:sinew-")+len(":function:sinew-"):strings.LastIndex(res, `"`)])
				}
			}
			var want []string
			for _, p := range f.Permissions {
				if p.Action == deploy.InvokeFunction {
					want = append(want, p.Target)
				}
			}
			sort.Strings(invoked)
			sort.Strings(want)
			if !slices.Equal(invoked, want) {
				t.Errorf("%s invokes %v, want %v", f.Name, invoked, want)
			}
		})
	}

	// Every "*" resource in an identity policy is one AWS forces: X-Ray and log delivery.
	forced := []string{"xray:PutTraceSegments", "xray:PutTelemetryRecords", "xray:GetSamplingRules", "xray:GetSamplingTargets",
		"logs:CreateLogDelivery", "logs:GetLogDelivery", "logs:UpdateLogDelivery", "logs:DeleteLogDelivery", "logs:ListLogDeliveries",
		"logs:PutResourcePolicy", "logs:DescribeResourcePolicies", "logs:DescribeLogGroups"}
	for id, p := range s.resources("AWS::IAM::Policy") {
		for _, st := range statements(props(p)["PolicyDocument"]) {
			if slices.Contains(st.Resources, "*") {
				for _, a := range st.Actions {
					if !slices.Contains(forced, a) {
						t.Errorf("%s: %s on Resource *", id, a)
					}
				}
			}
		}
	}
	for id, r := range s.resources("AWS::IAM::Role") {
		if props(r)["ManagedPolicyArns"] != nil {
			t.Errorf("role %s has managed policies %v", id, props(r)["ManagedPolicyArns"])
		}
	}

	// The key policy: only the executors' roles may decrypt, only the sealing roles may generate
	// data keys, the account only administers. The users are named by aws:PrincipalArn.
	roleArn := func(fn string) string { return getAtt(s.logicalID(t, s.s.Roles[fn].Node().DefaultChild()), "Arn") }
	for _, st := range keyPolicy(t, s) {
		users, _ := json.Marshal(st.Condition["ArnEquals"])
		for _, a := range st.Actions {
			var want []string
			switch a {
			case "kms:Decrypt":
				want = []string{roleArn("apicall"), roleArn("integration")}
			case "kms:GenerateDataKey":
				want = []string{roleArn("api")}
			case "kms:ReEncryptFrom", "kms:ReEncryptTo":
				want = []string{getAtt(s.logicalID(t, s.s.RotationRole.Node().DefaultChild()), "Arn")}
			case "kms:Encrypt", "kms:*", "kms:ReEncrypt*", "kms:GenerateDataKey*":
				t.Errorf("the secrets key's policy allows %s to %s", a, st.Principal)
				continue
			default:
				if !strings.Contains(st.Principal, ":root") || st.Condition != nil {
					t.Errorf("%s allowed to %s %v", a, st.Principal, st.Condition)
				}
				continue
			}
			for _, w := range want {
				if !strings.Contains(string(users), w) {
					t.Errorf("%s: users %s lack %s", a, users, w)
				}
			}
			if strings.Count(string(users), "Fn::GetAtt") != len(want) {
				t.Errorf("%s: users %s, want only %v", a, users, want)
			}
		}
	}
}

func TestHTTPAPI(t *testing.T) {
	s := defaultStack(t)
	api := s.logicalID(t, s.s.Functions["api"].Node().DefaultChild())
	chat := s.logicalID(t, s.s.Functions["chat"].Node().DefaultChild())
	integrationOf := map[string]string{} // integration id -> function id
	for id, r := range s.resources("AWS::ApiGatewayV2::Integration") {
		uri, _ := json.Marshal(props(r)["IntegrationUri"])
		for _, fn := range []string{api, chat} {
			if strings.Contains(string(uri), fn) {
				integrationOf[id] = fn
			}
		}
		if props(r)["PayloadFormatVersion"] != "2.0" {
			t.Errorf("integration %s: payload format %v", id, props(r)["PayloadFormatVersion"])
		}
	}
	routes := map[string][2]string{} // route key -> function id, authorization type
	for _, r := range s.resources("AWS::ApiGatewayV2::Route") {
		p := props(r)
		target := p["Target"].(map[string]any)["Fn::Join"].([]any)[1].([]any)[1].(map[string]any)["Ref"].(string)
		auth, _ := p["AuthorizationType"].(string)
		routes[p["RouteKey"].(string)] = [2]string{integrationOf[target], auth}
	}
	want := map[string][2]string{
		"$default":                         {api, "JWT"},
		"GET /healthz":                     {api, "NONE"},
		"GET /openapi.json":                {api, "NONE"},
		"POST /sessions/{session_id}/chat": {chat, "JWT"},
		// MCP's endpoints, apart from $default for their waits.
		"POST /agents/{agent_id}/mcp":     {api, "JWT"},
		"POST /sessions/{session_id}/mcp": {api, "JWT"},
		// The MCP imports wait for a remote server's listing: apart too.
		"POST /agents/{agent_id}/tools/mcp": {api, "JWT"},
		"POST /tasks/{task_id}/tools/mcp":   {api, "JWT"},
		// MCP clients read the protected-resource metadata before they hold a token.
		"GET /.well-known/oauth-protected-resource":          {api, "NONE"},
		"GET /.well-known/oauth-protected-resource/{proxy+}": {api, "NONE"},
	}
	if len(routes) != len(want) {
		t.Errorf("routes %v, want %v", routes, want)
	}
	for k, w := range want {
		if routes[k] != w {
			t.Errorf("route %s: %v, want %v", k, routes[k], w)
		}
	}
	check(t, "cognito authorizer", func() {
		s.tpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Authorizer"), map[string]any{
			"AuthorizerType": "JWT", "IdentitySource": []any{"$request.header.Authorization"},
			"JwtConfiguration": map[string]any{"Audience": assertions.Match_AnyValue(), "Issuer": assertions.Match_AnyValue()},
		})
	})
	check(t, "stage", func() {
		s.tpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Stage"), map[string]any{
			"StageName": "$default", "AutoDeploy": true,
			"DefaultRouteSettings": map[string]any{"ThrottlingRateLimit": DefaultThrottleRate, "ThrottlingBurstLimit": DefaultThrottleBurst},
			"AccessLogSettings":    map[string]any{"DestinationArn": assertions.Match_AnyValue(), "Format": assertions.Match_StringLikeRegexp(jsii.String(`requestId`))},
		})
	})
	check(t, "no CORS by default", func() {
		s.tpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Api"), map[string]any{"CorsConfiguration": assertions.Match_Absent()})
	})

	oidc := synth(t, map[string]any{CtxOIDCIssuer: "https://login.example.com/", CtxOIDCAudience: "a1,a2",
		CtxCORSOrigins: "https://app.example.com", CtxThrottleRate: 7, CtxThrottleBurst: "9"})
	check(t, "oidc authorizer", func() {
		oidc.tpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Authorizer"), map[string]any{
			"AuthorizerType": "JWT", "JwtConfiguration": map[string]any{"Audience": []any{"a1", "a2"}, "Issuer": "https://login.example.com/"}})
		oidc.tpl.ResourceCountIs(jsii.String("AWS::Cognito::UserPool"), jsii.Number(0))
	})
	check(t, "cors", func() {
		oidc.tpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Api"), map[string]any{"CorsConfiguration": map[string]any{
			"AllowOrigins": []any{"https://app.example.com"}, "AllowHeaders": assertions.Match_ArrayWith(&[]any{"authorization", "idempotency-key"})}})
	})
	check(t, "throttle", func() {
		oidc.tpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Stage"), map[string]any{
			"DefaultRouteSettings": map[string]any{"ThrottlingRateLimit": 7, "ThrottlingBurstLimit": 9}})
	})
}

// TestSweepRule: settle sweeps the open records on a schedule of deploy.SweepPeriod, each event
// given up once the next is due.
func TestSweepRule(t *testing.T) {
	s := defaultStack(t)
	settle := s.logicalID(t, s.s.Functions["settle"].Node().DefaultChild())
	check(t, "rule", func() {
		s.tpl.HasResourceProperties(jsii.String("AWS::Events::Rule"), map[string]any{
			"ScheduleExpression": fmt.Sprintf("rate(%d minutes)", int(deploy.SweepPeriod.Minutes())),
			"Targets": []any{assertions.Match_ObjectLike(&map[string]any{"Arn": map[string]any{"Fn::GetAtt": []any{settle, "Arn"}},
				"RetryPolicy": map[string]any{"MaximumEventAgeInSeconds": deploy.SweepPeriod.Seconds(), "MaximumRetryAttempts": 2}})},
		})
	})
	rules := 0
	for _, r := range s.resources("AWS::Lambda::Permission") {
		if props(r)["Principal"] == "events.amazonaws.com" {
			rules++
		}
	}
	if rules != 2 {
		t.Errorf("%d permissions for EventBridge to invoke a function, want settle's two rules'", rules)
	}
}

func TestSettleRuleAndAlarms(t *testing.T) {
	s := defaultStack(t)
	settle := s.logicalID(t, s.s.Functions["settle"].Node().DefaultChild())
	var arns []any
	for _, m := range deploy.StateMachines() {
		arns = append(arns, map[string]any{"Ref": s.logicalID(t, s.s.StateMachines[m.Name].Node().DefaultChild())})
	}
	// and Julep tasks' machines, by the prefix of their names
	arns = append(arns, map[string]any{"prefix": assertions.Match_AnyValue()})
	check(t, "rule", func() {
		s.tpl.HasResourceProperties(jsii.String("AWS::Events::Rule"), map[string]any{
			"EventPattern": map[string]any{"source": []any{"aws.states"}, "detail-type": []any{"Step Functions Execution Status Change"},
				"detail": map[string]any{"stateMachineArn": arns, "status": []any{"SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"}}},
			"Targets": []any{assertions.Match_ObjectLike(&map[string]any{"Arn": map[string]any{"Fn::GetAtt": []any{settle, "Arn"}}})},
		})
	})
	check(t, "events may invoke settle", func() {
		s.tpl.HasResourceProperties(jsii.String("AWS::Lambda::Permission"), map[string]any{
			"Principal": "events.amazonaws.com", "FunctionName": map[string]any{"Fn::GetAtt": []any{settle, "Arn"}}})
	})
	topic := map[string]any{"Ref": s.logicalID(t, s.stack.Node().FindChild(jsii.String("Alarms")).Node().DefaultChild())}
	check(t, "alarms notify the topic", func() {
		s.tpl.AllResourcesProperties(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{"AlarmActions": []any{topic}})
	})
	metrics := map[string]int{}
	for _, r := range s.resources("AWS::CloudWatch::Alarm") {
		if ns, ok := props(r)["Namespace"].(string); ok {
			metrics[ns+"/"+props(r)["MetricName"].(string)]++
		} else {
			metrics["math"]++ // DynamoDB's per-operation sums
		}
	}
	nf, nm := len(deploy.Functions()), len(deploy.StateMachines())
	for k, n := range map[string]int{"AWS/Lambda/Errors": nf, "AWS/Lambda/Throttles": nf, "AWS/Lambda/Duration": nf - len(LongByDesign),
		"AWS/States/ExecutionsFailed": nm, "AWS/States/ExecutionsTimedOut": nm, "AWS/States/ExecutionsAborted": 0,
		"AWS/States/ExecutionThrottled": nm, "AWS/ApiGateway/5xx": 1, "math": 2,
		"AWS/SQS/ApproximateNumberOfMessagesVisible": 2, "AWS/Events/FailedInvocations": 1, "AWS/Events/InvocationsFailedToBeSentToDlq": 1,
		"AWS/Lambda/DestinationDeliveryFailures": 1, "sinew/sinew/" + defaultRouteLatency: 1, "sinew/sinew/" + pendingPublishMetric: 1} {
		if metrics[k] != n {
			t.Errorf("%d alarms on %s, want %d (all: %v)", metrics[k], k, n, metrics)
		}
	}
	email := synth(t, map[string]any{CtxAlarmEmail: "ops@example.com"})
	check(t, "alarm e-mail", func() {
		email.tpl.HasResourceProperties(jsii.String("AWS::SNS::Subscription"), map[string]any{"Protocol": "email", "Endpoint": "ops@example.com"})
	})
}

// TestCfnLint runs AWS's cfn-lint on the synthesized template. W3005 (an explicit DependsOn that
// a reference already implies) is what the CDK emits when a function waits for its policy.
func TestCfnLint(t *testing.T) {
	bin, err := exec.LookPath("cfn-lint")
	if err != nil {
		t.Fatalf("cfn-lint is required (pip install cfn-lint): %v", err)
	}
	for name, ctx := range map[string]map[string]any{
		"defaults": nil,
		"oidc-openai": {CtxOIDCIssuer: "https://login.example.com/", CtxOIDCAudience: "a", "SINEW_OPENAI_BASE_URL": "https://llm.example.com/v1",
			CtxBedrockModels: "eu.anthropic.claude-haiku-4-5-20251001-v1:0,global.anthropic.claude-haiku-4-5-20251001-v1:0", CtxCORSOrigins: "*", CtxAlarmEmail: "ops@example.com"},
	} {
		t.Run(name, func(t *testing.T) {
			var s *synthed
			if ctx == nil {
				s = defaultStack(t)
			} else {
				s = synth(t, ctx)
			}
			b, err := json.Marshal(s.json)
			if err != nil {
				t.Fatal(err)
			}
			f := filepath.Join(t.TempDir(), "sinew.template.json")
			if err := os.WriteFile(f, b, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(bin, "--ignore-checks", "W3005", "--", f).CombinedOutput()
			if err != nil {
				t.Errorf("cfn-lint: %v\n%s", err, out)
			}
		})
	}
}

func TestMissingFunctionsStopSynth(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module sinew\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "functions", "api"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "functions", "api", "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	app := awscdk.NewApp(nil)
	_, err := New(app, "sinew", Props{Root: root, Settings: mustSettings(t, nil), Definition: testDefinitions(repoRoot(t))})
	if err == nil {
		t.Fatal("New succeeded with functions missing")
	}
	var missing []string
	for _, f := range deploy.Functions() {
		if f.Name != "api" {
			missing = append(missing, f.Name)
		}
	}
	if !strings.Contains(err.Error(), "not written yet") || !strings.Contains(err.Error(), strings.Join(missing, ", ")) {
		t.Errorf("error %q should name every missing function: %v", err, missing)
	}
	if strings.Contains(err.Error(), "api,") || strings.Contains(err.Error(), ": api") {
		t.Errorf("error %q names api, which exists", err)
	}
}

func TestInputsChecked(t *testing.T) {
	root := repoRoot(t)
	tests := []struct {
		name string
		id   string
		p    Props
		want []string
	}{
		{"bad stack name", "1sinew", Props{}, []string{`stack name "1sinew"`}},
		{"long stack name", strings.Repeat("s", 41), Props{}, []string{"at most 40"}},
		{"definition with an unknown placeholder", "sinew", Props{Definition: func(m deploy.StateMachine) ([]byte, error) {
			return []byte(`{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"x":"${Nope}"},"End":true}}}`), nil
		}}, []string{"uses ${Nope}", "never uses"}},
		{"route to an unknown function", "sinew", Props{Routes: []httpapi.RouteInfo{{Method: "GET", Path: "/x", Function: "nope"}}},
			[]string{`route GET /x: function "nope"`}},
		{"unparsed settings", "sinew", Props{Settings: Settings{}}, []string{"ParseSettings"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.p
			p.Root, p.Code = root, placeholderCode(t)
			if p.Definition == nil {
				p.Definition = testDefinitions(root)
			}
			if p.Settings.Env == nil && tt.name != "unparsed settings" {
				p.Settings = mustSettings(t, nil)
			}
			_, err := New(awscdk.NewApp(nil), tt.id, p)
			if err == nil {
				t.Fatal("New succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestRoutesFromRouter checks routes the router lists become API routes as the stack's rule says:
// public ones without the authorizer, other functions' to them, the api function's own through
// $default.
func TestRoutesFromRouter(t *testing.T) {
	flags := cdkContext(t)
	app := awscdk.NewApp(&awscdk.AppProps{Context: &flags})
	root := repoRoot(t)
	routes := append(DefaultRoutes(),
		httpapi.RouteInfo{Method: "GET", Path: "/agents", Function: "api"},
		httpapi.RouteInfo{Method: "GET", Path: "/status", Function: "api", Public: true},
		httpapi.RouteInfo{Method: "POST", Path: "/tasks/{task_id}/chat", Function: "chat"})
	s, err := New(app, "sinew", Props{Root: root, Settings: mustSettings(t, nil), Code: placeholderCode(t), Definition: testDefinitions(root), Routes: routes})
	if err != nil {
		t.Fatal(err)
	}
	tpl := assertions.Template_FromStack(s.Stack, nil)
	check(t, "routes", func() {
		tpl.ResourceCountIs(jsii.String("AWS::ApiGatewayV2::Route"), jsii.Number(12)) // and the MCP metadata's, endpoints' and imports' six
		tpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Route"), map[string]any{"RouteKey": "GET /status", "AuthorizationType": "NONE"})
		tpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Route"), map[string]any{"RouteKey": "POST /tasks/{task_id}/chat", "AuthorizationType": "JWT"})
		tpl.ResourcePropertiesCountIs(jsii.String("AWS::ApiGatewayV2::Route"), map[string]any{"RouteKey": "GET /agents"}, jsii.Number(0))
	})
}

// TestSystemGetsWhatChatNeeds: the system function runs session.chat, so its role allows at least
// what chat's does.
func TestSystemGetsWhatChatNeeds(t *testing.T) {
	chat, _ := deploy.FunctionByName("chat")
	system, _ := deploy.FunctionByName("system")
	perms := Permissions(system)
	for _, p := range chat.Permissions {
		i := slices.IndexFunc(perms, func(q deploy.Permission) bool { return q.Action == p.Action && q.Target == p.Target })
		if i < 0 {
			t.Errorf("system lacks chat's %s %s", p.Action, p.Target)
			continue
		}
		for _, it := range p.Items {
			if !slices.Contains(perms[i].Items, it) {
				t.Errorf("system lacks chat's %s on %s", p.Action, it)
			}
		}
	}
	for _, p := range system.Permissions {
		if !slices.ContainsFunc(perms, func(q deploy.Permission) bool { return q.Action == p.Action && q.Target == p.Target }) {
			t.Errorf("system lost its own %s %s", p.Action, p.Target)
		}
	}
	pols := defaultStack(t).rolePolicies(t)
	if len(hasAction(pols["system"], "states:StartExecution")) == 0 {
		t.Error("system may not start agent_loop, which chat does")
	}
}

// TestRotationRole: rotate-secrets runs as a role of its own that may scan the table and reseal
// with ReEncrypt, but never decrypt a secret or touch anything else.
func TestRotationRole(t *testing.T) {
	s := defaultStack(t)
	role := s.logicalID(t, s.s.RotationRole.Node().DefaultChild())
	secretsKey := getAtt(s.logicalID(t, s.s.SecretsKey.Node().DefaultChild()), "Arn")
	tableKey := getAtt(s.logicalID(t, s.s.TableKey.Node().DefaultChild()), "Arn")
	var sts []statement
	for _, p := range s.resources("AWS::IAM::Policy") {
		if rb, _ := json.Marshal(props(p)["Roles"]); strings.Contains(string(rb), role) {
			sts = append(sts, statements(props(p)["PolicyDocument"])...)
		}
	}
	allowed := map[string]bool{}
	for _, st := range sts {
		for _, a := range st.Actions {
			allowed[a] = true
			for _, r := range st.Resources {
				if r == "*" {
					t.Errorf("rotation role: %s on *", a)
				}
				if a == "kms:Decrypt" && r == secretsKey {
					t.Error("the rotation role may decrypt secrets")
				}
			}
			if a == "kms:Decrypt" && !slices.Contains(st.Resources, tableKey) {
				t.Errorf("rotation role decrypts with %v, want only the table key through DynamoDB", st.Resources)
			}
		}
	}
	for _, a := range []string{"dynamodb:Scan", "dynamodb:UpdateItem", "kms:ReEncryptFrom", "kms:ReEncryptTo"} {
		if !allowed[a] {
			t.Errorf("rotation role lacks %s", a)
		}
	}
	for _, a := range []string{"dynamodb:DeleteItem", "dynamodb:PutItem", "kms:GenerateDataKey*", "lambda:InvokeFunction", "states:StartExecution"} {
		if allowed[a] {
			t.Errorf("rotation role may %s", a)
		}
	}
	check(t, "assumed from the account", func() {
		s.tpl.HasResourceProperties(jsii.String("AWS::IAM::Role"), map[string]any{
			"Description": assertions.Match_StringLikeRegexp(jsii.String("rotate-secrets")),
			"AssumeRolePolicyDocument": map[string]any{"Statement": []any{map[string]any{
				"Action": "sts:AssumeRole", "Effect": "Allow",
				"Principal": map[string]any{"AWS": assertions.Match_AnyValue()}}}},
		})
	})
}
