package durable

import (
	"path/filepath"
	"testing"
	"time"

	"sinew/internal/asl"
)

// laterClock is the real clock moved ahead by skew: a recorder started "later".
type laterClock struct {
	asl.RealClock
	skew time.Duration
}

func (c laterClock) Now() time.Time { return time.Now().Add(c.skew) }

// The token of an ended execution is answered TaskTimedOut (ErrAnswered) by the recorder that
// ended it and by a recorder started after a crash, for TombstoneSpan; after it the token is
// unknown (TaskDoesNotExist), and its entry is gone from the store.
func TestEndedExecutionsTokensSurviveRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sfn.db")
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	m := parse(t, `{"StartAt":"B","States":{
		"B":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","Parameters":{"FunctionName":"callback","Payload":{"token.$":"$$.Task.Token"}},"End":true}}}`)
	inv := newCounting()
	rec, eng, x := boot(t, st, inv, m)
	tok := <-inv.tokens
	if handled, err := rec.Answer(tok, Outcome{Success: true, Output: `{}`}, func(cur string) error { return eng.SendTaskHeartbeat(cur) }); !handled || err != nil {
		t.Fatalf("Answer = %v, %v", handled, err)
	}
	if d := wait(t, x); d.Status != asl.StatusSucceeded {
		t.Fatalf("execution %s", d.Status)
	}
	rec.End(execArn) // as sfnapi does once the closed record is written
	if handled, err := rec.Answer(tok, Outcome{Success: true, Output: `{}`}, func(string) error { return nil }); !handled || err != ErrAnswered {
		t.Errorf("same process: Answer = %v, %v; want true, ErrAnswered", handled, err)
	}
	// A restart: the store read again from its file.
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if st, err = Open(path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })

	tests := []struct {
		name    string
		skew    time.Duration
		handled bool
		err     error
	}{
		{"after a restart", time.Hour, true, ErrAnswered},
		{"past the span", TombstoneSpan + time.Hour, false, nil},
		{"after the span dropped it", 0, false, nil},
	}
	for _, tt := range tests {
		r := NewRecorder(st, inv, laterClock{skew: tt.skew}, nil)
		handled, err := r.Answer(tok, Outcome{Success: true, Output: `{}`}, func(string) error { return nil })
		if handled != tt.handled || err != tt.err {
			t.Errorf("%s: Answer = %v, %v; want %v, %v", tt.name, handled, err, tt.handled, tt.err)
		}
	}
	if all, err := st.closedTokens(); err != nil || len(all) != 0 {
		t.Errorf("closed tokens in the store after the span: %v, %v; want none", all, err)
	}
}
