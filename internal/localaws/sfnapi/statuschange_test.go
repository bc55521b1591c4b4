package sfnapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"sinew/internal/asl"
	"sinew/internal/localaws/durable"
)

// orderCheck is a Publisher that notes, for each status change, the execution's status in the
// store at the moment the event is put ("none" when not durable yet): what a crash right then
// would leave recorded.
type orderCheck struct {
	st   *durable.Store
	fail bool // Put fails (the journal cannot be written)

	mu      sync.Mutex
	storeAt map[string]string // by "<name> <event status>"
}

func (o *orderCheck) Put(_ context.Context, _, _, _ string, detail json.RawMessage, _ []string) (string, error) {
	var d struct{ Name, Status, ExecutionArn string }
	_ = json.Unmarshal(detail, &d)
	xs, _ := o.st.Executions()
	stored := "none"
	for _, x := range xs {
		if x.Name == d.Name {
			stored = x.Status
		}
	}
	o.mu.Lock()
	o.storeAt[d.Name+" "+d.Status] = stored
	o.mu.Unlock()
	if o.fail {
		return "", errors.New("the journal is full")
	}
	return "id", nil
}

// TestStatusChangeBeforeEnd: an execution's end is put on the bus (which journals it) before the
// end is recorded, so no crash can leave an ended execution whose status change was never
// journaled; a failed put leaves the end recorded all the same.
func TestStatusChangeBeforeEnd(t *testing.T) {
	tests := []struct {
		name, def, want string
		fail            bool
	}{
		{"succeeded", passDef, "SUCCEEDED", false},
		{"failed", `{"StartAt":"F","States":{"F":{"Type":"Fail","Error":"E"}}}`, "FAILED", false},
		{"put fails", passDef, "SUCCEEDED", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := openStore(t)
			pub := &orderCheck{st: st, fail: tc.fail, storeAt: map[string]string{}}
			inv := echo{tokens: make(chan string, 1)}
			rec := durable.NewRecorder(st, inv, nil, nil)
			eng := asl.New(asl.Config{Lambda: rec, Clock: rec})
			svc := New(Options{Store: st, Recorder: rec, Engine: eng, Events: pub})
			srv := httptest.NewServer(svc)
			defer srv.Close()
			f := &fixture{url: srv.URL, svc: svc}
			sm := f.machine(t, "m", tc.def, "STANDARD")
			arn := f.ok(t, "StartExecution", map[string]any{"stateMachineArn": sm, "name": "x"})["executionArn"].(string)
			f.waitStatus(t, arn, tc.want)
			svc.Wait()
			pub.mu.Lock()
			defer pub.mu.Unlock()
			// RUNNING, or not yet durable at all: a short execution's start and end share one commit.
			if got, ok := pub.storeAt["x "+tc.want]; !ok || (got != asl.StatusRunning && got != "none") {
				t.Errorf("when its %s event was put the store held the execution as %q, want it not ended yet", tc.want, got)
			}
			xs, _ := st.Executions()
			if len(xs) != 1 || xs[0].Status != tc.want {
				t.Errorf("recorded %+v, want the end %s", xs, tc.want)
			}
		})
	}
}

// TestHeartbeatDurableBeforeAnswer: a heartbeat SendTaskHeartbeat answered is in the journal when
// the answer arrives, so a crash right after cannot time the task out at the deadline before it.
func TestHeartbeatDurableBeforeAnswer(t *testing.T) {
	st := openStore(t)
	f := serve(t, st)
	def := `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",` +
		`"HeartbeatSeconds":100,"TimeoutSeconds":1000,"End":true,"Parameters":{"FunctionName":"f","Payload":{"token.$":"$$.Task.Token"}}}}}`
	sm := f.machine(t, "hb", def, "STANDARD")
	arn := f.ok(t, "StartExecution", map[string]any{"stateMachineArn": sm, "name": "h"})["executionArn"].(string)
	tok := <-f.tokens
	for i := range 3 {
		time.Sleep(20 * time.Millisecond)
		beat := time.Now()
		f.ok(t, "SendTaskHeartbeat", map[string]any{"taskToken": tok})
		j, err := st.LoadJournal(arn)
		if err != nil {
			t.Fatal(err)
		}
		var latest time.Time
		for key, at := range j.Timers {
			if strings.HasPrefix(key, "HeartbeatSeconds") && at.After(latest) {
				latest = at
			}
		}
		if latest.Before(beat.Add(100 * time.Second)) {
			t.Fatalf("heartbeat %d: the journal's deadline is %v, before the one it renewed (%v)", i, latest, beat.Add(100*time.Second))
		}
	}
}

// TestStopDurableBeforeAnswer: an execution StopExecution answered is recorded ABORTED when the
// answer arrives, so a crash right after cannot run it on.
func TestStopDurableBeforeAnswer(t *testing.T) {
	st := openStore(t)
	f := serve(t, st)
	sm := f.machine(t, "stop", waitDef, "STANDARD")
	for i := range 5 {
		arn := f.ok(t, "StartExecution", map[string]any{"stateMachineArn": sm, "name": fmt.Sprintf("s%d", i)})["executionArn"].(string)
		<-f.tokens
		f.ok(t, "StopExecution", map[string]any{"executionArn": arn, "error": "E"})
		xs, err := st.Executions()
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range xs {
			if x.Arn == arn && x.Status != asl.StatusAborted {
				t.Fatalf("stop %d: recorded %s when StopExecution answered, want ABORTED", i, x.Status)
			}
		}
	}
}
