package httpapi

import (
	"net/url"
	"reflect"
	"strings"
	"testing"

	"sinew/internal/fault"
)

type toolIn struct {
	Name    string         `json:"name"`
	Timeout *int64         `json:"timeout,omitempty"`
	APICall *apiCallIn     `json:"api_call,omitempty"`
	Args    map[string]any `json:"arguments,omitempty"`
	Tags    []string       `json:"tags,omitempty"`
	Extra   any            `json:"extra,omitempty"`
	Embedded
}

type Embedded struct {
	Note string `json:"note,omitempty"`
}

type apiCallIn struct {
	Method  string            `json:"method"`
	Headers map[string]string `json:"headers,omitempty"`
}

type createIn struct {
	Tools []toolIn          `json:"tools"`
	Meta  map[string]toolIn `json:"meta,omitempty"`
}

func TestDecodeJSON(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		field     string // "" means success
		msgHas    string
		checkTool func(t *testing.T, v createIn)
	}{
		{"ok", `{"tools":[{"name":"a","timeout":5,"api_call":{"method":"GET"},"note":"n"}]}`, "", "", func(t *testing.T, v createIn) {
			if v.Tools[0].Name != "a" || *v.Tools[0].Timeout != 5 || v.Tools[0].APICall.Method != "GET" || v.Tools[0].Note != "n" {
				t.Errorf("decoded %+v", v.Tools[0])
			}
		}},
		{"numbers in interface values take the jsonv form", `{"tools":[{"name":"a","arguments":{"i":3,"f":1.5,"big":12345678901234,"list":[1,2.0],"obj":{"x":7}},"extra":9}],"meta":{"m":{"name":"x","extra":[4]}}}`, "", "", func(t *testing.T, v createIn) {
			args := v.Tools[0].Args
			want := map[string]any{"i": int64(3), "f": 1.5, "big": int64(12345678901234), "list": []any{int64(1), 2.0}, "obj": map[string]any{"x": int64(7)}}
			if !reflect.DeepEqual(args, want) {
				t.Errorf("arguments %#v, want %#v", args, want)
			}
			if v.Tools[0].Extra != int64(9) {
				t.Errorf("extra %#v", v.Tools[0].Extra)
			}
			if !reflect.DeepEqual(v.Meta["m"].Extra, []any{int64(4)}) {
				t.Errorf("map element's extra %#v", v.Meta["m"].Extra)
			}
		}},
		{"empty", ``, "body", "empty", nil},
		{"blank", " \n\t", "body", "empty", nil},
		{"not an object", `[1,2]`, "body", "must be a JSON object", nil},
		{"null", `null`, "body", "must be a JSON object", nil},
		{"string", `"x"`, "body", "must be a JSON object", nil},
		{"syntax", `{"tools": [}`, "body", "not valid JSON", nil},
		{"truncated", `{"tools": [`, "body", "ends in the middle", nil},
		{"trailing data", `{"tools":[]} x`, "body", "after its JSON value", nil},
		{"two values", `{"tools":[]}{"tools":[]}`, "body", "after its JSON value", nil},
		{"unknown top field", `{"tools":[],"toolz":1}`, "toolz", `unknown field "toolz"`, nil},
		{"unknown nested field", `{"tools":[{"name":"a"},{"name":"b","api_call":{"methd":"GET"}}]}`, "tools[1].api_call.methd", `unknown field "tools[1].api_call.methd"`, nil},
		{"unknown in map value", `{"tools":[],"meta":{"k":{"nam":"x"}}}`, "meta.k.nam", "unknown field", nil},
		{"keys match case-insensitively as encoding/json does", `{"TOOLS":[{"NAME":"a"}],"x":1}`, "x", "unknown field", nil},
		{"wrong type top", `{"tools":{}}`, "tools", "tools must be an array, not object", nil},
		{"wrong type nested", `{"tools":[{"name":1}]}`, "tools[0].name", "tools[0].name must be a string, not number", nil},
		{"wrong type integer", `{"tools":[{"name":"a"},{"name":"b","timeout":1.5}]}`, "tools[1].timeout", "must be an integer", nil},
		{"wrong type object for array", `{"tools":[{"name":"a","tags":{"x":[1]}}]}`, "tools[0].tags", "must be an array, not object", nil},
		{"wrong type array for string", `{"tools":[{"name":["a"]}]}`, "tools[0].name", "must be a string, not array", nil},
		{"wrong type in map of structs", `{"tools":[],"meta":{"k1":{"name":"x"},"k2":{"name":true}}}`, "meta.k2.name", "must be a string", nil},
		{"wrong type whole body", `{"tools":[], "meta": 3}`, "meta", "must be an object", nil},
		{"wrong type map value", `{"tools":[{"name":"a","api_call":{"method":"GET","headers":{"a":1}}}]}`, "tools[0].api_call.headers.a", "must be a string", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v createIn
			err := DecodeJSON([]byte(tt.body), &v)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("DecodeJSON: %v", err)
				}
				if tt.checkTool != nil {
					tt.checkTool(t, v)
				}
				return
			}
			if !fault.Is(err, fault.InvalidInput) {
				t.Fatalf("want InvalidInput, got %v (%s)", err, fault.KindOf(err))
			}
			if fault.FieldOf(err) != tt.field {
				t.Errorf("field %q, want %q (%v)", fault.FieldOf(err), tt.field, err)
			}
			if !strings.Contains(fault.Message(err), tt.msgHas) {
				t.Errorf("message %q lacks %q", fault.Message(err), tt.msgHas)
			}
		})
	}
}

