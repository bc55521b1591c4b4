package lambdainvoke_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	lambdasdk "github.com/aws/aws-sdk-go-v2/service/lambda"

	"sinew/internal/dispatch"
	"sinew/internal/dispatch/lambdainvoke"
	"sinew/internal/executor"
	"sinew/internal/fault"
	"sinew/internal/localaws/lambdaapi"
	"sinew/internal/tool"
)

// An executor past its timeout fails as Lambda says (Sandbox.Timedout, here from local mode's Invoke
// API): the call's result is a Sinew.Timeout the model can read, not an unknown error name.
func TestExecutorPastItsTimeoutIsATimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	svc := lambdaapi.New(lambdaapi.Options{Logger: slog.New(slog.DiscardHandler), Timeout: func(string) time.Duration { return 50 * time.Millisecond }})
	if err := svc.Register("sinew-integration", lambdaapi.InvokerFunc(func(context.Context, []byte) ([]byte, *lambdaapi.FunctionError, error) {
		<-release
		return []byte(`{}`), nil, nil
	})); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(svc)
	defer srv.Close()
	client := lambdasdk.New(lambdasdk.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")})
	d := &dispatch.Dispatcher{Invoker: &lambdainvoke.Invoker{Client: client},
		Functions: map[tool.Type]string{tool.TypeIntegration: "sinew-integration"}, Backoff: time.Millisecond}
	call := tool.NewCall(&tool.Tool{Name: "echo", Type: tool.TypeIntegration, Integration: &tool.IntegrationDef{Provider: "dummy"}}, tool.NewCallID(), nil)
	res := d.Dispatch(context.Background(), executor.Envelope{Call: call}, &call)
	if res.Error == nil || res.Error.Type != string(fault.Timeout) || !strings.Contains(res.Error.Message, "ran past its timeout") {
		t.Fatalf("result %+v, want a Sinew.Timeout error", res)
	}
}
