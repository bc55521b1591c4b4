package asl_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sinew/internal/asl"
	"sinew/internal/fault"
	"sinew/internal/jsonv"
)

func TestDataFlow(t *testing.T) {
	pass := func(fields string) string {
		return `{"StartAt":"S","States":{"S":{"Type":"Pass",` + fields + `"End":true}}}`
	}
	cases := []struct {
		name, def, input, output, errName, cause string
	}{
		{name: "pass through", def: pass(``), input: `{"a":1}`, output: `{"a":1}`},
		{name: "result replaces", def: pass(`"Result":{"x":1},`), input: `{"a":1}`, output: `{"x":1}`},
		{name: "dollar keys in Result are literal", def: pass(`"Result":{"x.$":"$.a"},`), input: `{"a":1}`, output: `{"x.$":"$.a"}`},
		{name: "result path into raw input", def: pass(`"InputPath":"$.a","Parameters":{"v.$":"$.b"},"ResultPath":"$.a.out",`), input: `{"a":{"b":2}}`, output: `{"a":{"b":2,"out":{"v":2}}}`},
		{name: "result path null keeps input", def: pass(`"Result":1,"ResultPath":null,`), input: `{"a":1}`, output: `{"a":1}`},
		{name: "input path null", def: pass(`"InputPath":null,"Parameters":{"in.$":"$"},`), input: `{"a":1}`, output: `{"in":{}}`},
		{name: "output path null", def: pass(`"OutputPath":null,`), input: `{"a":1}`, output: `{}`},
		{name: "output path", def: pass(`"Result":{"x":{"y":3}},"OutputPath":"$.x",`), input: `{}`, output: `{"y":3}`},
		{name: "context object", def: pass(`"Parameters":{"n.$":"$$.State.Name","i.$":"$$.Execution.Input.a"},`), input: `{"a":7}`, output: `{"i":7,"n":"S"}`},
		{name: "nested templates and arrays", def: pass(`"Parameters":{"l":[{"v.$":"$.a"},2],"o":{"w.$":"$.a"}},`), input: `{"a":1}`, output: `{"l":[{"v":1},2],"o":{"w":1}}`},
		{name: "intrinsic", def: pass(`"Parameters":{"s.$":"States.Format('{} and {}', $.a, $.b)"},`), input: `{"a":1,"b":"x"}`, output: `{"s":"1 and x"}`},
		{name: "missing template path", def: pass(`"Parameters":{"v.$":"$.nope"},`), input: `{"a":1}`, errName: "States.Runtime",
			cause: `An error occurred while executing the state 'S' (entered at the event id #2). The JSONPath '$.nope' specified for the field 'v.$' could not be found in the input '{"a":1}'`},
		{name: "missing input path", def: pass(`"InputPath":"$.nope",`), input: `{"a":1}`, errName: "States.Runtime",
			cause: `An error occurred while executing the state 'S' (entered at the event id #2). Invalid path '$.nope' : No results for path: $['nope']`},
		{name: "oversize output", def: pass(`"Parameters":{"a.$":"$.s","b.$":"$.s"},`), input: `{"s":"` + strings.Repeat("x", 200000) + `"}`, errName: "States.DataLimitExceeded",
			cause: "The state/task 'S' returned a result with a size exceeding the maximum number of bytes service limit."},
		{name: "oversize output by result path", def: pass(`"Parameters":{"a.$":"$.s"},"ResultPath":"$.r",`), input: `{"s":"` + strings.Repeat("x", 140000) + `"}`, errName: "States.DataLimitExceeded",
			cause: "The state/task 'S' returned a result with a size exceeding the maximum number of bytes service limit."},
		{name: "under the limit by result path", def: pass(`"Parameters":{"a.$":"$.s"},"ResultPath":"$.r","OutputPath":"$.r",`), input: `{"s":"` + strings.Repeat("x", 140000) + `"}`,
			output: `{"a":"` + strings.Repeat("x", 140000) + `"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch)})
			d, _ := run(t, eng, tc.def, tc.input)
			if tc.errName != "" {
				if d.Status != asl.StatusFailed || d.Error != tc.errName || d.Cause != tc.cause {
					t.Fatalf("got %s %s %q\nwant FAILED %s %q", d.Status, d.Error, d.Cause, tc.errName, tc.cause)
				}
				return
			}
			if d.Status != asl.StatusSucceeded {
				t.Fatalf("status %s: %s %s", d.Status, d.Error, d.Cause)
			}
			want, _ := jsonv.DecodeString(tc.output)
			got, _ := jsonv.DecodeString(d.Output)
			if !jsonv.Equal(want, got) {
				t.Fatalf("output %s, want %s", d.Output, tc.output)
			}
		})
	}
}

func TestChoiceOperators(t *testing.T) {
	cases := []struct {
		rule  string
		input string
		want  bool
	}{
		{`"Variable":"$.v","NumericEquals":0`, `{"v":0.0}`, true},
		{`"Variable":"$.v","NumericEquals":0`, `{"v":null}`, false},
		{`"Variable":"$.v","NumericLessThan":1.5`, `{"v":1}`, true},
		{`"Variable":"$.v","NumericGreaterThanEqualsPath":"$.w"`, `{"v":2,"w":2}`, true},
		{`"Variable":"$.v","StringEquals":"a"`, `{"v":"a"}`, true},
		{`"Variable":"$.v","StringEquals":"1"`, `{"v":1}`, false},
		{`"Variable":"$.v","StringLessThan":"b"`, `{"v":"a"}`, true},
		{`"Variable":"$.v","StringMatches":"log-*.txt"`, `{"v":"log-2024.txt"}`, true},
		{`"Variable":"$.v","StringMatches":"a\\*b"`, `{"v":"a*b"}`, true},
		{`"Variable":"$.v","StringMatches":"a\\*b"`, `{"v":"axxb"}`, false},
		{`"Variable":"$.v","BooleanEquals":true`, `{"v":true}`, true},
		{`"Variable":"$.v","BooleanEqualsPath":"$.w"`, `{"v":false,"w":true}`, false},
		{`"Variable":"$.v","TimestampLessThan":"2024-01-02T00:00:00Z"`, `{"v":"2024-01-01T23:59:59+00:00"}`, true},
		{`"Variable":"$.v","TimestampEquals":"2024-01-01T00:00:00Z"`, `{"v":"2024-01-01T01:00:00+01:00"}`, true},
		{`"Variable":"$.v","TimestampEquals":"2024-01-01T00:00:00Z"`, `{"v":"not a time"}`, false},
		{`"Variable":"$.v","IsNull":true`, `{"v":null}`, true},
		{`"Variable":"$.v","IsPresent":true`, `{"v":null}`, true},
		{`"Variable":"$.v","IsPresent":false`, `{}`, true},
		{`"Variable":"$.v","IsNumeric":true`, `{"v":true}`, false},
		{`"Variable":"$.v","IsString":true`, `{"v":"s"}`, true},
		{`"Variable":"$.v","IsBoolean":false`, `{"v":1}`, true},
		{`"Variable":"$.v","IsTimestamp":true`, `{"v":"2023-02-24 12:15:56.832957"}`, false},
		{`"Variable":"$.v","IsTimestamp":true`, `{"v":"2023-02-24T12:15:56.832957Z"}`, true},
		{`"And":[{"Variable":"$.v","NumericGreaterThan":1},{"Variable":"$.v","NumericLessThan":3}]`, `{"v":2}`, true},
		{`"Or":[{"Variable":"$.v","NumericGreaterThan":5},{"Variable":"$.v","NumericLessThan":3}]`, `{"v":4}`, false},
		{`"Not":{"Variable":"$.v","StringEquals":"x"}`, `{"v":"y"}`, true},
	}
	for _, tc := range cases {
		t.Run(tc.rule+" "+tc.input, func(t *testing.T) {
			def := `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{` + tc.rule + `,"Next":"T"}],"Default":"F"},
			  "T":{"Type":"Pass","Result":"true","End":true},"F":{"Type":"Pass","Result":"false","End":true}}}`
			eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch)})
			d, _ := run(t, eng, def, tc.input)
			if d.Output != fmt.Sprintf("%q", fmt.Sprint(tc.want)) {
				t.Fatalf("got %s (%s %s), want %v", d.Output, d.Error, d.Cause, tc.want)
			}
		})
	}
}

func TestChoiceFailures(t *testing.T) {
	eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch)})
	d, _ := run(t, eng, `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.v","NumericEquals":1,"Next":"E"}]},"E":{"Type":"Succeed"}}}`, `{"v":2}`)
	if d.Error != "States.NoChoiceMatched" {
		t.Errorf("no match: %s %s", d.Error, d.Cause)
	}
	d, _ = run(t, eng, `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.missing","NumericEquals":1,"Next":"E"}],"Default":"E"},"E":{"Type":"Succeed"}}}`, `{}`)
	if d.Error != "States.Runtime" || !strings.Contains(d.Cause, "Invalid path '$.missing'") {
		t.Errorf("missing variable: %s %s", d.Error, d.Cause)
	}
}

