package taskexec_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"sinew/internal/asl"
	"sinew/internal/julep/taskexec"
	"sinew/internal/localaws/durable"
	"sinew/internal/localaws/sfnapi"
	"sinew/internal/store"
)

// countingSFN is a Step Functions client that counts the calls Get makes.
type countingSFN struct {
	*sfn.Client
	mu    sync.Mutex
	calls map[string]int
}

func (c *countingSFN) count(op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[op]++
}

func (c *countingSFN) GetExecutionHistory(ctx context.Context, in *sfn.GetExecutionHistoryInput, o ...func(*sfn.Options)) (*sfn.GetExecutionHistoryOutput, error) {
	c.count("GetExecutionHistory")
	return c.Client.GetExecutionHistory(ctx, in, o...)
}

func (c *countingSFN) DescribeStateMachineForExecution(ctx context.Context, in *sfn.DescribeStateMachineForExecutionInput, o ...func(*sfn.Options)) (*sfn.DescribeStateMachineForExecutionOutput, error) {
	c.count("DescribeStateMachineForExecution")
	return c.Client.DescribeStateMachineForExecution(ctx, in, o...)
}

// noLambda is the engine's Lambda for a machine that invokes none.
type noLambda struct{}

func (noLambda) Invoke(context.Context, asl.LambdaRequest) (*asl.LambdaResponse, error) {
	return nil, errors.New("this test's machine invokes no Lambda")
}

// TestGetReadsTheDefinitionOnce: Get answers a task execution from its history, and reads the
// definition it ran once per execution, against local mode's Step Functions API through the SDK.
func TestGetReadsTheDefinitionOnce(t *testing.T) {
	st, err := durable.Open(filepath.Join(t.TempDir(), "sfn.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	rec := durable.NewRecorder(st, noLambda{}, nil, nil)
	svc := sfnapi.New(sfnapi.Options{Store: st, Recorder: rec, Engine: asl.New(asl.Config{Lambda: rec, Clock: rec})})
	srv := httptest.NewServer(svc)
	t.Cleanup(srv.Close)
	c := &countingSFN{Client: sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}, sfnapi.NoHostPrefix), calls: map[string]int{}}
	ctx := context.Background()
	def := `{"StartAt":"main.0","States":{"main.0":{"Type":"Pass","Comment":"evaluate","Next":"main.1"},` +
		`"main.1":{"Type":"Pass","Comment":"return","Parameters":{"done.$":"$.input.n"},"End":true}}}`
	m, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("task-t1"), Definition: aws.String(def),
		RoleArn: aws.String("arn:aws:iam::000000000000:role/task")})
	if err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(taskexec.Input{DeveloperID: "dev", TaskID: "t1", Workflow: "main", Input: map[string]any{"n": 7}})
	if _, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: m.StateMachineArn, Name: aws.String("x1"), Input: aws.String(string(in))}); err != nil {
		t.Fatal(err)
	}
	s := &taskexec.Service{SFN: c, MachineARN: func(string) (string, error) { return *m.StateMachineArn, nil }}
	x := &store.Execution{ExecutionID: "x1", TaskID: "t1", Workflow: "task"}
	var got *taskexec.Execution
	for range 500 {
		if got, err = s.Get(ctx, "dev", x); err != nil {
			t.Fatal(err)
		}
		if got.Status != "running" {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	polls := c.calls["GetExecutionHistory"]
	out, _ := json.Marshal(got.Output)
	if got.Status != "succeeded" || string(out) != `{"done":7}` || got.TransitionCount == nil || *got.TransitionCount != 4 ||
		got.Input.(map[string]any)["n"] != float64(7) {
		t.Fatalf("Get = %+v (output %s)", got, out)
	}
	if _, err := s.Get(ctx, "dev", x); err != nil {
		t.Fatal(err)
	}
	if c.calls["GetExecutionHistory"] != polls+1 || c.calls["DescribeStateMachineForExecution"] != 1 {
		t.Errorf("%d Gets made the calls %v, want one history read each and one definition read", polls+1, c.calls)
	}
}
