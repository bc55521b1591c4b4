package resources

import (
	"testing"

	"sinew/internal/jsonv"
)

// TestMergePatchRFC7386 runs the examples of RFC 7386 appendix A.
func TestMergePatchRFC7386(t *testing.T) {
	tests := []struct{ target, patch, want string }{
		{`{"a":"b"}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"b"}`, `{"b":"c"}`, `{"a":"b","b":"c"}`},
		{`{"a":"b"}`, `{"a":null}`, `{}`},
		{`{"a":"b","b":"c"}`, `{"a":null}`, `{"b":"c"}`},
		{`{"a":["b"]}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"c"}`, `{"a":["b"]}`, `{"a":["b"]}`},
		{`{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`, `{"a":{"b":"d"}}`},
		{`{"a":[{"b":"c"}]}`, `{"a":[1]}`, `{"a":[1]}`},
		{`["a","b"]`, `["c","d"]`, `["c","d"]`},
		{`{"a":"b"}`, `["c"]`, `["c"]`},
		{`{"a":"foo"}`, `null`, `null`},
		{`{"a":"foo"}`, `"bar"`, `"bar"`},
		{`{"e":null}`, `{"a":1}`, `{"e":null,"a":1}`},
		{`[1,2]`, `{"a":"b","c":null}`, `{"a":"b"}`},
		{`{}`, `{"a":{"bb":{"ccc":null}}}`, `{"a":{"bb":{}}}`},
	}
	for _, tc := range tests {
		target, _ := jsonv.DecodeString(tc.target)
		patch, _ := jsonv.DecodeString(tc.patch)
		want, _ := jsonv.DecodeString(tc.want)
		before := jsonv.Clone(target)
		if got := mergePatch(target, patch); !jsonv.Equal(got, want) {
			t.Errorf("merge %s with %s = %s, want %s", tc.target, tc.patch, jsonv.EncodeString(got), tc.want)
		}
		if !jsonv.Equal(target, before) {
			t.Errorf("merge changed its target %s", tc.target)
		}
	}
}
