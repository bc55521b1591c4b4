package asl_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"sinew/internal/asl"
	"sinew/internal/asl/jsonata"
	"sinew/internal/jsonv"
)

// distributedDef is a distributed Map over $.items whose child fails on an item "bad".
func distributedDef(fields string) string {
	return `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.items",` + fields + `
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"C","States":{
			"C":{"Type":"Choice","Choices":[{"Variable":"$.v","StringEquals":"bad","Next":"F"}],"Default":"P"},
			"F":{"Type":"Fail","Error":"Bad","Cause":"bad item"},
			"P":{"Type":"Pass","Parameters":{"v.$":"$.v","id.$":"$$.Execution.Id"},"End":true}}},
		"End":true}}}`
}

func TestDistributedMap(t *testing.T) {
	eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch)})
	d, x := run(t, eng, distributedDef(`"ItemSelector":{"v.$":"$$.Map.Item.Value","i.$":"$$.Map.Item.Index"},"Label":"Run1","MaxConcurrency":2,`),
		`{"items":["a","b","c"]}`)
	if d.Status != asl.StatusSucceeded {
		t.Fatalf("%s %s %s", d.Status, d.Error, d.Cause)
	}
	// The children's events are theirs: the parent sees the Map Run only.
	want := "ExecutionStarted,MapStateEntered,MapStateStarted,MapRunStarted,MapRunSucceeded,MapStateSucceeded,MapStateExited,ExecutionSucceeded"
	if got := strings.Join(types(x), ","); got != want {
		t.Fatalf("history %s\nwant    %s", got, want)
	}
	h := x.History()
	if h[6].PreviousEventID != h[3].ID {
		t.Fatalf("MapStateExited follows event %d, want MapRunStarted (%d)", h[6].PreviousEventID, h[3].ID)
	}
	runs := x.MapRuns()
	if len(runs) != 1 || len(runs[0].Children) != 3 {
		t.Fatalf("map runs %+v", runs)
	}
	if arn := runs[0].ARN; h[3].MapRunStartedEventDetails.MapRunArn != arn || !strings.Contains(arn, ":mapRun:machine/Run1:") {
		t.Fatalf("map run ARN %q (event %+v)", arn, h[3].MapRunStartedEventDetails)
	}
	out, _ := jsonv.DecodeString(d.Output)
	arr, _ := out.([]any)
	if len(arr) != 3 {
		t.Fatalf("output %s", d.Output)
	}
	for i, c := range runs[0].Children {
		cd := c.Describe()
		if cd.Status != asl.StatusSucceeded || !strings.Contains(cd.ExecutionArn, ":execution:machine/Run1:") {
			t.Fatalf("child %d: %+v", i, cd)
		}
		// Each child's context object is its own execution.
		item := arr[i].(map[string]any)
		if item["id"] != cd.ExecutionArn || item["v"] != []string{"a", "b", "c"}[i] {
			t.Fatalf("child %d gave %v (its ARN %s)", i, item, cd.ExecutionArn)
		}
		if got := strings.Join(types(c), ","); got != "ExecutionStarted,ChoiceStateEntered,ChoiceStateExited,PassStateEntered,PassStateExited,ExecutionSucceeded" {
			t.Fatalf("child %d history %s", i, got)
		}
		if in := c.History()[0].ExecutionStartedEventDetails.Input; !strings.Contains(in, `"i":`+string(rune('0'+i))) {
			t.Fatalf("child %d input %s", i, in)
		}
	}
}

func TestDistributedMapToleratedFailures(t *testing.T) {
	cases := []struct {
		name, fields, items, status, errName string
		failed                               int // children that failed
	}{
		{name: "no tolerance", items: `["a","bad","c"]`, status: asl.StatusFailed, errName: "States.ExceedToleratedFailureThreshold"},
		{name: "count tolerates one", fields: `"ToleratedFailureCount":1,`, items: `["a","bad","c"]`, status: asl.StatusSucceeded, failed: 1},
		{name: "count exceeded", fields: `"ToleratedFailureCount":1,`, items: `["bad","bad","c"]`, status: asl.StatusFailed, errName: "States.ExceedToleratedFailureThreshold"},
		{name: "percentage tolerates", fields: `"ToleratedFailurePercentage":50,`, items: `["a","bad","c","d"]`, status: asl.StatusSucceeded, failed: 1},
		{name: "percentage exceeded", fields: `"ToleratedFailurePercentage":20,`, items: `["a","bad","c","d"]`, status: asl.StatusFailed, errName: "States.ExceedToleratedFailureThreshold"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch)})
			// One at a time, so a failure cannot abort a sibling before it ran.
			d, x := run(t, eng, distributedDef(tc.fields+`"MaxConcurrency":1,"ItemSelector":{"v.$":"$$.Map.Item.Value"},`), `{"items":`+tc.items+`}`)
			if d.Status != tc.status || d.Error != tc.errName {
				t.Fatalf("%s %s %s", d.Status, d.Error, d.Cause)
			}
			if tc.status == asl.StatusFailed {
				got := strings.Join(types(x), ",")
				if !strings.HasSuffix(got, "MapRunStarted,MapRunFailed,MapStateFailed,ExecutionFailed") {
					t.Fatalf("history %s", got)
				}
				h := x.History()
				if mf := h[len(h)-3].MapRunFailedEventDetails; mf == nil || mf.Error != tc.errName {
					t.Fatalf("MapRunFailed %+v", mf)
				}
				return
			}
			out, _ := jsonv.DecodeString(d.Output)
			failed := 0
			for _, v := range out.([]any) {
				if m, _ := v.(map[string]any); m["Error"] == "Bad" && m["Cause"] == "bad item" {
					failed++
				}
			}
			if failed != tc.failed {
				t.Fatalf("output %s: %d failed items, want %d", d.Output, failed, tc.failed)
			}
		})
	}
}

