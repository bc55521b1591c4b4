package prepare

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"sinew/internal/executor"
	"sinew/internal/lambdaboundary"
	"sinew/internal/workflow"
)

// TestWaitForClientAtTheBoundary: Prepare's answer for a function call is named
// Sinew.WaitForClient, which tool_call's Catch matches, and is not logged as a failure.
func TestWaitForClientAtTheBoundary(t *testing.T) {
	if e := lambdaboundary.Error(waitForClient{}); e.Type != workflow.ErrWaitForClient || e.Message != waitMessage {
		t.Errorf("boundary error = %+v, want %s", e, workflow.ErrWaitForClient)
	}
	var buf bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	defer slog.SetDefault(prev)
	h := lambdaboundary.Wrap(func(context.Context, struct{}) (any, error) { return nil, waitForClient{} })
	if _, err := h(context.Background(), struct{}{}); err == nil {
		t.Fatal("no error")
	}
	if strings.Contains(buf.String(), "handler failed") {
		t.Errorf("logged as a failure: %s", buf.String())
	}
}

// TestDecode: prepare takes the request bare (the Prepare state; v4's Dispatch, with the token
// beside it), inside v5's Dispatch envelope with the token, or Dispatch's envelope with the token
// and no call (route to the Prepare state), and refuses any other envelope.
func TestDecode(t *testing.T) {
	const req = `"developer_id":"dev","agent_id":"a","task_id":null,"session_id":null,"tool":"echo","arguments":{"n":1},"execution_id":"e"`
	for _, tc := range []struct {
		name, event, token, wantErr string
		route, errorResult          bool
	}{
		{"the Prepare state", `{` + req + `}`, "", "", false, false},
		{"the Prepare state reading error results", `{` + req + `,"error_result":true}`, "", "", false, true},
		{"v4's Dispatch", `{` + req + `,"task_token":"t"}`, "t", "", false, false},
		{"v5's Dispatch", `{"call":null,"tool":null,"context":null,"request":{` + req + `},"task_token":"t","held":false}`, "t", "", false, false},
		{"Dispatch, to the Prepare state", `{"call":null,"tool":null,"context":null,"task_token":"t","held":false}`, "t", "", true, false},
		{"an envelope with a call", `{"call":{},"tool":null,"context":{},"request":null,"task_token":"t"}`, "", "Sinew.InvalidInput", false, false},
		{"an envelope without a token", `{"call":null,"tool":null,"context":null,"held":false}`, "", "Sinew.InvalidInput", false, false},
		{"an unknown field", `{` + req + `,"held":true}`, "", "Sinew.InvalidInput", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := decode([]byte(tc.event))
			if tc.wantErr != "" {
				if e := lambdaboundary.Error(err); err == nil || e.Type != tc.wantErr {
					t.Fatalf("error %v, want %s", err, tc.wantErr)
				}
				return
			}
			if err != nil || ev.route != tc.route {
				t.Fatalf("event = %+v, %v; want route %v", ev, err, tc.route)
			}
			if tc.route {
				if ev.token != tc.token {
					t.Errorf("token %q, want %q", ev.token, tc.token)
				}
				return
			}
			in := ev.in
			if in.Tool != "echo" || in.ExecutionID != "e" || in.TaskToken != tc.token || in.Arguments == nil || in.ErrorResult != tc.errorResult {
				t.Errorf("request = %+v", in)
			}
		})
	}
}

// answers records what prepare sent Dispatch's token.
type answers struct{ failures []string }

func (a *answers) SendTaskSuccess(context.Context, *sfn.SendTaskSuccessInput, ...func(*sfn.Options)) (*sfn.SendTaskSuccessOutput, error) {
	return nil, errors.New("prepare answers no token with a success")
}

func (a *answers) SendTaskFailure(_ context.Context, in *sfn.SendTaskFailureInput, _ ...func(*sfn.Options)) (*sfn.SendTaskFailureOutput, error) {
	a.failures = append(a.failures, *in.TaskToken+" "+*in.Error)
	return &sfn.SendTaskFailureOutput{}, nil
}

// TestRouteToPrepare: for Dispatch's token without a call, prepare reads nothing, invokes nothing
// and answers the token with Sinew.Prepare; its own invocation succeeds (no Lambda error).
func TestRouteToPrepare(t *testing.T) {
	sent := &answers{}
	h := lambdaboundary.Handler(Handler(Deps{Tokens: &executor.Tokens{SFN: sent}}))
	out, ierr := lambdaboundary.Invoke(context.Background(), h, []byte(`{"call":null,"tool":null,"context":null,"task_token":"tok","held":false}`))
	if ierr != nil {
		t.Fatalf("invocation failed: %+v", ierr)
	}
	if string(out) != "{}" || len(sent.failures) != 1 || sent.failures[0] != "tok "+workflow.ErrPrepare {
		t.Errorf("answer %s, token answers %v; want {} and %s", out, sent.failures, workflow.ErrPrepare)
	}
}

// TestEvaluate: the evaluate action answers a task machine's evaluator Task at the Lambda
// boundary: the values, an expression's exception as the answer's error (not the invocation's),
// and a malformed request as Sinew.InvalidInput.
func TestEvaluate(t *testing.T) {
	h := lambdaboundary.Handler(Handler(Deps{}))
	for _, tc := range []struct{ in, out, errType string }{
		{`{"evaluate": {"expressions": {"e0": "$ _['xs'][::2]", "e1": "$ list(csv.reader('a,b'))"}, "env": {"_": {"xs": [1, 2, 3]}}}}`,
			`{"values":{"e0":[1,3],"e1":[["a","b"]]},"error":null}`, ""},
		{`{"evaluate": {"expressions": {"e0": "$ _['nope']"}, "env": {"_": {}}}}`,
			`{"values":null,"error":"expression \"_['nope']\": key \"nope\" not in dict"}`, ""},
		{`{"evaluate": {"expressions": {"e0": "$ 1"}, "bogus": 1}}`, "", "Sinew.InvalidInput"},
	} {
		out, ierr := lambdaboundary.Invoke(context.Background(), h, []byte(tc.in))
		switch {
		case tc.errType != "" && (ierr == nil || ierr.Type != tc.errType):
			t.Errorf("%s: %s %+v, want %s", tc.in, out, ierr, tc.errType)
		case tc.errType == "" && (ierr != nil || string(out) != tc.out):
			t.Errorf("%s: %s %+v, want %s", tc.in, out, ierr, tc.out)
		}
	}
}
