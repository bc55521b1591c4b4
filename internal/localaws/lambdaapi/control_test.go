package lambdaapi

import (
	"context"
	"encoding/base64"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/smithy-go"
)

func TestInvokeLogTail(t *testing.T) {
	ctx := context.Background()
	// The function logs with its invocation's context through a logger TeeLogs wraps, as local
	// mode's handlers do, and writes a long line of its own.
	logger := slog.New(TeeLogs(slog.DiscardHandler))
	chatty := InvokerFunc(func(ctx context.Context, payload []byte) ([]byte, *FunctionError, error) {
		logger.InfoContext(ctx, "working on it", "step", 1)
		_, _ = InvocationLog(ctx).Write([]byte(strings.Repeat("x", 5000) + "\n"))
		logger.InfoContext(ctx, "done", "step", 2)
		return payload, nil, nil
	})
	_, client, _ := start(t, map[string]Invoker{"chatty": chatty})
	out, err := client.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String("chatty"), Payload: []byte(`{}`), LogType: types.LogTypeTail})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(aws.ToString(out.LogResult))
	if err != nil {
		t.Fatalf("LogResult %q is not base64: %v", aws.ToString(out.LogResult), err)
	}
	log := string(raw)
	if len(raw) != maxLogResult {
		t.Fatalf("LogResult holds %d bytes, want the last %d", len(raw), maxLogResult)
	}
	for _, want := range []string{`"msg":"done","step":2`, "END RequestId: ", "REPORT RequestId: ", "Duration: "} {
		if !strings.Contains(log, want) {
			t.Errorf("log tail lacks %q:\n%s", want, log[len(log)-400:])
		}
	}
	if strings.Contains(log, "START RequestId") {
		t.Errorf("the tail should have dropped the log's start: %s", log[:200])
	}
	// Without LogType Tail there is none.
	out, err = client.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String("chatty"), Payload: []byte(`{}`)})
	if err != nil || out.LogResult != nil {
		t.Fatalf("LogType None: %v, LogResult %v", err, out.LogResult)
	}
}

func TestListAndGetFunctions(t *testing.T) {
	ctx := context.Background()
	_, client, _ := start(t, map[string]Invoker{"b-fn": echo, "a-fn": echo, "c-fn": echo})
	var names []string
	p := awslambda.NewListFunctionsPaginator(client, &awslambda.ListFunctionsInput{MaxItems: aws.Int32(2)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range page.Functions {
			names = append(names, aws.ToString(f.FunctionName))
		}
	}
	if strings.Join(names, ",") != "a-fn,b-fn,c-fn" {
		t.Fatalf("ListFunctions gave %v", names)
	}
	got, err := client.GetFunction(ctx, &awslambda.GetFunctionInput{FunctionName: aws.String("b-fn")})
	if err != nil {
		t.Fatal(err)
	}
	if c := got.Configuration; aws.ToString(c.FunctionArn) != "arn:aws:lambda:us-east-1:000000000000:function:b-fn" || aws.ToInt32(c.Timeout) != 900 || c.State != types.StateActive {
		t.Fatalf("GetFunction configuration %+v", c)
	}
	var nf *types.ResourceNotFoundException
	if _, err := client.GetFunction(ctx, &awslambda.GetFunctionInput{FunctionName: aws.String("nope")}); !errors.As(err, &nf) {
		t.Fatalf("GetFunction of an unknown function: %v, want ResourceNotFoundException", err)
	}
	// An operation local mode does not have answers Lambda's error shape, not a bare 404.
	_, err = client.ListAliases(ctx, &awslambda.ListAliasesInput{FunctionName: aws.String("a-fn")})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "UnknownOperationException" {
		t.Fatalf("ListAliases: %v, want UnknownOperationException", err)
	}
}
