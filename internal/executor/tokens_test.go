package executor

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"sinew/internal/fault"
	"sinew/internal/tool"
)

// recordingSFN keeps what was sent and fails with err.
type recordingSFN struct {
	success, failure []string // output; error + "|" + cause
	err              error
}

func (r *recordingSFN) SendTaskSuccess(_ context.Context, in *sfn.SendTaskSuccessInput, _ ...func(*sfn.Options)) (*sfn.SendTaskSuccessOutput, error) {
	r.success = append(r.success, *in.Output)
	return &sfn.SendTaskSuccessOutput{}, r.err
}

func (r *recordingSFN) SendTaskFailure(_ context.Context, in *sfn.SendTaskFailureInput, _ ...func(*sfn.Options)) (*sfn.SendTaskFailureOutput, error) {
	r.failure = append(r.failure, *in.Error+"|"+*in.Cause)
	return &sfn.SendTaskFailureOutput{}, r.err
}

// TestAnswerOrReturn: without a token the result object (or the error) is the invocation's answer;
// with one, the output or the error's Sinew.* name and message go to the token, and the invocation
// fails only when the answer could not be sent (a token no longer awaited is no failure); whole
// answers the token with the result object.
func TestAnswerOrReturn(t *testing.T) {
	call := tool.Call{ID: "call_AAAAAAAAAAAAAAAAAAAAAAAA", Type: tool.TypeIntegration, Integration: &tool.NamedCall{Name: "echo"}}
	runErr := fault.New(fault.Provider, "the service refused")
	tests := []struct {
		name        string
		token       string
		whole       bool
		runErr      error
		sendErr     error
		wantSuccess []string
		wantFailure []string
		wantErr     fault.Kind // "" for none
	}{
		{"no token, success", "", false, nil, nil, nil, nil, ""},
		{"no token, failure", "", false, runErr, nil, nil, nil, fault.Provider},
		{"no token, whole: still the result object", "", true, nil, nil, nil, nil, ""},
		{"token, success", "tok", false, nil, nil, []string{`{"n":1}`}, nil, ""},
		{"token, success, whole", "tok", true, nil, nil, []string{`{"id":"call_AAAAAAAAAAAAAAAAAAAAAAAA","name":"echo","output":{"n":1},"type":"integration"}`}, nil, ""},
		{"token, failure", "tok", false, runErr, nil, nil, []string{"Sinew.Provider|the service refused"}, ""},
		{"token, failure, whole: the error alone", "tok", true, runErr, nil, nil, []string{"Sinew.Provider|the service refused"}, ""},
		{"token no longer awaited", "tok", false, nil, &sfntypes.TaskTimedOut{Message: new(string)}, []string{`{"n":1}`}, nil, ""},
		{"Step Functions unavailable", "tok", false, nil, errors.New("connection refused"), []string{`{"n":1}`}, nil, fault.Transient},
		{"unavailable, after a failed run", "tok", false, runErr, errors.New("connection refused"), nil, []string{"Sinew.Provider|the service refused"}, fault.Provider},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recordingSFN{err: tt.sendErr}
			out, err := answerOrReturn(context.Background(), &Tokens{SFN: rec}, tt.token, tt.whole, false, &call, map[string]any{"n": 1}, tt.runErr)
			if got := fault.Kind(""); err != nil {
				got = fault.KindOf(err)
				if got != tt.wantErr {
					t.Fatalf("error %v (%s), want %q", err, got, tt.wantErr)
				}
			} else if tt.wantErr != "" {
				t.Fatalf("no error, want %s", tt.wantErr)
			}
			if strings.Join(rec.success, ",") != strings.Join(tt.wantSuccess, ",") || strings.Join(rec.failure, ",") != strings.Join(tt.wantFailure, ",") {
				t.Errorf("sent success %v failure %v, want %v %v", rec.success, rec.failure, tt.wantSuccess, tt.wantFailure)
			}
			if tt.token == "" && tt.runErr == nil && (out["id"] != call.ID || out["name"] != "echo") {
				t.Errorf("answer = %v, want the result object", out)
			}
		})
	}
}