func TestWaitUsesTheClock(t *testing.T) {
	clock := asl.NewVirtualClock(epoch)
	eng := asl.New(asl.Config{Clock: clock})
	d, _ := run(t, eng, `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":86400,"Next":"T"},"T":{"Type":"Wait","Timestamp":"2024-01-03T00:00:00Z","End":true}}}`, `{}`)
	if d.Status != asl.StatusSucceeded {
		t.Fatalf("%+v", d)
	}
	if got := clock.Now(); !got.Equal(epoch.Add(48 * time.Hour)) {
		t.Fatalf("clock at %v, want two days on", got)
	}
}

// failingLambda fails with errType until it has failed n times.
type failingLambda struct {
	mu      sync.Mutex
	n       int
	errType string
	calls   int
}

func (l *failingLambda) Invoke(_ context.Context, req asl.LambdaRequest) (*asl.LambdaResponse, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls++
	if l.calls <= l.n {
		return &asl.LambdaResponse{FunctionError: "Unhandled", Payload: []byte(`{"errorMessage":"boom","errorType":"` + l.errType + `"}`)}, nil
	}
	return &asl.LambdaResponse{Payload: req.Payload}, nil
}

func TestRetryBackoff(t *testing.T) {
	cases := []struct {
		name    string
		retrier string
		fails   int
		status  string
		calls   int
		elapsed time.Duration
	}{
		{"backoff doubles", `{"ErrorEquals":["Boom"],"IntervalSeconds":2,"MaxAttempts":3}`, 3, asl.StatusSucceeded, 4, (2 + 4 + 8) * time.Second},
		{"max delay caps", `{"ErrorEquals":["Boom"],"IntervalSeconds":2,"MaxAttempts":3,"MaxDelaySeconds":3}`, 3, asl.StatusSucceeded, 4, (2 + 3 + 3) * time.Second},
		{"exhausted", `{"ErrorEquals":["Boom"],"IntervalSeconds":1,"MaxAttempts":2}`, 5, asl.StatusFailed, 3, 3 * time.Second},
		{"zero attempts", `{"ErrorEquals":["Boom"],"MaxAttempts":0}`, 5, asl.StatusFailed, 1, 0},
		{"TaskFailed matches function errors", `{"ErrorEquals":["States.TaskFailed"],"IntervalSeconds":1,"BackoffRate":1,"MaxAttempts":2}`, 2, asl.StatusSucceeded, 3, 2 * time.Second},
		{"jitter full uses the random source", `{"ErrorEquals":["Boom"],"IntervalSeconds":10,"MaxAttempts":1,"JitterStrategy":"FULL"}`, 1, asl.StatusSucceeded, 2, 5 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clock := asl.NewVirtualClock(epoch)
			lam := &failingLambda{n: tc.fails, errType: "Boom"}
			eng := asl.New(asl.Config{Clock: clock, Lambda: lam, Rand: halfRand{}})
			def := `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:1:function:f","Retry":[` + tc.retrier + `],"End":true}}}`
			d, _ := run(t, eng, def, `{}`)
			if d.Status != tc.status || lam.calls != tc.calls {
				t.Fatalf("status %s after %d calls (%s %s), want %s after %d", d.Status, lam.calls, d.Error, d.Cause, tc.status, tc.calls)
			}
			if got := clock.Now().Sub(epoch); got != tc.elapsed {
				t.Fatalf("backoff took %v, want %v", got, tc.elapsed)
			}
		})
	}
}