func TestDistributedMapToleranceValues(t *testing.T) {
	cases := []struct{ input, cause string }{
		{`{"items":[1],"n":-1}`, "ToleratedFailureCount cannot be negative."},
		{`{"items":[1],"n":"x"}`, `The ToleratedFailureCountPath field refers to value "x" which is not a valid integer: $.n`},
		{`{"items":[1],"n":1.5}`, `The ToleratedFailureCountPath field refers to value "1.5" which is not a valid integer: $.n`},
		{`{"items":[1],"n":[2]}`, `The ToleratedFailureCountPath field refers to value "[2]" which is not a valid integer: $.n`},
	}
	for _, tc := range cases {
		eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch)})
		d, x := run(t, eng, distributedDef(`"ToleratedFailureCountPath":"$.n",`), tc.input)
		want := "An error occurred while executing the state 'M' (entered at the event id #2). " + tc.cause
		if d.Status != asl.StatusFailed || d.Error != "States.Runtime" || d.Cause != want {
			t.Fatalf("%s: %s %s %q", tc.input, d.Status, d.Error, d.Cause)
		}
		// Recorded: straight after MapStateStarted, no MapStateFailed.
		if got := strings.Join(types(x), ","); got != "ExecutionStarted,MapStateEntered,MapStateStarted,ExecutionFailed" {
			t.Fatalf("%s: history %s", tc.input, got)
		}
	}
	eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch)})
	if d, _ := run(t, eng, distributedDef(`"ToleratedFailureCountPath":"$.n",`), `{"items":["bad"],"n":"1"}`); d.Status != asl.StatusSucceeded {
		t.Fatalf("a count held in a string: %s %s %s", d.Status, d.Error, d.Cause)
	}
}

func TestDistributedMapItemBatcher(t *testing.T) {
	def := `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.items","MaxConcurrency":1,
		"ItemBatcher":{"MaxItemsPerBatch":2,"BatchInput":{"job.$":"$.job"}},
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},
		"End":true}}}`
	eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch)})
	d, x := run(t, eng, def, `{"job":"j1","items":[1,2,3,4,5]}`)
	want := `[{"BatchInput":{"job":"j1"},"Items":[1,2]},{"BatchInput":{"job":"j1"},"Items":[3,4]},{"BatchInput":{"job":"j1"},"Items":[5]}]`
	if d.Status != asl.StatusSucceeded || d.Output != want {
		t.Fatalf("%s %s %s\noutput %s\nwant   %s", d.Status, d.Error, d.Cause, d.Output, want)
	}
	if n := len(x.MapRuns()[0].Children); n != 3 {
		t.Fatalf("%d children, want 3", n)
	}
	// MapStateStarted counts the items, not the batches.
	if l := x.History()[2].MapStateStartedEventDetails.Length; l != 5 {
		t.Fatalf("length %d", l)
	}
}

func TestDistributedMapStop(t *testing.T) {
	lam := &tokenLambda{tokens: make(chan string, 4)}
	eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch), Lambda: lam})
	def := `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.items",
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"T","States":{
			"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","Parameters":{"FunctionName":"f","Payload":{"Token.$":"$$.Task.Token"}},"End":true}}},
		"End":true}}}`
	x, err := eng.Start(context.Background(), asl.StartInput{Machine: mustParse(t, def), Input: `{"items":[1,2]}`})
	if err != nil {
		t.Fatal(err)
	}
	<-lam.tokens
	<-lam.tokens
	if err := eng.Stop(x.ARN, "Stopped", "by the test"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := x.Wait(ctx)
	if err != nil || d.Status != asl.StatusAborted {
		t.Fatalf("%+v %v", d, err)
	}
	if got := strings.Join(types(x), ","); !strings.HasSuffix(got, "MapRunStarted,MapRunAborted,MapStateAborted,ExecutionAborted") {
		t.Fatalf("history %s", got)
	}
	for _, c := range x.MapRuns()[0].Children {
		select {
		case <-c.Done():
		case <-ctx.Done():
			t.Fatal("a child execution did not end")
		}
		if s := c.Describe().Status; s != asl.StatusAborted {
			t.Fatalf("child %s", s)
		}
	}
}

