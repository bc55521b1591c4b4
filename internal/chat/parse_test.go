package chat_test

import (
	"errors"
	"os"
	"testing"

	"sinew/internal/chat"
	"sinew/internal/fault"
)

func TestParseRequest(t *testing.T) {
	cases := []struct {
		name  string
		body  string
		field string // "" for a valid request
	}{
		{"minimal", `{"messages": [{"role": "user", "content": "hi"}]}`, ""},
		{"all fields", `{"messages": [{"role": "user", "content": "hi"}], "tools": [], "tool_choice": "auto", "auto_run_tools": false,
			"model": "m", "settings": {"temperature": 0.5}, "max_iterations": 3, "async": false, "stream": false}`, ""},
		{"not an object", `[]`, ""},
		{"stream", `{"messages": [{"role": "user", "content": "hi"}], "stream": true}`, "stream"},
		{"no messages", `{"messages": []}`, "messages"},
		{"tool without id", `{"messages": [{"role": "tool", "content": "x"}]}`, "messages[0].tool_call_id"},
		{"bad role", `{"messages": [{"role": "bot", "content": "x"}]}`, "messages[0].role"},
		{"cap too high", `{"messages": [{"role": "user", "content": "hi"}], "max_iterations": 101}`, "max_iterations"},
		{"unknown key", `{"messages": [{"role": "user", "content": "hi"}], "n": 2}`, "n"},
		{"inline setup", `{"messages": [{"role": "user", "content": "hi"}], "tools": [{"name": "w", "type": "integration",
			"integration": {"provider": "dummy", "setup": {"k": "v"}}}]}`, "tools[0].integration.setup"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := chat.ParseRequest([]byte(c.body))
			switch {
			case c.name == "not an object":
				if fault.KindOf(err) != fault.InvalidInput {
					t.Fatalf("err %v, want InvalidInput", err)
				}
			case c.field == "":
				if err != nil {
					t.Fatalf("err %v, want none", err)
				}
			default:
				var fe *fault.Error
				if !asFault(err, &fe) || fe.Kind != fault.InvalidInput || fe.Field != c.field {
					t.Fatalf("err %#v, want InvalidInput on %s", err, c.field)
				}
			}
		})
	}
}

func asFault(err error, fe **fault.Error) bool { return errors.As(err, fe) }

// The sample requests under events/chat parse.
func TestSampleRequests(t *testing.T) {
	for _, f := range []string{"../../events/chat/request.json", "../../events/chat/answer_pending.json"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := chat.ParseRequest(b); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
