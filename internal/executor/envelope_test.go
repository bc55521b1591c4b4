package executor

import (
	"testing"

	"sinew/internal/lambdaboundary"
)

// TestEnvelopeModes: where a call's claim lives and how a token is answered, for each envelope
// tool_call's definitions, agent_loop and the chat path send.
func TestEnvelopeModes(t *testing.T) {
	for _, tc := range []struct {
		name            string
		event           string
		onRecord, whole bool
	}{
		{"the chat path, agent_loop", `{"call":{},"tool":null,"context":{}}`, false, true},
		{"Dispatch", `{"call":{},"tool":null,"context":{},"request":null,"task_token":"t","held":true}`, true, true},
		{"prepare handing on", `{"call":{},"tool":null,"context":{},"task_token":"t"}`, true, true},
		{"v4's Dispatch", `{"call":{},"tool":null,"context":{},"task_token":"t","record":true,"whole_result":true,"held":false}`, true, true},
		{"v3's JSONPath Dispatch", `{"call":{},"tool":null,"context":{},"task_token":"t","record":true}`, true, false},
		{"v2's and v3's Execute", `{"call":{},"tool":null,"context":{},"record":true,"held":true}`, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in Envelope
			if err := lambdaboundary.DecodeEvent([]byte(tc.event), &in); err != nil {
				t.Fatal(err)
			}
			if in.onRecord() != tc.onRecord || (in.TaskToken != "" && in.answersWhole() != tc.whole) {
				t.Errorf("on record %v, whole %v; want %v, %v", in.onRecord(), in.answersWhole(), tc.onRecord, tc.whole)
			}
		})
	}
}