func TestDecodeJSONIntoAny(t *testing.T) {
	var v any
	if err := DecodeJSON([]byte(`[1, 2.5, {"a": 3}]`), &v); err != nil {
		t.Fatal(err)
	}
	if want := []any{int64(1), 2.5, map[string]any{"a": int64(3)}}; !reflect.DeepEqual(v, want) {
		t.Errorf("got %#v, want %#v", v, want)
	}
	if err := DecodeJSON([]byte(`{}`), createIn{}); !fault.Is(err, fault.Internal) {
		t.Errorf("a non-pointer target is a programming error, got %v", err)
	}
}

func TestParsePage(t *testing.T) {
	tests := []struct {
		query  string
		want   Page
		errFld string
	}{
		{"", Page{Limit: 20}, ""},
		{"limit=1", Page{Limit: 1}, ""},
		{"limit=100&cursor=abc", Page{Limit: 100, Cursor: "abc"}, ""},
		{"cursor=abc%2B%2F", Page{Limit: 20, Cursor: "abc+/"}, ""},
		{"limit=", Page{}, "limit"},
		{"limit=0", Page{}, "limit"},
		{"limit=-5", Page{}, "limit"},
		{"limit=101", Page{}, "limit"},
		{"limit=1e2", Page{}, "limit"},
		{"limit=99999999999999999999", Page{}, "limit"},
		{"cursor=" + strings.Repeat("c", 4097), Page{}, "cursor"},
	}
	for _, tt := range tests {
		q, err := url.ParseQuery(tt.query)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParsePage(q)
		if tt.errFld != "" {
			if fault.FieldOf(err) != tt.errFld || !fault.Is(err, fault.InvalidInput) {
				t.Errorf("ParsePage(%q) error %v, want InvalidInput naming %s", tt.query, err, tt.errFld)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParsePage(%q) = %+v, %v; want %+v", tt.query, got, err, tt.want)
		}
	}
}

func TestNewList(t *testing.T) {
	if got := mustJSON(t, NewList[string](nil, "")); got != `{"items":[],"next_cursor":null}` {
		t.Errorf("empty list: %s", got)
	}
	if got := mustJSON(t, NewList([]int{1}, "n")); got != `{"items":[1],"next_cursor":"n"}` {
		t.Errorf("list: %s", got)
	}
}
