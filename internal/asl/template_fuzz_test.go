package asl_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"sinew/internal/asl"
	"sinew/internal/fault"
	"sinew/internal/jsonv"
)

// FuzzPayloadTemplate runs arbitrary payload templates (Parameters of a Pass state and
// ResultSelector of a Parallel state, with ".$" fields, context paths, variables and intrinsics)
// against arbitrary input. Whatever comes in, the engine must not panic or hang: a bad template is
// a definition error, bad input a typed error at Start, and a template that cannot be evaluated
// fails the execution with a States error and a cause a person can act on. A template that has no
// random intrinsic evaluates the same way twice.
//
//	go test -run='^$' -fuzz=FuzzPayloadTemplate -fuzztime=60s ./internal/asl/
func FuzzPayloadTemplate(f *testing.F) {
	seeds := []struct{ tmpl, input string }{
		{`{"a.$":"$.a"}`, `{"a":1}`},
		{`{"a.$":"$.nope"}`, `{"a":1}`},
		{`{"l":[{"v.$":"$.a[0]"},2],"o":{"w.$":"$..b"}}`, `{"a":[{"b":1},{"b":2}]}`},
		{`{"c.$":"$$.Execution.Input","n.$":"$$.State.Name"}`, `{"x":"y"}`},
		{`{"v.$":"$x"}`, `{}`},
		{`{"s.$":"States.Format('{} and {}', $.a, $.b)"}`, `{"a":1,"b":"x"}`},
		{`{"s.$":"States.Format('{}', $.a)"}`, `{"a":[1,{"b":null}]}`},
		{`{"j.$":"States.StringToJson($.s)"}`, `{"s":"{\"k\":[1,2]}"}`},
		{`{"j.$":"States.StringToJson($.s)"}`, `{"s":"not json"}`},
		{`{"m.$":"States.JsonMerge($.a, $.b, false)"}`, `{"a":{"x":1},"b":{"y":2}}`},
		{`{"r.$":"States.ArrayRange(0, $.n, 3)"}`, `{"n":10}`},
		{`{"r.$":"States.ArrayRange(0, $.n, 0)"}`, `{"n":1e300}`},
		{`{"p.$":"States.ArrayPartition($.a, $.n)"}`, `{"a":[1,2,3,4,5],"n":2}`},
		{`{"u.$":"States.ArrayUnique($.a)","l.$":"States.ArrayLength($.a)"}`, `{"a":[1,1,{"b":1},{"b":1}]}`},
		{`{"g.$":"States.ArrayGetItem($.a, $.i)"}`, `{"a":[1],"i":-1}`},
		{`{"h.$":"States.Hash($.s, 'SHA-256')","b.$":"States.Base64Encode($.s)"}`, `{"s":"héllo"}`},
		{`{"d.$":"States.Base64Decode($.s)"}`, `{"s":"!!!"}`},
		{`{"x.$":"States.MathAdd($.a, $.b)"}`, `{"a":9007199254740993,"b":-1}`},
		{`{"x.$":"States.MathRandom($.a, $.b)"}`, `{"a":5,"b":1}`},
		{`{"s.$":"States.StringSplit($.s, $.d)"}`, `{"s":"a,b,,c","d":","}`},
		{`{"x.$":"States.JsonToString($)"}`, `[1,"two",{"3":null}]`},
		{`{"x.$":"States.Array($.a, 'b', 3, null)"}`, `{"a":true}`},
		{`{"x.$":"States.Format('\\'{}\\'', $.a)"}`, `{"a":"q"}`},
		{`{"x.$":"$.a[?(@.b > 1)]"}`, `{"a":[{"b":1},{"b":2}]}`},
		{`{"x.$":"$['a b']"}`, `{"a b":1}`},
		{`{"x.$":"States.Format("}`, `{}`},
		{`{"x.$":1}`, `{}`},
		{`[1,2]`, `{}`},
		{`{"x.$":"$"}`, `"just a string"`},
		{`{"x.$":"$.a"}`, `{"a":`},
	}
	for _, s := range seeds {
		f.Add(s.tmpl, s.input, false)
		f.Add(s.tmpl, s.input, true)
	}
	eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))})
	f.Fuzz(func(t *testing.T, tmpl, input string, selector bool) {
		if len(tmpl) > 4096 || len(input) > 1<<16 {
			return
		}
		def := `{"StartAt":"S","States":{"S":{"Type":"Pass","Parameters":` + tmpl + `,"End":true}}}`
		if selector {
			def = `{"StartAt":"S","States":{"S":{"Type":"Parallel","Branches":[{"StartAt":"B","States":{"B":{"Type":"Pass","End":true}}}],"ResultSelector":` + tmpl + `,"End":true}}}`
		}
		m, err := asl.Parse([]byte(def), asl.Options{})
		if err != nil {
			var de *asl.DefinitionError
			if !errors.As(err, &de) || fault.KindOf(err) != fault.InvalidInput {
				t.Fatalf("Parse: untyped error %T %v", err, err)
			}
			return
		}
		tv, _ := jsonv.DecodeString(tmpl)
		_, wantObj := tv.(map[string]any)
		first, ok := runTemplate(t, eng, m, input, wantObj)
		if !ok {
			return
		}
		if strings.Contains(tmpl, "Random") || strings.Contains(tmpl, "UUID") {
			return
		}
		again, _ := runTemplate(t, eng, m, input, wantObj)
		if first != again {
			t.Fatalf("not deterministic: %q then %q", first, again)
		}
	})
}

// runTemplate runs m on input and checks how it ended; it gives the outcome and whether the
// execution ran at all.
func runTemplate(t *testing.T, eng *asl.Engine, m *asl.Machine, input string, wantObj bool) (string, bool) {
	t.Helper()
	// One name for every run ($$.Execution.Id is part of the outcome); each run is forgotten.
	x, err := eng.Start(context.Background(), asl.StartInput{Machine: m, Input: input, Name: "fuzz"})
	if err != nil {
		if k := fault.KindOf(err); k != fault.InvalidInput && k != fault.TooLarge {
			t.Fatalf("Start: %v error %v", k, err)
		}
		return "", false
	}
	defer eng.Forget(x.ARN)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := x.Wait(ctx)
	if err != nil {
		t.Fatalf("execution did not end: %v", err)
	}
	switch d.Status {
	case asl.StatusSucceeded:
		out, err := jsonv.DecodeString(d.Output)
		if err != nil {
			t.Fatalf("output is not JSON: %q", d.Output)
		}
		if _, isObj := out.(map[string]any); wantObj && !isObj {
			t.Fatalf("an object template gave %s", d.Output)
		}
		return "ok " + d.Output, true
	case asl.StatusFailed:
		if !strings.HasPrefix(d.Error, "States.") || d.Cause == "" {
			t.Fatalf("failure without a States error and a cause: %q %q", d.Error, d.Cause)
		}
		if d.Error == "States.Runtime" && !strings.Contains(d.Cause, "'S'") {
			t.Fatalf("runtime failure that does not name the state: %q", d.Cause)
		}
		return d.Error + ": " + d.Cause, true
	default:
		t.Fatalf("ended %s (%s: %s)", d.Status, d.Error, d.Cause)
	}
	return "", false
}
