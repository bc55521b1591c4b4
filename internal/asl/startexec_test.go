package asl_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"sinew/internal/asl"
)

// A parent whose inline Map iterations each start two children (a loop of two visits), inside a
// Parallel branch, with a time in each child's input.
const startKeysDef = `{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[{"StartAt":"M","States":{
  "M":{"Type":"Map","ItemsPath":"$.items","MaxConcurrency":3,"End":true,"ItemProcessor":{"StartAt":"Start","States":{
    "Start":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution","ResultPath":null,"Next":"Again",
      "Parameters":{"StateMachineArn":"arn:aws:states:us-east-1:000000000000:stateMachine:child","Input":{"at.$":"$$.State.EnteredTime"}}},
    "Again":{"Type":"Choice","Choices":[{"Variable":"$.n","NumericLessThan":2,"Next":"Count"}],"Default":"Done"},
    "Count":{"Type":"Pass","Parameters":{"n.$":"States.MathAdd($.n, 1)"},"Next":"Start"},
    "Done":{"Type":"Pass","End":true}}}}}}]}}}`

// Every start of a child gets a key of its own, by its place (iteration, visit, attempt), and a
// second run of the same execution gives each the same keys, whatever the iterations' interleaving
// and the times in the inputs: what local mode journals a child under, to re-attach after a restart.
func TestStartKeysByPlace(t *testing.T) {
	child := mustParse(t, `{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`)
	keys := func() []string {
		var mu sync.Mutex
		var got []string
		eng := asl.New(asl.Config{
			Machines: func(string) (*asl.Machine, bool) { return child, true },
			StartChild: func(ctx context.Context, in asl.StartInput) (asl.Child, error) {
				mu.Lock()
				got = append(got, in.Key)
				mu.Unlock()
				time.Sleep(time.Millisecond) // let the iterations interleave
				return &endedChild{d: asl.Description{ExecutionArn: "arn:child", Status: asl.StatusSucceeded}}, nil
			}})
		x, err := eng.Start(context.Background(), asl.StartInput{Machine: mustParse(t, startKeysDef), Name: "parent",
			Input: `{"items":[{"n":1},{"n":1},{"n":1}]}`})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if d, err := x.Wait(ctx); err != nil || d.Status != asl.StatusSucceeded {
			t.Fatalf("parent: %+v %v", d, err)
		}
		slices.Sort(got)
		return got
	}
	first, second := keys(), keys()
	if len(first) != 6 || len(slices.Compact(slices.Clone(first))) != 6 {
		t.Fatalf("6 starts gave keys %q, want 6 distinct", first)
	}
	if !slices.Equal(first, second) {
		t.Errorf("a second run gave keys %q, the first %q", second, first)
	}
}

type endedChild struct{ d asl.Description }

func (c *endedChild) Describe() asl.Description { return c.d }
func (c *endedChild) Done() <-chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}
