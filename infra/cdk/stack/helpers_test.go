package stack

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"

	"sinew/internal/deploy"
)

// One node process (the jsii kernel) serves every test of the binary; close it at the end.
func TestMain(m *testing.M) {
	code := m.Run()
	jsii.Close()
	os.Exit(code)
}

// check runs f and turns a jsii assertion failure (a Go panic) into a test error, so one failed
// assertion does not abort the whole binary.
func check(t *testing.T, name string, f func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s: %v", name, r)
		}
	}()
	f()
}

func repoRoot(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := FindRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// cdkContext is cdk.json's context (the feature flags): the CLI hands it to the app, go test does
// not, and the flags change the template.
func cdkContext(t testing.TB) map[string]interface{} {
	t.Helper()
	raw, err := os.ReadFile("../cdk.json")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Context map[string]interface{} `json:"context"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	return c.Context
}

// placeholderCode is a code source for the unit tests only: an asset folder holding a file named
// bootstrap, so the template's shape can be asserted before every function is written and without
// cross-compiling nine binaries. The real app always uses GoBuildCode.
func placeholderCode(t testing.TB) CodeSource {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bootstrap"), []byte("placeholder for template tests\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return func(string) awslambda.Code { return awslambda.Code_FromAsset(jsii.String(dir), nil) }
}

// testDefinitions reads each definition from the repository; for one not written yet it gives a
// placeholder that uses every substitution the description defines (unit tests only).
func testDefinitions(root string) func(m deploy.StateMachine) ([]byte, error) {
	return func(m deploy.StateMachine) ([]byte, error) {
		raw, err := os.ReadFile(filepath.Join(root, m.File))
		if !errors.Is(err, fs.ErrNotExist) {
			return raw, err
		}
		params := map[string]string{}
		for _, s := range m.Substitutions {
			params[s.Placeholder] = "${" + s.Placeholder + "}"
		}
		return json.Marshal(map[string]any{"Comment": "placeholder: " + m.File + " is not written yet", "StartAt": "P",
			"States": map[string]any{"P": map[string]any{"Type": "Pass", "Parameters": params, "End": true}}})
	}
}

func mustSettings(t testing.TB, ctx map[string]any) Settings {
	t.Helper()
	var keys []string
	for k := range ctx {
		keys = append(keys, k)
	}
	s, err := ParseSettings(func(k string) (any, bool) { v, ok := ctx[k]; return v, ok }, keys)
	if err != nil {
		t.Fatalf("settings %v: %v", ctx, err)
	}
	return s
}

// synth builds a stack with the given settings (and cdk-nag) and gives its template and stack.
type synthed struct {
	stack awscdk.Stack
	tpl   assertions.Template
	json  map[string]any
	s     *Sinew
}

func synth(t testing.TB, ctx map[string]any) *synthed { return synthWith(t, ctx, false) }

// synthWith applies cdk-nag when nag is set, for the cdk-nag tests, which read the annotations.
func synthWith(t testing.TB, ctx map[string]any, nag bool) *synthed {
	t.Helper()
	flags := cdkContext(t)
	if nag {
		// With this flag (cdk.json sets it) an error annotation fails the synth, as `cdk synth` should;
		// the test turns it off to read the findings instead.
		flags["@aws-cdk/core:annotationsInValidationReport"] = false
	}
	app := awscdk.NewApp(&awscdk.AppProps{Context: &flags})
	root := repoRoot(t)
	s, err := New(app, "sinew", Props{Root: root, Settings: mustSettings(t, ctx), Code: placeholderCode(t), Definition: testDefinitions(root)})
	if err != nil {
		t.Fatal(err)
	}
	if nag {
		ApplyChecks(app)
		return &synthed{stack: s.Stack, s: s}
	}
	tpl := assertions.Template_FromStack(s.Stack, nil)
	raw, err := json.Marshal(tpl.ToJSON())
	if err != nil {
		t.Fatal(err)
	}
	var j map[string]any
	if err := json.Unmarshal(raw, &j); err != nil {
		t.Fatal(err)
	}
	return &synthed{stack: s.Stack, tpl: tpl, json: j, s: s}
}

var (
	defaultOnce sync.Once
	defaultSyn  *synthed
)

// defaultStack is the stack with every setting at its default, synthesized once for the tests
// that only read it.
func defaultStack(t *testing.T) *synthed {
	t.Helper()
	defaultOnce.Do(func() { defaultSyn = synth(t, map[string]any{}) })
	if defaultSyn == nil {
		t.Fatal("the default stack did not synthesize")
	}
	return defaultSyn
}

func (s *synthed) resources(typ string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for id, r := range s.json["Resources"].(map[string]any) {
		rm := r.(map[string]any)
		if rm["Type"] == typ {
			out[id] = rm
		}
	}
	return out
}

func props(r map[string]any) map[string]any {
	p, _ := r["Properties"].(map[string]any)
	return p
}

// statement is one IAM statement with its actions and resources as strings (intrinsics rendered as
// JSON), for comparisons.
type statement struct {
	Sid       string
	Effect    string
	Actions   []string
	Resources []string
	Principal string
	Condition map[string]any
}

func asStrings(v any) []string {
	var out []string
	switch x := v.(type) {
	case nil:
	case string:
		out = append(out, x)
	case []any:
		for _, e := range x {
			out = append(out, asStrings(e)...)
		}
	default:
		b, _ := json.Marshal(x)
		out = append(out, string(b))
	}
	sort.Strings(out)
	return out
}

// asAny is list as the template's JSON decodes it.
func asAny(list []string) []any {
	out := make([]any, len(list))
	for i, v := range list {
		out[i] = v
	}
	return out
}

func statements(doc any) []statement {
	var out []statement
	d, _ := doc.(map[string]any)
	list, _ := d["Statement"].([]any)
	for _, s := range list {
		m := s.(map[string]any)
		sid, _ := m["Sid"].(string)
		eff, _ := m["Effect"].(string)
		p, _ := json.Marshal(m["Principal"])
		cond, _ := m["Condition"].(map[string]any)
		out = append(out, statement{Sid: sid, Effect: eff, Actions: asStrings(m["Action"]), Resources: asStrings(m["Resource"]), Principal: string(p), Condition: cond})
	}
	return out
}

// rolePolicies maps each function to the statements of the identity policies on its role.
func (s *synthed) rolePolicies(t *testing.T) map[string][]statement {
	t.Helper()
	roleOf := map[string]string{} // role logical id -> function
	for _, f := range deploy.Functions() {
		roleOf[s.logicalID(t, s.s.Roles[f.Name].Node().DefaultChild())] = f.Name
	}
	out := map[string][]statement{}
	for _, p := range s.resources("AWS::IAM::Policy") {
		for _, r := range props(p)["Roles"].([]any) {
			ref := r.(map[string]any)["Ref"].(string)
			if fn, ok := roleOf[ref]; ok {
				out[fn] = append(out[fn], statements(props(p)["PolicyDocument"])...)
			}
		}
	}
	return out
}

func (s *synthed) logicalID(t *testing.T, c any) string {
	t.Helper()
	el, ok := c.(awscdk.CfnElement)
	if !ok {
		t.Fatalf("%T is not a CfnElement", c)
	}
	switch v := s.stack.Resolve(el.LogicalId()).(type) {
	case string:
		return v
	case *string:
		return *v
	default:
		t.Fatalf("logical id resolved to %T", v)
		return ""
	}
}

// ref renders how the template refers to a construct's attribute, as asStrings does.
func getAtt(id, attr string) string { return fmt.Sprintf(`{"Fn::GetAtt":["%s","%s"]}`, id, attr) }

func hasAction(sts []statement, action string) []statement {
	var out []statement
	for _, s := range sts {
		if slices.Contains(s.Actions, action) {
			out = append(out, s)
		}
	}
	return out
}

func contains(list []string, sub string) bool {
	return slices.ContainsFunc(list, func(s string) bool { return strings.Contains(s, sub) })
}

func awsiamStatement(action, resource string) awsiam.PolicyStatement {
	return awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{Actions: jsii.Strings(action), Resources: jsii.Strings(resource)})
}

// keyPolicy is the secrets key's policy.
func keyPolicy(t *testing.T, s *synthed) []statement {
	t.Helper()
	id := s.logicalID(t, s.s.SecretsKey.Node().DefaultChild())
	return statements(props(s.resources("AWS::KMS::Key")[id])["KeyPolicy"])
}

// definition renders a state machine's DefinitionString, a string or a join of strings and
// AWS::Partition, with <partition> for the partition.
func definition(p map[string]any) (string, bool) {
	switch d := p["DefinitionString"].(type) {
	case string:
		return d, true
	case map[string]any:
		join, _ := d["Fn::Join"].([]any)
		if len(join) != 2 || join[0] != "" {
			return "", false
		}
		var b strings.Builder
		for _, part := range join[1].([]any) {
			switch v := part.(type) {
			case string:
				b.WriteString(v)
			case map[string]any:
				if v["Ref"] != "AWS::Partition" {
					return "", false
				}
				b.WriteString("<partition>")
			}
		}
		return b.String(), true
	}
	return "", false
}