func TestDistributedMapValidation(t *testing.T) {
	proc := func(mode string) string {
		return `"ItemProcessor":{"ProcessorConfig":{"Mode":"` + mode + `"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`
	}
	cases := []struct{ name, fields, want string }{
		{"item reader", proc("DISTRIBUTED") + `,"ItemReader":{"Resource":"arn:aws:states:::s3:getObject","Parameters":{"Bucket":"b","Key":"k"}}`, "ItemReader reads the items from Amazon S3"},
		{"result writer", proc("DISTRIBUTED") + `,"ResultWriter":{"Resource":"arn:aws:states:::s3:putObject","Parameters":{"Bucket":"b","Prefix":"p"}}`, "ResultWriter writes the results to Amazon S3"},
		{"label inline", proc("INLINE") + `,"Label":"L"`, "The field 'Label' is only supported by a Map state whose ItemProcessor has ProcessorConfig.Mode DISTRIBUTED"},
		{"batcher inline", proc("INLINE") + `,"ItemBatcher":{"MaxItemsPerBatch":2}`, "The field 'ItemBatcher' is only supported"},
		{"bad label", proc("DISTRIBUTED") + `,"Label":"a b"`, "The field 'Label' must be a string of 1 to 40 characters"},
		{"bad mode", proc("PARALLEL"), "The field 'Mode' should have one of these values: [INLINE, DISTRIBUTED]"},
		{"empty batcher", proc("DISTRIBUTED") + `,"ItemBatcher":{}`, "An ItemBatcher needs at least one of MaxItemsPerBatch"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := asl.Parse([]byte(`{"StartAt":"M","States":{"M":{"Type":"Map",`+tc.fields+`,"End":true}}}`), asl.Options{})
			var de *asl.DefinitionError
			if !errors.As(err, &de) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant a definition error with %q", err, tc.want)
			}
		})
	}
}

func TestDistributedMapJSONata(t *testing.T) {
	def := `{"QueryLanguage":"JSONata","StartAt":"M","States":{"M":{"Type":"Map","Items":"{% $states.input.xs %}",
		"ItemSelector":{"v":"{% $states.context.Map.Item.Value * 10 %}"},
		"ItemBatcher":{"MaxItemsPerBatch":"{% 2 %}"},
		"ToleratedFailureCount":"{% 0 %}",
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"EXPRESS"},"StartAt":"P","States":{"P":{"Type":"Pass","Output":"{% $sum($states.input.Items.v) %}","End":true}}},
		"Output":"{% $states.result %}","End":true}}}`
	m, err := asl.Parse([]byte(def), asl.Options{JSONata: jsonata.New()})
	if err != nil {
		t.Fatal(err)
	}
	eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch)})
	x, err := eng.Start(context.Background(), asl.StartInput{Machine: m, Input: `{"xs":[1,2,3]}`})
	if err != nil {
		t.Fatal(err)
	}
	d, err := x.Wait(context.Background())
	if err != nil || d.Status != asl.StatusSucceeded || d.Output != `[30,30]` {
		t.Fatalf("%+v %v", d, err)
	}
}

// A replay after a restart must name the Map Run and its children as the first run did, so that
// their journaled work is found rather than done again.
func TestDistributedMapNamesAreStable(t *testing.T) {
	def := distributedDef(`"MaxConcurrency":2,`)
	names := func() (string, []string) {
		eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch)})
		x, err := eng.Start(context.Background(), asl.StartInput{Machine: mustParse(t, def), Name: "replayed", Input: `{"items":[{"v":"a"},{"v":"b"},{"v":"c"}]}`})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if d, err := x.Wait(ctx); err != nil || d.Status != asl.StatusSucceeded {
			t.Fatalf("execution: %v %+v", err, d)
		}
		run := x.MapRuns()[0]
		var children []string
		for _, c := range run.Children {
			children = append(children, c.Describe().ExecutionArn)
		}
		return run.ARN, children
	}
	run1, children1 := names()
	run2, children2 := names()
	if run1 != run2 || strings.Join(children1, " ") != strings.Join(children2, " ") {
		t.Fatalf("a second run of the same execution named its Map Run %s (first %s), children %v (first %v)", run2, run1, children2, children1)
	}
	seen := map[string]bool{}
	for _, c := range children1 {
		if seen[c] {
			t.Fatalf("two children share the name %s", c)
		}
		seen[c] = true
	}
}