type halfRand struct{}

func (halfRand) Float64() float64 { return 0.5 }

func TestFirstMatchingRetrierWinsEvenWhenExhausted(t *testing.T) {
	lam := &failingLambda{n: 2, errType: "Boom"}
	eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch), Lambda: lam})
	def := `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:1:function:f",
	  "Retry":[{"ErrorEquals":["Boom"],"MaxAttempts":1},{"ErrorEquals":["States.ALL"],"MaxAttempts":5}],
	  "Catch":[{"ErrorEquals":["States.ALL"],"ResultPath":"$.error","Next":"C"}],"End":true},"C":{"Type":"Pass","End":true}}}`
	d, _ := run(t, eng, def, `{"in":1}`)
	if lam.calls != 2 {
		t.Fatalf("%d calls: the exhausted first retrier must stop retries", lam.calls)
	}
	out, _ := jsonv.DecodeString(d.Output)
	want, _ := jsonv.DecodeString(`{"in":1,"error":{"Error":"Boom","Cause":"{\"errorMessage\":\"boom\",\"errorType\":\"Boom\"}"}}`)
	if !jsonv.Equal(out, want) {
		t.Fatalf("output %s", d.Output)
	}
}

func TestStatesRuntimeIsNeverCaught(t *testing.T) {
	eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch), Lambda: &failingLambda{}})
	def := `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:1:function:f","OutputPath":"$.no",
	  "Retry":[{"ErrorEquals":["States.ALL"]}],"Catch":[{"ErrorEquals":["States.Runtime"],"Next":"C"},{"ErrorEquals":["States.ALL"],"Next":"C"}],"End":true},"C":{"Type":"Pass","End":true}}}`
	d, x := run(t, eng, def, `{}`)
	if d.Error != "States.Runtime" {
		t.Fatalf("%+v", d)
	}
	if got := strings.Join(types(x), ","); got != "ExecutionStarted,TaskStateEntered,LambdaFunctionScheduled,LambdaFunctionStarted,LambdaFunctionSucceeded,ExecutionFailed" {
		t.Fatalf("history %s", got)
	}
}

