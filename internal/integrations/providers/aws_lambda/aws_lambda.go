// Package awslambda is the aws_lambda integration (sinew's own; Julep has none): a developer's
// Lambda function as a tool. The call's arguments are the function's event, its answer the
// tool's result, and a function error (FunctionError) the tool's error, with the function's
// errorType and errorMessage.
//
// The function is invoked with the integration function's own role, so which functions a tool may
// name is the operator's choice, made at deploy time: SINEW_AWS_LAMBDA_FUNCTIONS lists them
// (names, name:qualifier, ARNs, or any of these ending in "*" for a prefix), the stack grants
// lambda:InvokeFunction on exactly those, and this provider refuses every other function before
// any request, so a refusal names the setting rather than surfacing as AccessDenied.
package awslambda

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/invopop/jsonschema"

	"sinew/internal/fault"
	"sinew/internal/integrations"
)

// SettingFunctions is the provider's setting (SINEW_AWS_LAMBDA_FUNCTIONS) naming the functions it
// may invoke.
const SettingFunctions = "FUNCTIONS"

// Setup names the function.
type Setup struct {
	Function  string `json:"function" jsonschema:"minLength=1,maxLength=170" jsonschema_description:"the function's name, name:qualifier or ARN; the operator must have allowed it (SINEW_AWS_LAMBDA_FUNCTIONS)" sinew:"endpoint"`
	Qualifier string `json:"qualifier,omitempty" jsonschema:"maxLength=128" jsonschema_description:"a version or alias to invoke" sinew:"endpoint"`
}

// Arguments are the function's event, whatever their shape.
type Arguments = map[string]any

// Output is the function's answer, whatever JSON it is.
type Output struct{ json.RawMessage }

// MarshalJSON answers the function's JSON as it is (null for an empty answer).
func (o Output) MarshalJSON() ([]byte, error) {
	if len(o.RawMessage) == 0 {
		return []byte("null"), nil
	}
	return o.RawMessage, nil
}

// JSONSchema says the answer may be any JSON value.
func (Output) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Description: "the function's answer, whatever JSON it is"}
}

// Invoker is the one Lambda API call the provider makes; *lambda.Client is one.
type Invoker interface {
	Invoke(ctx context.Context, in *lambda.InvokeInput, opts ...func(*lambda.Options)) (*lambda.InvokeOutput, error)
}

// NewInvoker makes the Lambda client from the registry's AWS configuration; tests replace it.
var NewInvoker = func(cfg awsv2.Config) Invoker { return lambda.NewFromConfig(cfg) }

var clients sync.Map // *awsv2.Config → Invoker: one client per configuration

func invoker(env integrations.Env) (Invoker, error) {
	if env.AWS == nil {
		return nil, fault.New(fault.Internal, "aws_lambda: this registry has no AWS configuration")
	}
	if c, ok := clients.Load(env.AWS); ok {
		return c.(Invoker), nil
	}
	c, _ := clients.LoadOrStore(env.AWS, NewInvoker(*env.AWS))
	return c.(Invoker), nil
}

// Lambda's own pattern of a function name, partial ARN or ARN, with an optional qualifier.
var functionRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(arn:(aws[a-zA-Z-]*):lambda:([a-z]{2}(-gov)?-[a-z]+-\d):(\d{12}):function:)?([a-zA-Z0-9_-]{1,64})(:(\$LATEST|[a-zA-Z0-9_-]{1,128}))?$`)
})

var qualifierRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\$LATEST|[a-zA-Z0-9_-]{1,128})$`) })

// target is a function as a call or the setting names it.
type target struct {
	region, account string // empty for a bare name
	name, qualifier string
}

func parseTarget(s string) (target, bool) {
	m := functionRE().FindStringSubmatch(s)
	if m == nil {
		return target{}, false
	}
	return target{region: m[3], account: m[5], name: m[6], qualifier: m[8]}, true
}

