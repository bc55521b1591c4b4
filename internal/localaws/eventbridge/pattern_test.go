package eventbridge

import (
	"bytes"
	"encoding/json"
	"testing"
)

func event(t *testing.T, s string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestPatternMatch(t *testing.T) {
	ev := `{"source":"aws.states","detail-type":"Step Functions Execution Status Change","resources":["arn:a","arn:b"],
		"detail":{"status":"FAILED","count":3,"flag":true,"none":null,"nested":{"k":"v"},"tags":["x","y"]}}`
	tests := []struct {
		name    string
		pattern string
		want    bool
	}{
		{"exact", `{"source":["aws.states"]}`, true},
		{"one of", `{"detail":{"status":["SUCCEEDED","FAILED"]}}`, true},
		{"not in list", `{"detail":{"status":["SUCCEEDED"]}}`, false},
		{"all fields must match", `{"source":["aws.states"],"detail-type":["Other"]}`, false},
		{"number by value", `{"detail":{"count":[3.0]}}`, true},
		{"number is not a string", `{"detail":{"count":["3"]}}`, false},
		{"bool", `{"detail":{"flag":[true]}}`, true},
		{"null", `{"detail":{"none":[null]}}`, true},
		{"nested", `{"detail":{"nested":{"k":["v"]}}}`, true},
		{"event list: any element", `{"resources":["arn:b"]}`, true},
		{"event list: none", `{"resources":["arn:c"]}`, false},
		{"prefix", `{"detail-type":[{"prefix":"Step Functions"}]}`, true},
		{"suffix", `{"detail-type":[{"suffix":"Change"}]}`, true},
		{"equals-ignore-case", `{"detail":{"status":[{"equals-ignore-case":"failed"}]}}`, true},
		{"exists", `{"detail":{"status":[{"exists":true}]}}`, true},
		{"exists false on present", `{"detail":{"status":[{"exists":false}]}}`, false},
		{"exists false on missing", `{"detail":{"missing":[{"exists":false}]}}`, true},
		{"missing field", `{"detail":{"missing":["x"]}}`, false},
		{"anything-but value", `{"detail":{"status":[{"anything-but":"SUCCEEDED"}]}}`, true},
		{"anything-but list hit", `{"detail":{"status":[{"anything-but":["FAILED","ABORTED"]}]}}`, false},
		{"nested pattern over a scalar", `{"source":{"x":["y"]}}`, false},
		{"object never equals a value", `{"detail":{"nested":["v"]}}`, false},
	}
	e := event(t, ev)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParsePattern([]byte(tc.pattern))
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Match(e); got != tc.want {
				t.Errorf("Match = %v, want %v", got, tc.want)
			}
		})
	}
	if (Pattern{}).Match(e) {
		t.Error("the zero Pattern matched")
	}
}

func TestParsePatternErrors(t *testing.T) {
	for _, p := range []string{
		``, `[]`, `{}`, `"x"`, `{"source":"aws.states"}`, `{"source":[]}`, `{"detail":{}}`,
		`{"detail":{"n":[{"numeric":[">",0]}]}}`, `{"$or":[{"a":["b"]}]}`, `{"a":[{"prefix":1}]}`,
		`{"a":[{"exists":"yes"}]}`, `{"a":[{"prefix":"x","suffix":"y"}]}`, `{"a":[{"anything-but":{"prefix":"x"}}]}`,
	} {
		if _, err := ParsePattern([]byte(p)); err == nil {
			t.Errorf("ParsePattern(%s) accepted", p)
		}
	}
}
