package intrinsic

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"sinew/internal/asl/jsonpath"
	"sinew/internal/fault"
	"sinew/internal/jsonv"
)

func mustJSON(t testing.TB, s string) any {
	t.Helper()
	v, err := jsonv.DecodeString(s)
	if err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return v
}

func eval(t testing.TB, expr string, input any) (any, error) {
	t.Helper()
	e, err := Parse(expr)
	if err != nil {
		t.Fatalf("Parse(%s): %v", expr, err)
	}
	return e.Eval(jsonpath.Env{Input: input})
}

// Examples of the AWS intrinsic functions page, plus quirks seen in the AWS recordings (internal/asl/conformance).
func TestFunctions(t *testing.T) {
	tests := []struct {
		name, expr, input, want string
	}{
		{"Format doc", "States.Format('Hello, my name is {}.', $.name)", `{"name": "Arnav"}`, `"Hello, my name is Arnav."`},
		{"Format template path", "States.Format($.template, $.name)", `{"template": "Hello, my name is {}.", "name": "Arnav"}`, `"Hello, my name is Arnav."`},
		{"Format escapes", `States.Format('\{\} {} it\'s \\ {}', 1, 2.5)`, `{}`, `"{} 1 it's \\ 2.5"`},
		{"Format Java forms", "States.Format('{}|{}|{}|{}|{}', $.o, $.n, $.b, $.f, $.a)", `{"o": {"Arg1": 1, "Arg2": []}, "n": null, "b": false, "f": 1.0, "a": [1, "x", {"k": null}]}`, `"{Arg1=1, Arg2=[]}|null|false|1.0|[1, x, {k=null}]"`},
		{"Format no placeholder", "States.Format('plain')", `{}`, `"plain"`},
		{"Format big double", "States.Format('{}', 1e20)", `{}`, `"1.0E20"`},
		{"StringToJson doc", "States.StringToJson($.s)", `{"s": "{\"foo\": \"bar\"}"}`, `{"foo": "bar"}`},
		{"StringToJson blank", "States.StringToJson(' ')", `{}`, `null`},
		{"StringToJson -0", "States.StringToJson('-0')", `{}`, `0`},
		{"JsonToString doc", "States.JsonToString($.j)", `{"j": {"foo": "bar"}}`, `"{\"foo\":\"bar\"}"`},
		{"JsonToString double", "States.JsonToString($.j)", `{"j": [1.0, 1.5, 1e-5, "<&>"]}`, `"[1.0,1.5,1.0E-5,\"<&>\"]"`},
		{"Array doc", "States.Array('Foo', 2020, $.someJson, null)", `{"someJson": {"random": "abc"}}`, `["Foo", 2020, {"random": "abc"}, null]`},
		{"Array empty", "States.Array()", `{}`, `[]`},
		{"ArrayPartition doc", "States.ArrayPartition($.a, 4)", `{"a": [1,2,3,4,5,6,7,8,9]}`, `[[1,2,3,4],[5,6,7,8],[9]]`},
		{"ArrayPartition cut", "States.ArrayPartition($.a, 2.9)", `{"a": [1,2,3]}`, `[[1,2],[3]]`},
		{"ArrayContains doc", "States.ArrayContains($.a, 5)", `{"a": [1,2,3,4,5,6,7,8,9]}`, `true`},
		{"ArrayContains deep", "States.ArrayContains($.a, $.v)", `{"a": [[1,2,3],2], "v": [1,2,3]}`, `true`},
		{"ArrayContains absent", "States.ArrayContains($.a, 'x')", `{"a": []}`, `false`},
		{"ArrayRange doc", "States.ArrayRange(1, 9, 2)", `{}`, `[1,3,5,7,9]`},
		{"ArrayRange recorded", "States.ArrayRange(0, 10, 3)", `{}`, `[0,3,6,9]`},
		{"ArrayRange down", "States.ArrayRange(5, 1, -2)", `{}`, `[5,3,1]`},
		{"ArrayRange wrong way", "States.ArrayRange(5, 1, 1)", `{}`, `[]`},
		{"ArrayRange cut", "States.ArrayRange(1.6, 1.4, 1)", `{}`, `[1]`},
		{"ArrayRange limit", "States.ArrayLength(States.ArrayRange(1, 1000, 1))", `{}`, `1000`},
		{"ArrayGetItem doc", "States.ArrayGetItem($.a, $.i)", `{"a": [1,2,3,4,5,6,7,8,9], "i": 5}`, `6`},
		{"ArrayGetItem cut", "States.ArrayGetItem($.a, 1.2)", `{"a": [10,20,30]}`, `20`},
		{"ArrayGetItem empty", "States.ArrayGetItem($.a, 999)", `{"a": []}`, `null`},
		{"ArrayLength doc", "States.ArrayLength($.a)", `{"a": [1,2,3,4,5,6,7,8,9]}`, `9`},
		{"ArrayUnique doc", "States.ArrayUnique($.a)", `{"a": [1,2,3,3,3,3,3,3,4]}`, `[1,2,3,4]`},
		{"ArrayUnique deep", "States.ArrayUnique($.a)", `{"a": [null, null, {"a": 1}, {"a": 1}, [1], [1], "x"]}`, `[null, {"a": 1}, [1], "x"]`},
		{"Base64Encode doc", "States.Base64Encode($.s)", `{"s": "Data to encode"}`, `"RGF0YSB0byBlbmNvZGU="`},
		{"Base64Decode doc", "States.Base64Decode($.s)", `{"s": "RGF0YSB0byBlbmNvZGU="}`, `"Data to encode"`},
		{"Base64Decode lenient", "States.Base64Decode(' YWJjZA== ')", `{}`, `"abcd"`},
		{"Base64Decode unpadded", "States.Base64Decode('YWJjZA')", `{}`, `"abcd"`},
		{"Hash doc", "States.Hash($.d, $.alg)", `{"d": "input data", "alg": "SHA-1"}`, `"aaff4a450a104cd177d28d18d74485e8cae074b7"`},
		{"Hash MD5", "States.Hash('hello', 'MD5')", `{}`, `"5d41402abc4b2a76b9719d911017c592"`},
		{"Hash SHA-384", "States.Hash('hello', 'SHA-384')", `{}`, `"59e1748777448c69de6b800d7a33bbfb9ff1b463e44354c3553bcdb9c666fa90125a3c79f90397bdf5f6a13de828684f"`},
		{"Hash unicode", "States.Hash($.s, 'SHA-256')", `{"s": "✓"}`, `"1dabba21cdad44541f6b15796f8d22978fc7ea10c46aeceeeeb66c23b3ac7604"`},
		{"JsonMerge doc", "States.JsonMerge($.a, $.b, false)", `{"a": {"a": {"a1": 1, "a2": 2}, "b": 2}, "b": {"a": {"a3": 1, "a4": 2}, "c": 3}}`, `{"a": {"a3": 1, "a4": 2}, "b": 2, "c": 3}`},
		{"MathAdd doc", "States.MathAdd($.v, $.step)", `{"v": 111, "step": -1}`, `110`},
		{"MathAdd halves up", "States.MathAdd(-2.5, 0.5)", `{}`, `-1`},
		{"MathRandom seeded is java.util.Random", "States.MathRandom(0, 100, 42)", `{}`, `30`}, // new Random(42).nextInt(100) on JDK 17
		{"MathRandom seeded range", "States.MathRandom(1, 999, 3)", `{}`, `893`},               // 1 + new Random(3).nextInt(998)
		{"StringSplit doc", "States.StringSplit($.s, $.sep)", `{"s": "1,2,3,4,5", "sep": ","}`, `["1","2","3","4","5"]`},
		{"StringSplit set", "States.StringSplit('This.is+a,test=string', '.+,=')", `{}`, `["This","is","a","test","string"]`},
		{"StringSplit empties", "States.StringSplit(',,,,', ',')", `{}`, `[]`},
		{"nested", "States.ArrayGetItem(States.StringSplit(States.Format('{}-{}', $.a, $.b), '-'), States.MathAdd(States.ArrayLength(States.Array(1, 2)), -1))", `{"a": "x", "b": "y"}`, `"y"`},
		{"path with filter", "States.ArrayLength($.u[?(@.n > 1)])", `{"u": [{"n": 1}, {"n": 2}, {"n": 3}]}`, `2`},
		{"path with comma", "States.JsonToString($.a['x','y'])", `{"a": {"x": 1, "y": 2, "z": 3}}`, `"{\"x\":1,\"y\":2}"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := eval(t, tc.expr, mustJSON(t, tc.input))
			if err != nil {
				t.Fatalf("Eval: %v", err)
			}
			want := mustJSON(t, tc.want)
			if !jsonv.Equal(got, want) || jsonv.TypeName(got) != jsonv.TypeName(want) {
				t.Errorf("got %s, want %s", jsonv.EncodeString(got), tc.want)
			}
		})
	}
}

func TestContextAndVariables(t *testing.T) {
	e, err := Parse("States.Format('{} {} {}', $$.Execution.Name, $greeting, $.who)")
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Eval(jsonpath.Env{
		Input:   map[string]any{"who": "world"},
		Context: map[string]any{"Execution": map[string]any{"Name": "exec"}},
		Var: func(n string) (any, bool) {
			if n == "greeting" {
				return "hello", true
			}
			return nil, false
		},
	})
	if err != nil || got != "exec hello world" {
		t.Errorf("got %v, %v", got, err)
	}
}

func TestUUIDAndRandom(t *testing.T) {
	got, err := eval(t, "States.UUID()", nil)
	if err != nil {
		t.Fatal(err)
	}
	u, err := uuid.Parse(got.(string))
	if err != nil || u.Version() != 4 {
		t.Errorf("UUID() = %v: not a v4 UUID (%v)", got, err)
	}
	for range 200 {
		v, err := eval(t, "States.MathRandom(-3, 3)", nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := v.(int64); n < -3 || n >= 3 {
			t.Fatalf("MathRandom(-3, 3) = %d, outside [-3, 3)", n)
		}
	}
	a, _ := eval(t, "States.MathRandom(1, 1000000, 7)", nil)
	b, _ := eval(t, "States.MathRandom(1, 1000000, 7)", nil)
	if a != b {
		t.Errorf("seeded MathRandom differs: %v, %v", a, b)
	}
}

func TestRuntimeErrors(t *testing.T) {
	long := strings.Repeat("a", 10001)
	tests := []struct{ expr, input, cause string }{
		{"States.Hash()", `{}`, "Invalid arguments in States.Hash"},
		{"States.Hash('a', 'SHA-256', 'x')", `{}`, "Invalid arguments in States.Hash"},
		{"States.Hash('a', 'sha-256')", `{}`, "Invalid arguments in States.Hash"},
		{"States.Hash($.s, 'MD5')", `{"s": "` + long + `"}`, "Invalid arguments in States.Hash"},
		{"States.Base64Encode($.s)", `{"s": "` + long + `"}`, "Invalid arguments in States.Base64Encode"},
		{"States.Base64Decode(123)", `{}`, "Invalid arguments in States.Base64Decode"},
		{"States.Format('{} {}', 1)", `{}`, "Invalid arguments in States.Format"},
		{"States.Format('{}', 1, 2)", `{}`, "Invalid arguments in States.Format"},
		{"States.Format('Hello {', 1)", `{}`, "Invalid arguments in States.Format"},
		{"States.Format('Hello {{}}', 1)", `{}`, "Invalid arguments in States.Format"},
		{"States.Format('}')", `{}`, "Invalid arguments in States.Format"},
		{"States.Format($.t, 1)", `{"t": 123}`, "Invalid arguments in States.Format"},
		{"States.StringToJson('{nope')", `{}`, "Invalid arguments in States.StringToJson"},
		{"States.StringToJson(1)", `{}`, "Invalid arguments in States.StringToJson"},
		{"States.ArrayPartition($.a, 0.49)", `{"a": [1]}`, "Invalid arguments in States.ArrayPartition"},
		{"States.ArrayPartition('x', 1)", `{}`, "Invalid arguments in States.ArrayPartition"},
		{"States.ArrayRange(1, 10, 0.49)", `{}`, "Invalid arguments in States.ArrayRange"},
		{"States.ArrayRange(1, 1001, 1)", `{}`, "Invalid arguments in States.ArrayRange"},
		{"States.ArrayRange('a', 5, 1)", `{}`, "Invalid arguments in States.ArrayRange"},
		{"States.ArrayGetItem($.a, 3)", `{"a": [1,2,3]}`, "Invalid arguments in States.ArrayGetItem"},
		{"States.ArrayGetItem($.a, -1)", `{"a": [1,2,3]}`, "Invalid arguments in States.ArrayGetItem"},
		{"States.ArrayGetItem($.a, '1')", `{"a": [1,2,3]}`, "Invalid arguments in States.ArrayGetItem"},
		{"States.ArrayLength('x')", `{}`, "Invalid arguments in States.ArrayLength"},
		{"States.JsonMerge($.a, $.a, true)", `{"a": {}}`, "Invalid arguments in States.JsonMerge"},
		{"States.JsonMerge($.a, 1, false)", `{"a": {}}`, "Invalid arguments in States.JsonMerge"},
		{"States.MathRandom(1, 1)", `{}`, "Invalid arguments in States.MathRandom"},
		{"States.MathRandom(1.4, 1.6)", `{}`, "Invalid arguments in States.MathRandom"},
		{"States.MathRandom(1, 10, null)", `{}`, "Invalid arguments in States.MathRandom"},
		{"States.MathAdd('1', 2)", `{}`, "Invalid arguments in States.MathAdd"},
		{"States.StringSplit(1, ',')", `{}`, "Invalid arguments in States.StringSplit"},
		{"States.UUID(1)", `{}`, "Invalid arguments in States.UUID"},
		{"States.Array(States.MathAdd(1, 'x'))", `{}`, "Invalid arguments in States.MathAdd"},
	}
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			_, err := eval(t, tc.expr, mustJSON(t, tc.input))
			var ie *Error
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want an *Error", err)
			}
			if ie.Name != "States.Runtime" || ie.Cause != tc.cause || ie.Detail == "" {
				t.Errorf("got %s / %q / %q, want States.Runtime / %q with a detail", ie.Name, ie.Cause, ie.Detail, tc.cause)
			}
		})
	}
}

func TestMissingPathArgument(t *testing.T) {
	_, err := eval(t, "States.Hash($.missing, 'SHA-256')", map[string]any{})
	var ie *Error
	if !errors.As(err, &ie) {
		t.Fatalf("err = %v", err)
	}
	// Observed on AWS: the cause says "could not be found in the input '{}'".
	if ie.Name != "States.Runtime" || ie.Path != "$.missing" || !strings.Contains(ie.Cause, "could not be found in the input '{}'") {
		t.Errorf("got %+v", ie)
	}
	var pe *jsonpath.Error
	if !errors.As(err, &pe) {
		t.Errorf("the jsonpath error is not kept: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	bad := []string{
		"", "States", "States.", "States.Nope()", "States.Format", "States.Format(", "States.Format('a'",
		"States.Format('a' 'b')", "States.Format('a',)", "States.Array(,)", "States.Array(1) x",
		`States.Format('say \"hi\"')`, // recorded: AWS refuses \" in a literal
		"States.Array(tru)", "States.Array(1.)", "States.Array(1e)", "States.Array(--1)", "States.Array(1x)",
		"States.Array($.a b)", "States.Array($.[)", "States.Array(foo)", "$.a",
		strings.Repeat("States.Array(", 11) + strings.Repeat(")", 11),
	}
	for _, s := range bad {
		e, err := Parse(s)
		if err == nil {
			t.Errorf("Parse(%q) = %v, want an error", s, e)
			continue
		}
		var se *SyntaxError
		if !errors.As(err, &se) || !fault.Is(err, fault.InvalidInput) {
			t.Errorf("Parse(%q): %v is not a SyntaxError/InvalidInput", s, err)
		}
	}
	ok := []string{
		"States.UUID()", " States.Array( 1 , 'a' , null , true , false , -2.5e3 ) ",
		strings.Repeat("States.Array(", 10) + strings.Repeat(")", 10),
		"States.Format('Hello\nWorld')",
	}
	for _, s := range ok {
		if _, err := Parse(s); err != nil {
			t.Errorf("Parse(%q): %v", s, err)
		}
	}
}

func TestIsCall(t *testing.T) {
	for s, want := range map[string]bool{
		"States.Format('x')": true, " States.UUID()": true, "$.a": false, "States.": false, "States": false, "$$.States": false,
	} {
		if IsCall(s) != want {
			t.Errorf("IsCall(%q) = %v", s, !want)
		}
	}
}

func TestEvalDoesNotMutate(t *testing.T) {
	in := mustJSON(t, `{"a": [3, 1, 3], "o": {"k": 1}, "p": {"k": 2}}`)
	before := jsonv.EncodeString(in)
	for _, s := range []string{"States.ArrayUnique($.a)", "States.JsonMerge($.o, $.p, false)", "States.ArrayPartition($.a, 1)", "States.Array($.a)"} {
		if _, err := eval(t, s, in); err != nil {
			t.Fatal(err)
		}
	}
	if after := jsonv.EncodeString(in); after != before {
		t.Errorf("input changed: %s became %s", before, after)
	}
}
