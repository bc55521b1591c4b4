package agentloop_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"sinew/internal/loop/agentloop"
)

// The samples under events/agent_loop are the shapes the state machine and the model Lambda take.
func TestSampleEvents(t *testing.T) {
	cases := []struct {
		file string
		into any
	}{
		{"../../../events/agent_loop/input.json", &agentloop.Input{}},
		{"../../../events/agent_loop/model_first_step.json", &agentloop.Event{}},
	}
	for _, c := range cases {
		b, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(c.into); err != nil {
			t.Errorf("%s: %v", c.file, err)
		}
		var keys map[string]any
		_ = json.Unmarshal(b, &keys)
		if in, ok := c.into.(*agentloop.Input); ok {
			// Every key present: the state machine reads them with JSONPath.
			want, _ := json.Marshal(in)
			var wk map[string]any
			_ = json.Unmarshal(want, &wk)
			for k := range wk {
				if _, ok := keys[k]; !ok {
					t.Errorf("%s: key %s missing", c.file, k)
				}
			}
		}
	}
}
