package jsonout

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestStyles: each writer's escapes, from what the old copies in asl (GoJSON), javafmt (Jackson)
// and the JSONata evaluator (JavaScript) wrote.
func TestStyles(t *testing.T) {
	tests := []struct {
		in                          string
		javaScript, jackson, goJSON string
	}{
		{"", `""`, `""`, `""`},
		{"plain <html>&'/", `"plain <html>&'/"`, `"plain <html>&'/"`, `"plain <html>&'/"`},
		{`quote" back\`, `"quote\" back\\"`, `"quote\" back\\"`, `"quote\" back\\"`},
		{"\n\r\t\b\f", `"\n\r\t\b\f"`, `"\n\r\t\b\f"`, `"\n\r\t\b\f"`},
		{"\x00\x01\x1a\x1f\x7f", `"\u0000\u0001\u001a\u001f` + "\x7f\"", `"\u0000\u0001\u001A\u001F` + "\x7f\"", `"\u0000\u0001\u001a\u001f` + "\x7f\""},
		{"café 東京 😀 \ufeff", `"café 東京 😀 ` + "\ufeff\"", `"café 東京 😀 ` + "\ufeff\"", `"café 東京 😀 ` + "\ufeff\""},
		{"\u2028 \u2029", "\"\u2028 \u2029\"", "\"\u2028 \u2029\"", `"\u2028 \u2029"`},
		{"bad\xffutf8\xc3", "\"bad\uFFFDutf8\uFFFD\"", `"bad\uFFFDutf8\uFFFD"`, `"bad\ufffdutf8\ufffd"`},
		{"\xed\xa0\x80", "\"\uFFFD\uFFFD\uFFFD\"", `"\uFFFD\uFFFD\uFFFD"`, `"\ufffd\ufffd\ufffd"`},
		{"\ufffd", "\"\ufffd\"", "\"\ufffd\"", "\"\ufffd\""},
	}
	for _, tc := range tests {
		for _, c := range []struct {
			name string
			st   Style
			want string
		}{{"JavaScript", JavaScript, tc.javaScript}, {"Jackson", Jackson, tc.jackson}, {"GoJSON", GoJSON, tc.goJSON}} {
			if got := string(AppendString([]byte("x"), tc.in, c.st)); got != "x"+c.want {
				t.Errorf("%s AppendString(%q) = %s, want %s", c.name, tc.in, got[1:], c.want)
			}
			var b strings.Builder
			WriteString(&b, tc.in, c.st)
			if got := b.String(); got != c.want {
				t.Errorf("%s WriteString(%q) = %s, want %s", c.name, tc.in, got, c.want)
			}
			if got := StringLen(tc.in, c.st); got != len(c.want) {
				t.Errorf("%s StringLen(%q) = %d, want %d", c.name, tc.in, got, len(c.want))
			}
		}
	}
}

// TestGoJSONMatchesEncodingJSON: GoJSON is encoding/json's escaping with HTML escaping off, for
// every byte and for the characters it treats apart.
func TestGoJSONMatchesEncodingJSON(t *testing.T) {
	ins := []string{"\u2028\u2029", "é😀", "\xff\xc3", "\xed\xa0\x80"}
	for c := range 256 {
		ins = append(ins, "a"+string(rune(c))+"b", "a"+string([]byte{byte(c)})+"b")
	}
	for _, in := range ins {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(in); err != nil {
			t.Fatal(err)
		}
		if got := string(AppendString(nil, in, GoJSON)) + "\n"; got != want.String() {
			t.Errorf("AppendString(%q) = %s, encoding/json %s", in, got, want.String())
		}
	}
}
