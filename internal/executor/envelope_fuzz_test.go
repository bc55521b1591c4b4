package executor

import (
	"encoding/json"
	"strings"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/tool"
)

// FuzzCheckEnvelope: any executor event is refused with a typed InvalidInput naming what is wrong,
// or holds everything an executor reads next (a call of its type, the tool under the call's name,
// the developer and agent), so no handler dereferences a missing part.
func FuzzCheckEnvelope(f *testing.F) {
	ctx := `"context":{"developer_id":"dev-1","agent_id":"0190b3c2-7a3e-7c1d-9f00-000000000001","task_id":null,"session_id":null,"execution_id":"e","depth":0}`
	for _, s := range []string{
		`{"call":{"id":"call_AAAAAAAAAAAAAAAAAAAAAAAA","type":"integration","integration":{"name":"send","arguments":{"to":"a@b"}}},` +
			`"tool":{"name":"send","type":"integration","integration":{"provider":"dummy"}},` + ctx + `}`,
		`{"call":{"id":"call_AAAAAAAAAAAAAAAAAAAAAAAA","type":"api_call","api_call":{"name":"w","arguments":{}}},` +
			`"tool":{"name":"w","type":"api_call","api_call":{"method":"GET","url":"http://x.test/{a}"}},` + ctx + `}`,
		`{"call":{"id":"call_AAAAAAAAAAAAAAAAAAAAAAAA","type":"api_call","api_call":{"name":"w","arguments":{}}},"tool":null,` + ctx + `}`,
		`{"call":{"id":"call_AAAAAAAAAAAAAAAAAAAAAAAA","type":"integration","integration":{"name":"a"}},"tool":{"name":"b","integration":{}},` + ctx + `}`,
		`{"call":{"id":"call_AAAAAAAAAAAAAAAAAAAAAAAA","type":"system","system":{"resource":"agent","operation":"list"}},"tool":{"name":"s","system":{}},"context":{}}`,
		`{"call":{},"tool":{},"context":{},"task_token":"t"}`,
		`{}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var in Envelope
		if json.Unmarshal([]byte(body), &in) != nil {
			return // aws-lambda-go refuses it before the handler runs
		}
		for _, typ := range []tool.Type{tool.TypeIntegration, tool.TypeAPICall} {
			// The handlers' own notion of "has the definition".
			hasDef := in.Tool != nil && ((typ == tool.TypeIntegration && in.Tool.Integration != nil) || (typ == tool.TypeAPICall && in.Tool.APICall != nil))
			err := CheckEnvelope(in, typ, hasDef)
			if err != nil {
				if k := fault.KindOf(err); k != fault.InvalidInput {
					t.Fatalf("%s: error of kind %s: %v", typ, k, err)
				}
				if strings.TrimSpace(fault.Message(err)) == "" || fault.FieldOf(err) == "" {
					t.Fatalf("%s: refusal without a message or field: %#v", typ, err)
				}
				continue
			}
			switch {
			case in.Call.Type != typ:
				t.Fatalf("%s executor accepted a %s call", typ, in.Call.Type)
			case in.Tool == nil || !hasDef:
				t.Fatalf("%s executor accepted an event without the definition: %s", typ, body)
			case in.Tool.Name != in.Call.Name() || in.Call.Name() == "":
				t.Fatalf("tool %q accepted for call %q", in.Tool.Name, in.Call.Name())
			case in.Context.DeveloperID == "" || in.Context.AgentID == "":
				t.Fatalf("accepted without developer or agent: %+v", in.Context)
			}
		}
	})
}
