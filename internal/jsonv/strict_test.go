package jsonv

import (
	"reflect"
	"testing"

	"sinew/internal/fault"
)

type strictIn struct {
	A struct {
		B int `json:"b"`
	} `json:"a"`
	L []struct {
		B int `json:"b"`
	} `json:"l"`
	X any `json:"x"`
}

// TestStrictDecode: each setting of Strict, on the two documents sinew decodes this way.
func TestStrictDecode(t *testing.T) {
	body := Strict{Subject: "the request body", Field: "body", UTF8: "send JSON encoded as UTF-8", Unknown: "unknown field %q", Object: true, Numbers: true}
	event := Strict{Subject: "the event", Field: "event", UTF8: "JSON must be UTF-8", Unknown: "the event has an unknown field %q"}
	lax := event
	lax.AllowUnknown = true
	tests := []struct {
		name  string
		s     Strict
		in    string
		field string // "": decodes
		msg   string
		x     any // X after a decode
	}{
		{"numbers take this package's form", body, `{"x":[3,1.5]}`, "", "", []any{int64(3), 1.5}},
		{"numbers stay encoding/json's", event, `{"x":[3,1.5]}`, "", "", []any{3.0, 1.5}},
		{"empty", event, " \n", "event", "the event is empty; send a JSON object", nil},
		{"not UTF-8", body, "{\"x\":\"\xff\"}", "body", "the request body is not valid UTF-8; send JSON encoded as UTF-8", nil},
		{"not UTF-8, event", event, "{\"x\":\"\xff\"}", "event", "the event is not valid UTF-8; JSON must be UTF-8", nil},
		{"not an object, refused first", body, `[1]`, "body", "the request body must be a JSON object", nil},
		{"not an object, as a wrong type", event, `[1]`, "event", "the event must be an object, not array", nil},
		{"syntax", event, `{"x" 1}`, "event", "the event is not valid JSON: invalid character '1' after object key (at byte 6)", nil},
		{"cut short", event, `{"x":`, "event", "the event ends in the middle of its JSON value", nil},
		{"data after", body, `{} {}`, "body", "the request body has data after its JSON value", nil},
		{"wrong type, by its path", event, `{"l":[{"b":1},{"b":"2"}]}`, "l[1].b", "l[1].b must be an integer, not string", nil},
		{"unknown field, by its path", body, `{"a":{"b":1,"c":2}}`, "a.c", `unknown field "a.c"`, nil},
		{"unknown field, event", event, `{"a":{"b":1,"c":2}}`, "a.c", `the event has an unknown field "a.c"`, nil},
		{"unknown field ignored", lax, `{"a":{"b":1,"c":2},"x":true}`, "", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var v strictIn
			err := tc.s.Decode([]byte(tc.in), &v)
			if tc.field == "" {
				if err != nil || !reflect.DeepEqual(v.X, tc.x) {
					t.Fatalf("Decode = %v, x %#v; want x %#v", err, v.X, tc.x)
				}
				return
			}
			if !fault.Is(err, fault.InvalidInput) || fault.FieldOf(err) != tc.field || fault.Message(err) != tc.msg {
				t.Errorf("Decode = %v (%s, field %q), want InvalidInput of %q: %q", err, fault.KindOf(err), fault.FieldOf(err), tc.field, tc.msg)
			}
		})
	}
	if err := event.Decode([]byte(`{}`), strictIn{}); !fault.Is(err, fault.Internal) {
		t.Errorf("a non-pointer target is a programming error, got %v", err)
	}
}

// FuzzPathAt: any document, at any offset, gives a path or "", never a panic.
func FuzzPathAt(f *testing.F) {
	f.Add(`{"tools":[{"name":"a","arguments":{"x":1}}]}`, 20)
	f.Add(`{"meta":{"k":{"extra":[1e400]}}}`, 5)
	f.Add(`[]`, 1)
	f.Fuzz(func(t *testing.T, doc string, offset int) {
		_ = pathAt([]byte(doc), int64(offset))
	})
}