func TestLambdaInvokeResultShape(t *testing.T) {
	eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch), Lambda: &failingLambda{}})
	def := `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","Payload":{"a.$":"$.a"}},"ResultSelector":{"p.$":"$.Payload","s.$":"$.StatusCode","v.$":"$.ExecutedVersion"},"End":true}}}`
	d, x := run(t, eng, def, `{"a":5}`)
	if d.Output != `{"p":{"a":5},"s":200,"v":"$LATEST"}` {
		t.Fatalf("output %s (%s %s)", d.Output, d.Error, d.Cause)
	}
	if got := strings.Join(types(x), ","); got != "ExecutionStarted,TaskStateEntered,TaskScheduled,TaskStarted,TaskSucceeded,TaskStateExited,ExecutionSucceeded" {
		t.Fatalf("history %s", got)
	}
	ev := x.History()[2].TaskScheduledEventDetails
	if ev.ResourceType != "lambda" || ev.Resource != "invoke" || ev.Parameters != `{"FunctionName":"f","Payload":{"a":5}}` {
		t.Fatalf("TaskScheduled %+v", ev)
	}
}

func TestOversizeTaskResultIsCatchable(t *testing.T) {
	big := strings.Repeat("x", asl.MaxPayloadBytes)
	lam := lambdaFunc(func(asl.LambdaRequest) *asl.LambdaResponse {
		return &asl.LambdaResponse{Payload: []byte(`"` + big + `"`)}
	})
	eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch), Lambda: lam})
	def := `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:1:function:f","Catch":[{"ErrorEquals":["States.ALL"],"Next":"C"}],"End":true},"C":{"Type":"Pass","End":true}}}`
	d, _ := run(t, eng, def, `{}`)
	if d.Status != asl.StatusSucceeded || !strings.Contains(d.Output, "States.DataLimitExceeded") {
		t.Fatalf("%+v", d)
	}
}

type lambdaFunc func(asl.LambdaRequest) *asl.LambdaResponse

func (f lambdaFunc) Invoke(_ context.Context, r asl.LambdaRequest) (*asl.LambdaResponse, error) {
	return f(r), nil
}

const callbackDef = `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
  "Parameters":{"FunctionName":"f","Payload":{"Token.$":"$$.Task.Token"}}%s,"End":true}%s}}`

