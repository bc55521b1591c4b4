package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	cases := []struct {
		asl      bool
		in, want string
	}{
		{false, `{"expr": "$sum(a)", "input": {"a": [1, 2, 3.5]}}`, `{"result":6.5}`},
		{false, `{"expr": "{'b': $x, 'a': $string(22/7)}", "bindings": {"x": [1]}}`, `{"result":{"b":[1],"a":"3.14285714285714"}}`},
		{false, `{"expr": "missing", "input": {}}`, `{"undefined":true}`},
		{false, `{"expr": "$"}`, `{"undefined":true}`},
		{false, `{"expr": "$", "input": null}`, `{"result":null}`},
		{false, `{"expr": "1 +"}`, `{"error":{"code":"S0207","message":"Unexpected end of expression"}}`},
		{false, `{"expr": "$formatNumber(0, '0e0')"}`, `{"result":"0e0"}`},
		{false, `not json`, `{"error":{"code":"request","message":"the line is not a JSON request: invalid character 'o' in literal null (expecting 'u')"}}`},
		{true, `{"expr": "$partition($states.input.l, 2)", "input": {"l": [1, 2, 3]}}`, `{"result":[[1,2],[3]]}`},
		{true, `{"expr": "$eval('1')"}`, `{"error":{"code":"T1006","message":"Attempted to invoke a non-function. $eval is not supported"}}`},
		{true, `{"expr": "$x ?? 1"}`, `{"error":{"code":"S0211","message":"The symbol \"?\" cannot be used as a unary operator"}}`},
		{true, `{"expr": "phone"}`, `{"error":{"code":"UNSUPPORTED_JSONATA_EXPRESSION","message":"Reference to 'phone' at the top level is not supported"}}`},
		{true, `{"expr": "$v * 2", "bindings": {"v": 21}}`, `{"result":42}`},
	}
	for _, tc := range cases {
		var out bytes.Buffer
		if err := run(strings.NewReader(tc.in+"\n\n"), &out, tc.asl, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(out.String()); got != tc.want {
			t.Errorf("%s (asl %v):\n got %s\nwant %s", tc.in, tc.asl, got, tc.want)
		}
	}
}
