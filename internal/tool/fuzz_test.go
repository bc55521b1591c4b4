package tool

import (
	"encoding/json"
	"strings"
	"testing"

	"sinew/internal/fault"
)

// toolSeeds are real create-tool bodies: the shapes of TestDecodeAndValidate, valid and not.
var toolSeeds = []string{
	`{"name":"get_weather","type":"function","function":{"parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}`,
	`{"name":"ask_human","type":"function","function":{"timeout_seconds":3600,"heartbeat_seconds":60}}`,
	`{"name":"send","type":"integration","integration":{"provider":"email","method":"send","setup":{"host":"h"},"arguments":{"to":"a@b"}}}`,
	`{"name":"list_agents","type":"system","system":{"resource":"agent","operation":"list","arguments":{"limit":5}}}`,
	`{"name":"get_agent","type":"system","system":{"resource":"agent","operation":"get","resource_id":"0190b3c2-7a3e-7c1d-9f00-000000000001","subresource":"tool"}}`,
	`{"name":"weather","type":"api_call","api_call":{"method":"GET","url":"https://api.example.com/v1/{city}","headers":{"Accept":"application/json"},"params_schema":{"type":"object","properties":{"params":{"type":"object"}},"required":["params"]}}}`,
	`{"name":"post","type":"api_call","api_call":{"method":"POST","url":"http://x.test/","json_":{"a":1},"schema_":{},"content":"aGk=","params":"a=1","timeout":5,"secrets":{"k":{"name":"K"}},"cookies":{"c":"v"}}}`,
	`{"name":"t","type":"function","function":{},"system":{"resource":"agent","operation":"list"}}`,
	`{"name":"t","type":"api_call","api_call":{"method":"GET","url":"http://x.test","json":{},"json_":{}}}`,
	`{"name":"t","type":"function","function":{"timeout_seconds":1.5}}`,
	`{"name":"héllo","type":"function","function":{}}`,
	`{"name":"t","type":"api_call","api_call":{"method":"GET","url":"https://u:p@x.test/#f"}}`,
	`{"name":"t","type":"bash_20241022"}`,
	`[1]`, `{"name":`, ``, `null`, `{"name":"t","type":"function","function":null}`,
}

// FuzzDecodeValidate: any create-tool body is refused with a typed InvalidInput that names what to
// fix, or is a tool that still decodes and validates after being written back as JSON (what the
// store and the API answer hand on).
func FuzzDecodeValidate(f *testing.F) {
	for _, s := range toolSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		tl, err := Decode([]byte(body))
		if err == nil {
			err = tl.Validate()
		}
		if err != nil {
			checkInvalid(t, err)
			return
		}
		out, err := json.Marshal(tl)
		if err != nil {
			t.Fatalf("a valid tool does not encode: %v (%s)", err, body)
		}
		again, err := Decode(out)
		if err == nil {
			err = again.Validate()
		}
		if err != nil {
			t.Fatalf("valid tool %s is refused once re-encoded as %s: %v", body, out, err)
		}
		// The envelope built for a valid tool is one every executor accepts.
		c := NewCall(tl, NewCallID(), map[string]any{"x": 1})
		if err := c.Validate(); err != nil {
			t.Fatalf("NewCall of valid tool %s: %v", body, err)
		}
	})
}

// envelopeSeeds are envelopes as the state machines send them, and broken ones.
var envelopeSeeds = []string{
	`{"id":"call_AAAAAAAAAAAAAAAAAAAAAAAA","type":"function","function":{"name":"get_weather","arguments":{"city":"Oslo"}}}`,
	`{"id":"call_abcdefghijklmnopqrstuvwx","type":"integration","integration":{"name":"send","arguments":{}},"model_call_id":"toolu_1"}`,
	`{"id":"call_-_-_-_-_-_-_-_-_-_-_-_-","type":"api_call","api_call":{"name":"weather","arguments":{"path":{"city":"x"}}}}`,
	`{"id":"call_0123456789ABCDEFGHIJKLMN","type":"system","system":{"resource":"agent","operation":"list","resource_id":null,"subresource":null,"arguments":{}}}`,
	`{"id":"call_0123456789ABCDEFGHIJKLMN","type":"system","system":{"resource":"agent","operation":"get","resource_id":"x","subresource":"tool","arguments":null}}`,
	`{"id":"call_x","type":"function","function":{"name":"a"}}`,
	`{"id":"call_AAAAAAAAAAAAAAAAAAAAAAAA","type":"function","integration":{"name":"a"}}`,
	`{"id":"call_AAAAAAAAAAAAAAAAAAAAAAAA","type":"function","function":{"name":""}}`,
	`{"id":"call_AAAAAAAAAAAAAAAAAAAAAAAA","type":"shell"}`,
	`{}`, `[]`,
}

// FuzzCallEnvelope: any envelope is refused with a typed InvalidInput, or is one whose accessors and
// result builders work and which stays valid written back as JSON.
func FuzzCallEnvelope(f *testing.F) {
	for _, s := range envelopeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var c Call
		if json.Unmarshal([]byte(body), &c) != nil {
			return // the Lambda runtime refuses it before any handler runs
		}
		if err := c.Validate(); err != nil {
			checkInvalid(t, err)
			return
		}
		if c.Type != TypeSystem && c.Name() == "" {
			t.Fatalf("valid %s envelope without a name: %s", c.Type, body)
		}
		_ = c.Arguments()
		r := ResultOf(&c, map[string]any{"ok": true})
		e := ErrorResult(&c, string(fault.Provider), "refused")
		if r.ID != c.ID || e.ID != c.ID || r.Type != c.Type || r.Name != e.Name {
			t.Fatalf("results do not name the call: %+v %+v", r, e)
		}
		out, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("a valid envelope does not encode: %v", err)
		}
		var again Call
		if err := json.Unmarshal(out, &again); err != nil {
			t.Fatalf("re-decoding %s: %v", out, err)
		}
		if err := again.Validate(); err != nil {
			t.Fatalf("valid envelope %s is refused once re-encoded as %s: %v", body, out, err)
		}
	})
}

// checkInvalid: a refusal is an InvalidInput with a message a person can act on.
func checkInvalid(t *testing.T, err error) {
	t.Helper()
	if k := fault.KindOf(err); k != fault.InvalidInput {
		t.Fatalf("error of kind %s, want %s: %v", k, fault.InvalidInput, err)
	}
	if strings.TrimSpace(fault.Message(err)) == "" {
		t.Fatalf("error without a message: %#v", err)
	}
}
