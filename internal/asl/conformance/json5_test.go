package conformance

import (
	"encoding/json"
	"testing"
)

func TestJSON5(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"line comment", "{\"a\": 1 // one\n}", `{"a":1}`},
		{"block comment", `{"a": /* x */ 1}`, `{"a":1}`},
		{"trailing comma", `{"a": [1, 2,], }`, `{"a":[1,2]}`},
		{"trailing comma before a comment", "{\"a\": \"x\",  // note\n}", `{"a":"x"}`},
		{"comment markers inside strings", `{"a": "http://x/*y*/", }`, `{"a":"http://x/*y*/"}`},
		{"escaped quote", `{"a": "q\"//", }`, `{"a":"q\"//"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var v any
			if err := json.Unmarshal(JSON5([]byte(tc.in)), &v); err != nil {
				t.Fatalf("JSON5(%q) = %q: %v", tc.in, JSON5([]byte(tc.in)), err)
			}
			got, _ := json.Marshal(v)
			if string(got) != tc.want {
				t.Errorf("JSON5(%q) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}