func startCallback(t *testing.T, eng *asl.Engine, extra, states string) *asl.Execution {
	t.Helper()
	x, err := eng.Start(context.Background(), asl.StartInput{Machine: mustParse(t, fmt.Sprintf(callbackDef, extra, states)), Input: `{}`})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func hasEvent(x *asl.Execution, typ string) bool {
	for _, e := range x.History() {
		if e.Type == typ {
			return true
		}
	}
	return false
}

func TestTaskTokenLifecycle(t *testing.T) {
	t.Run("success", func(t *testing.T) {
		lam := &tokenLambda{tokens: make(chan string, 1)}
		eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch), Lambda: lam})
		x := startCallback(t, eng, "", "")
		tok := <-lam.tokens
		if err := eng.SendTaskSuccess(tok, `{"answer":42}`); err != nil {
			t.Fatal(err)
		}
		d, _ := x.Wait(context.Background())
		if d.Output != `{"answer":42}` {
			t.Fatalf("%+v", d)
		}
		if got := strings.Join(types(x), ","); got != "ExecutionStarted,TaskStateEntered,TaskScheduled,TaskStarted,TaskSubmitted,TaskSucceeded,TaskStateExited,ExecutionSucceeded" {
			t.Fatalf("history %s", got)
		}
		err := eng.SendTaskSuccess(tok, `{}`)
		var ae *asl.APIError
		if !errors.As(err, &ae) || ae.Code != "TaskTimedOut" {
			t.Fatalf("second answer: %v", err)
		}
	})
	t.Run("failure without error fields", func(t *testing.T) {
		lam := &tokenLambda{tokens: make(chan string, 1)}
		eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch), Lambda: lam})
		x := startCallback(t, eng, "", "")
		if err := eng.SendTaskFailure(<-lam.tokens, "", ""); err != nil {
			t.Fatal(err)
		}
		d, _ := x.Wait(context.Background())
		h := x.History()
		tf := h[len(h)-2].TaskFailedEventDetails
		if d.Status != asl.StatusFailed || tf == nil || tf.Error != "" || tf.Cause != "" {
			t.Fatalf("%+v %+v", d, tf)
		}
	})
	t.Run("invalid token", func(t *testing.T) {
		eng := asl.New(asl.Config{})
		for _, tok := range []string{"", "nope", strings.Repeat("A", 3000)} {
			err := eng.SendTaskHeartbeat(tok)
			var ae *asl.APIError
			if !errors.As(err, &ae) || ae.Code != "InvalidToken" || fault.KindOf(err) != fault.InvalidInput {
				t.Fatalf("%q: %v", tok, err)
			}
		}
	})
	t.Run("heartbeat keeps it alive, then it times out", func(t *testing.T) {
		clock := asl.NewVirtualClock(epoch)
		lam := &tokenLambda{tokens: make(chan string, 1)}
		eng := asl.New(asl.Config{Clock: clock, Lambda: lam})
		x := startCallback(t, eng, `,"HeartbeatSeconds":10,"TimeoutSeconds":100`, "")
		tok := <-lam.tokens
		waitFor(t, "the heartbeat timer", func() bool { return clock.Pending() == 2 })
		clock.Advance(9 * time.Second)
		if err := eng.SendTaskHeartbeat(tok); err != nil {
			t.Fatal(err)
		}
		clock.Advance(9 * time.Second)
		if hasEvent(x, "TaskTimedOut") {
			t.Fatal("timed out despite the heartbeat")
		}
		clock.Advance(2 * time.Second)
		d, _ := x.Wait(context.Background())
		if d.Error != "States.Timeout" || !hasEvent(x, "TaskTimedOut") {
			t.Fatalf("%+v %v", d, types(x))
		}
		err := eng.SendTaskSuccess(tok, `{}`)
		var ae *asl.APIError
		if !errors.As(err, &ae) || ae.Code != "TaskTimedOut" {
			t.Fatalf("late answer: %v", err)
		}
	})
	t.Run("retry issues a new token", func(t *testing.T) {
		clock := asl.NewVirtualClock(epoch)
		lam := &tokenLambda{tokens: make(chan string, 2)}
		eng := asl.New(asl.Config{Clock: clock, Lambda: lam})
		x := startCallback(t, eng, `,"TimeoutSeconds":5,"Retry":[{"ErrorEquals":["States.Timeout"],"MaxAttempts":1}]`, "")
		first := <-lam.tokens
		waitFor(t, "the timeout timer", func() bool { return hasEvent(x, "TaskSubmitted") && clock.Pending() == 1 })
		clock.Advance(6 * time.Second)
		second := <-lam.tokens
		if first == second {
			t.Fatal("the retry reused the token")
		}
		if err := eng.SendTaskSuccess(second, `"ok"`); err != nil {
			t.Fatal(err)
		}
		d, _ := x.Wait(context.Background())
		if d.Output != `"ok"` {
			t.Fatalf("%+v", d)
		}
	})
	t.Run("stop aborts the waiting execution", func(t *testing.T) {
		lam := &tokenLambda{tokens: make(chan string, 1)}
		eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch), Lambda: lam})
		x := startCallback(t, eng, "", "")
		<-lam.tokens
		if err := eng.Stop(x.ARN, "Why", "Because"); err != nil {
			t.Fatal(err)
		}
		d := x.Describe()
		h := x.History()
		if d.Status != asl.StatusAborted || h[len(h)-1].Type != "ExecutionAborted" || eng.PendingTokens() != 0 {
			t.Fatalf("%+v %v pending=%d", d, types(x), eng.PendingTokens())
		}
	})
}