// Validate checks the setup, naming the field at fault.
func (s Setup) Validate() (target, error) {
	t, ok := parseTarget(s.Function)
	if !ok {
		return t, fault.Invalid("setup.function", "setup.function must be a Lambda function's name, name:qualifier or ARN (arn:aws:lambda:<region>:<account>:function:<name>)")
	}
	if s.Qualifier != "" {
		if t.qualifier != "" && t.qualifier != s.Qualifier {
			return t, fault.Invalid("setup.qualifier", "setup.qualifier %q differs from the qualifier in setup.function; give it once", s.Qualifier)
		}
		if !qualifierRE().MatchString(s.Qualifier) {
			return t, fault.Invalid("setup.qualifier", "setup.qualifier must be a version or alias ($LATEST, 1, prod)")
		}
		t.qualifier = s.Qualifier
	}
	return t, nil
}

// Allowed reports whether the setting's list allows t. An entry without a qualifier allows every
// qualifier of its function; one ending in "*" allows the names it starts; one with a region and
// account allows only calls that name the same (a bare name is the function's own account).
func Allowed(setting string, t target) bool {
	for _, e := range strings.Split(setting, ",") {
		e = strings.TrimSpace(e)
		prefix := strings.HasSuffix(e, "*")
		a, ok := parseTarget(strings.TrimSuffix(e, "*"))
		if !ok || (prefix && a.qualifier != "") {
			continue
		}
		if a.account != "" && t.account != "" && (a.account != t.account || a.region != t.region) {
			continue
		}
		nameOK := a.name == t.name || (prefix && strings.HasPrefix(t.name, a.name))
		if nameOK && (a.qualifier == "" || a.qualifier == t.qualifier) {
			return true
		}
	}
	return false
}

func invoke(ctx context.Context, env integrations.Env, s Setup, args Arguments) (Output, error) {
	t, err := s.Validate()
	if err != nil {
		return Output{}, err
	}
	if !Allowed(env.Setting(SettingFunctions), t) {
		return Output{}, fault.New(fault.Forbidden, "the function %s is not one sinew may invoke: the operator allows functions in %s (deployed: the stack's %s setting, which also grants lambda:InvokeFunction on them)",
			t.name, integrations.EnvName(env.Provider, SettingFunctions), integrations.EnvName(env.Provider, SettingFunctions))
	}
	c, err := invoker(env)
	if err != nil {
		return Output{}, err
	}
	if args == nil {
		args = Arguments{}
	}
	payload, err := json.Marshal(args)
	if err != nil {
		return Output{}, fault.Wrap(fault.InvalidInput, err, "the arguments cannot be sent as the function's event")
	}
	in := &lambda.InvokeInput{FunctionName: awsv2.String(s.Function), Payload: payload}
	if s.Qualifier != "" {
		in.Qualifier = awsv2.String(s.Qualifier)
	}
	out, err := c.Invoke(ctx, in)
	if err != nil {
		return Output{}, fault.FromAWS(err, "invoking the function "+t.name)
	}
	if out.FunctionError != nil {
		return Output{}, functionError(t.name, out.Payload)
	}
	if len(strings.TrimSpace(string(out.Payload))) == 0 {
		return Output{}, nil
	}
	if !json.Valid(out.Payload) {
		return Output{}, fault.New(fault.Provider, "the function %s answered something that is not JSON", t.name)
	}
	return Output{out.Payload}, nil
}

// functionError is the tool's error for a function that failed: its own type and message, as the
// runtime reports them ({"errorType", "errorMessage"}).
func functionError(name string, payload []byte) error {
	var fe struct {
		Type    string `json:"errorType"`
		Message string `json:"errorMessage"`
	}
	_ = json.Unmarshal(payload, &fe)
	if fe.Message == "" {
		fe.Message = "(no message)"
	}
	what := "the function " + name + " failed"
	if fe.Type != "" {
		what = fmt.Sprintf("%s with %s", what, fe.Type)
	}
	return fault.New(fault.Provider, "%s: %s", what, clip(fe.Message, 2000))
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// Provider is the aws_lambda provider for the registry.
var Provider = &integrations.Provider{
	Name:         "aws_lambda",
	FriendlyName: "AWS Lambda",
	URL:          "https://aws.amazon.com/lambda/",
	Docs:         "https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html",
	Methods: []*integrations.Method{
		integrations.NewMethod("invoke", "Invoke a Lambda function with the arguments as its event and return its answer.", invoke),
	},
}
