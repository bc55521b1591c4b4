package sfnapi

import (
	"encoding/json"
	"strings"
)

// executionData are the members of an event's details that hold execution data: what
// includeExecutionData=false leaves out ("input or output of a history event",
// https://docs.aws.amazon.com/step-functions/latest/apireference/API_GetExecutionHistory.html; a
// task's parameters are its input). The *Details flags and error names stay.
var executionData = []string{"input", "output", "parameters"}

// withoutData is events with their execution data left out.
func withoutData(events []json.RawMessage) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, len(events))
	for i, raw := range events {
		var ev map[string]json.RawMessage
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, err
		}
		for k, v := range ev {
			if !strings.HasSuffix(k, "EventDetails") {
				continue
			}
			var d map[string]json.RawMessage
			if json.Unmarshal(v, &d) != nil {
				continue
			}
			for _, m := range executionData {
				delete(d, m)
			}
			b, err := json.Marshal(d)
			if err != nil {
				return nil, err
			}
			ev[k] = b
		}
		b, err := json.Marshal(ev)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}