func TestExecutionTimeout(t *testing.T) {
	clock := asl.NewVirtualClock(epoch)
	eng := asl.New(asl.Config{Clock: clock})
	d, x := run(t, eng, `{"StartAt":"W","TimeoutSeconds":10,"States":{"W":{"Type":"Wait","Seconds":60,"End":true}}}`, `{}`)
	h := x.History()
	if d.Status != asl.StatusTimedOut || h[len(h)-1].Type != "ExecutionTimedOut" {
		t.Fatalf("%+v %v", d, types(x))
	}
}

// concurrencyLambda records the most invocations seen at once.
type concurrencyLambda struct {
	now, max atomic.Int32
}

func (l *concurrencyLambda) Invoke(_ context.Context, req asl.LambdaRequest) (*asl.LambdaResponse, error) {
	n := l.now.Add(1)
	for {
		m := l.max.Load()
		if n <= m || l.max.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(time.Millisecond)
	l.now.Add(-1)
	if string(req.Payload) == "3" {
		return &asl.LambdaResponse{FunctionError: "Unhandled", Payload: []byte(`{"errorType":"Bad","errorMessage":"three"}`)}, nil
	}
	return &asl.LambdaResponse{Payload: req.Payload}, nil
}

func TestMapConcurrencyAndTolerance(t *testing.T) {
	mapDef := func(extra string) string {
		return `{"StartAt":"M","States":{"M":{"Type":"Map",` + extra + `"ItemProcessor":{"ProcessorConfig":{"Mode":"INLINE"},"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:1:function:f","End":true}}},"End":true}}}`
	}
	items := `[1,2,4,5,6,7,8,9,10,11,12,13]`
	for _, conc := range []int{1, 3} {
		lam := &concurrencyLambda{}
		eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch), Lambda: lam})
		d, _ := run(t, eng, mapDef(fmt.Sprintf(`"MaxConcurrency":%d,`, conc)), items)
		if d.Output != items || int(lam.max.Load()) > conc {
			t.Fatalf("MaxConcurrency %d: output %s, %d at once", conc, d.Output, lam.max.Load())
		}
	}
	eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch), Lambda: &concurrencyLambda{}})
	d, x := run(t, eng, mapDef(`"MaxConcurrency":1,`), `[1,3,5]`)
	if d.Error != "Bad" || !hasEvent(x, "MapIterationFailed") || !hasEvent(x, "MapStateFailed") {
		t.Fatalf("untolerated failure: %+v", d)
	}
	d, _ = run(t, eng, mapDef(`"ToleratedFailureCount":1,`), `[1,3,5]`)
	if d.Status != asl.StatusSucceeded || !strings.Contains(d.Output, `"Error":"Bad"`) {
		t.Fatalf("tolerated failure: %+v", d)
	}
	d, _ = run(t, eng, mapDef(`"ToleratedFailurePercentage":10,`), `[1,3,5]`)
	if d.Error != "States.ExceedToleratedFailureThreshold" {
		t.Fatalf("threshold: %+v", d)
	}
}

