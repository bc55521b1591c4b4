package awslambda

import (
	"context"
	"strings"
	"testing"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"sinew/internal/fault"
	"sinew/internal/integrations"
)

func TestAllowed(t *testing.T) {
	const arn = "arn:aws:lambda:us-east-1:123456789012:function:"
	tests := []struct {
		setting, function, qualifier string
		want                         bool
	}{
		{"adder", "adder", "", true},
		{"adder", "adder:prod", "", true},
		{"adder", "adder", "7", true},
		{"adder", "adders", "", false},
		{"adder:prod", "adder", "", false},
		{"adder:prod", "adder:prod", "", true},
		{"tools-*", "tools-x", "", true},
		{"tools-*", "tool", "", false},
		{"", "adder", "", false},
		{"other, adder", "adder", "", true},
		{arn + "adder", arn + "adder", "", true},
		{arn + "adder", "arn:aws:lambda:us-east-1:999999999999:function:adder", "", false},
		{arn + "adder", "arn:aws:lambda:eu-west-1:123456789012:function:adder", "", false},
		{"adder", arn + "adder", "", true},
	}
	for _, tt := range tests {
		target, err := Setup{Function: tt.function, Qualifier: tt.qualifier}.Validate()
		if err != nil {
			t.Fatalf("%s: %v", tt.function, err)
		}
		if got := Allowed(tt.setting, target); got != tt.want {
			t.Errorf("Allowed(%q, %s %s) = %v, want %v", tt.setting, tt.function, tt.qualifier, got, tt.want)
		}
	}
}

type fakeLambda struct {
	calls int
	out   *lambda.InvokeOutput
	in    *lambda.InvokeInput
}

func (f *fakeLambda) Invoke(_ context.Context, in *lambda.InvokeInput, _ ...func(*lambda.Options)) (*lambda.InvokeOutput, error) {
	f.calls++
	f.in = in
	return f.out, nil
}

// TestInvoke runs the method through a registry: the event is the arguments, the answer the
// output, a function error the tool's error with its message, and a function the setting does
// not name is refused before any request.
func TestInvoke(t *testing.T) {
	fake := &fakeLambda{}
	old := NewInvoker
	NewInvoker = func(awsv2.Config) Invoker { return fake }
	defer func() { NewInvoker = old }()
	reg := integrations.New(nil, integrations.WithAWS(awsv2.Config{Region: "us-east-1"}),
		integrations.WithGetenv(func(k string) string {
			if k == "SINEW_AWS_LAMBDA_FUNCTIONS" {
				return "adder"
			}
			return ""
		}))
	if err := reg.Register(Provider); err != nil {
		t.Fatal(err)
	}
	run := func(fn string, args map[string]any) (any, error) {
		return reg.Execute(context.Background(), "aws_lambda", "invoke", map[string]any{"function": fn}, args)
	}

	fake.out = &lambda.InvokeOutput{StatusCode: 200, Payload: []byte(`{"sum":5}`)}
	out, err := run("adder", map[string]any{"a": 2, "b": 3})
	if err != nil || fake.calls != 1 || string(fake.in.Payload) != `{"a":2,"b":3}` {
		t.Fatalf("invoke: %v %v, sent %s", out, err, fake.in.Payload)
	}
	if m, _ := out.(map[string]any); m == nil || m["sum"] == nil {
		t.Errorf("output %v, want the function's answer", out)
	}

	fake.out = &lambda.InvokeOutput{StatusCode: 200, FunctionError: awsv2.String("Unhandled"),
		Payload: []byte(`{"errorType":"ValueError","errorMessage":"b must be positive"}`)}
	if _, err := run("adder", nil); fault.KindOf(err) != fault.Provider || !strings.Contains(err.Error(), "b must be positive") || !strings.Contains(err.Error(), "ValueError") {
		t.Errorf("function error: %v", err)
	}

	calls := fake.calls
	if _, err := run("billing", nil); fault.KindOf(err) != fault.Forbidden || fake.calls != calls {
		t.Errorf("a function not named: %v (calls %d → %d), want Forbidden before any request", err, calls, fake.calls)
	}
	if _, err := run("not a function!", nil); fault.KindOf(err) != fault.InvalidInput {
		t.Errorf("a bad name: %v, want InvalidInput", err)
	}
}