func TestVariablesScope(t *testing.T) {
	def := `{"StartAt":"A","States":{
	  "A":{"Type":"Pass","Assign":{"outer":"o","n":1},"Next":"M"},
	  "M":{"Type":"Map","ItemsPath":"$.items","ItemSelector":{"v.$":"$$.Map.Item.Value","o.$":"$outer"},
	    "ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","Assign":{"inner.$":"$.v"},"Parameters":{"o.$":"$outer","v.$":"$.v"},"End":true}}},"Next":"B"},
	  "B":{"Type":"Pass","Parameters":{"n.$":"$n","r.$":"$"},"End":true}}}`
	eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch)})
	d, _ := run(t, eng, def, `{"items":[1,2]}`)
	if d.Output != `{"n":1,"r":[{"o":"o","v":1},{"o":"o","v":2}]}` {
		t.Fatalf("%+v", d)
	}
	d, _ = run(t, eng, `{"StartAt":"M","States":{"M":{"Type":"Map","ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","Assign":{"inner":1},"End":true}}},"Next":"B"},
	  "B":{"Type":"Pass","Parameters":{"x.$":"$inner"},"End":true}}}`, `[1]`)
	if d.Error != "States.Runtime" {
		t.Fatalf("inner variable leaked out: %+v", d)
	}
}

func TestStartErrors(t *testing.T) {
	eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch)})
	m := mustParse(t, `{"StartAt":"S","States":{"S":{"Type":"Succeed"}}}`)
	if _, err := eng.Start(context.Background(), asl.StartInput{Machine: m, Input: `{not json`}); fault.KindOf(err) != fault.InvalidInput {
		t.Errorf("bad input: %v", err)
	}
	if _, err := eng.Start(context.Background(), asl.StartInput{Machine: m, Input: `"` + strings.Repeat("x", asl.MaxPayloadBytes) + `"`}); fault.KindOf(err) != fault.TooLarge {
		t.Errorf("big input: %v", err)
	}
	if _, err := eng.Start(context.Background(), asl.StartInput{Machine: m, Name: "n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Start(context.Background(), asl.StartInput{Machine: m, Name: "n"}); fault.KindOf(err) != fault.Conflict || !strings.Contains(err.Error(), "Execution Already Exists") {
		t.Errorf("duplicate: %v", err)
	}
}

func TestHistoryLimit(t *testing.T) {
	eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch)})
	d, x := run(t, eng, `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"},"B":{"Type":"Pass","Next":"A"}}}`, `{}`)
	h := x.History()
	if d.Status != asl.StatusFailed || d.Error != "States.Runtime" || len(h) != asl.MaxHistoryEvents+1 || h[len(h)-1].Type != "ExecutionFailed" {
		t.Fatalf("%s %s %q after %d events", d.Status, d.Error, d.Cause, len(h))
	}
}

func TestFunctionErrorResponse(t *testing.T) {
	lam := lambdaFunc(func(asl.LambdaRequest) *asl.LambdaResponse {
		return asl.FunctionErrorResponse("errorString", `bad "input"`)
	})
	eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch), Lambda: lam})
	d, _ := run(t, eng, `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f"},"End":true}}}`, `{}`)
	if d.Error != "errorString" || d.Cause != `{"errorMessage":"bad \"input\"","errorType":"errorString"}` {
		t.Fatalf("%s %s", d.Error, d.Cause)
	}
}

func TestOnStatus(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch), OnStatus: func(d asl.Description) {
		mu.Lock()
		seen = append(seen, d.Status)
		mu.Unlock()
	}})
	run(t, eng, `{"StartAt":"F","States":{"F":{"Type":"Fail","Error":"E"}}}`, `{}`)
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(seen, ",") != "RUNNING,FAILED" {
		t.Fatalf("statuses %v", seen)
	}
}

func TestExecutionTimeoutWhileParkedOnToken(t *testing.T) {
	clock := asl.NewVirtualClock(epoch)
	lam := &tokenLambda{tokens: make(chan string, 1)}
	eng := asl.New(asl.Config{Clock: clock, Lambda: lam})
	def := `{"StartAt":"T","TimeoutSeconds":10,"States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
	  "Parameters":{"FunctionName":"f","Payload":{"Token.$":"$$.Task.Token"}},"End":true}}}`
	x, err := eng.Start(context.Background(), asl.StartInput{Machine: mustParse(t, def), Input: `{}`})
	if err != nil {
		t.Fatal(err)
	}
	<-lam.tokens
	waitFor(t, "parking", x.Parked)
	clock.Advance(11 * time.Second)
	d, _ := x.Wait(context.Background())
	h := x.History()
	if d.Status != asl.StatusTimedOut || h[len(h)-2].Type != "TaskStateAborted" || h[len(h)-1].Type != "ExecutionTimedOut" {
		t.Fatalf("%+v %v", d, types(x))
	}
}
