package durable

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Concurrent writes share commits and every one lands, after a reopen too.
func TestGroupCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sfn.log")
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutExecution(Execution{Arn: execArn, Status: "RUNNING"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 60)
	for i := range 60 {
		wg.Go(func() { errs[i] = st.RecordCall(execArn, fmt.Sprintf("k#%d", i), Call{Payload: []byte(fmt.Sprint(i))}) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("write %d: %v", i, err)
		}
	}
	frames := 0
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for off := len(logMagic); off+8 <= len(data); {
		n := int(data[off]) | int(data[off+1])<<8 | int(data[off+2])<<16 | int(data[off+3])<<24
		if n == 0 {
			break
		}
		frames++
		off += 8 + n
	}
	if frames > 40 {
		t.Errorf("61 writes took %d commits, want them shared", frames)
	}
	if st, err = Open(path); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	j, err := st.LoadJournal(execArn)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Calls) != 60 {
		t.Errorf("%d calls journaled, want 60", len(j.Calls))
	}
}

// A crash that tears the last frame loses that commit only (it was never acknowledged); what came
// before it, closed histories too, reads back whole.
func TestTornFrame(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sfn.log")
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	x := Execution{Arn: execArn, Status: "SUCCEEDED", Start: time.Unix(1, 0).UTC(), Events: []byte(`[{"id":1}]`)}
	if err := st.PutExecution(x); err != nil {
		t.Fatal(err)
	}
	if err := st.PutMachine(Machine{Arn: "m1", Name: "m1"}); err != nil {
		t.Fatal(err)
	}
	end := st.log.end
	if err := st.PutMachine(Machine{Arn: "m2", Name: "m2", Definition: "{}"}); err != nil {
		t.Fatal(err)
	}
	torn := st.log.end - 3
	st.Close()
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int64{end + 5, torn} {
		data := append([]byte(nil), whole...)
		clear(data[cut:])
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		st, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		ms, _ := st.Machines()
		ev, err := st.ExecutionEvents(execArn)
		if len(ms) != 1 || ms[0].Arn != "m1" || string(ev) != `[{"id":1}]` || err != nil {
			t.Errorf("cut at %d: machines %+v, events %s %v", cut, ms, ev, err)
		}
		st.Close()
	}
}

// A staged start joins the state, before the end written after it, at the next commit; Sync makes
// a lone one durable.
func TestStagedStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sfn.log")
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	run := Execution{Arn: execArn, Status: "RUNNING", Definition: `{"StartAt":"P"}`}
	if _, err := st.StageExecution(run); err != nil {
		t.Fatal(err)
	}
	if xs, _ := st.Executions(); len(xs) != 0 {
		t.Errorf("a staged start is read back before it is durable: %+v", xs)
	}
	end := run
	end.Status, end.Definition, end.Events = "SUCCEEDED", "", []byte(`[]`)
	if err := st.PutExecution(end); err != nil {
		t.Fatal(err)
	}
	other := Execution{Arn: execArn + "2", Status: "RUNNING", Definition: `{"StartAt":"P"}`}
	if _, err := st.StageExecution(other); err != nil {
		t.Fatal(err)
	}
	if err := st.Sync(); err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		xs, err := st.Executions()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, x := range xs {
			got[x.Arn] = x.Status
		}
		if len(got) != 2 || got[execArn] != "SUCCEEDED" || got[execArn+"2"] != "RUNNING" {
			t.Errorf("round %d: executions %v", round, got)
		}
		if _, open := st.st.journals[execArn]; open {
			t.Errorf("round %d: the closed execution's journal is open", round)
		}
		st.Close()
		if st, err = Open(path); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
}

// SyncTo makes its frame durable and waits for no frame staged after it; a frame that a commit
// has made durable needs no other.
func TestSyncTo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sfn.log")
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	first, err := st.StageExecution(Execution{Arn: execArn, Status: "RUNNING"})
	if err != nil {
		t.Fatal(err)
	}
	later, err := st.StageExecution(Execution{Arn: execArn + "2", Status: "RUNNING"})
	if err != nil {
		t.Fatal(err)
	}
	if later <= first {
		t.Fatalf("frames %d then %d, want them increasing", first, later)
	}
	if err := st.SyncTo(first); err != nil {
		t.Fatal(err)
	}
	if xs, _ := st.Executions(); len(xs) != 2 {
		t.Errorf("after SyncTo: %d executions durable, want both (one commit takes every staged frame)", len(xs))
	}
	end := st.log.end
	if err := st.SyncTo(later); err != nil {
		t.Fatal(err)
	}
	if st.log.end != end {
		t.Errorf("SyncTo a durable frame wrote %d bytes", st.log.end-end)
	}
	third, err := st.StageExecution(Execution{Arn: execArn + "3", Status: "RUNNING"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SyncTo(later); err != nil {
		t.Fatal(err)
	}
	if xs, _ := st.Executions(); len(xs) != 2 {
		t.Errorf("SyncTo an earlier frame made a later one durable: %d executions", len(xs))
	}
	if err := st.SyncTo(third); err != nil {
		t.Fatal(err)
	}
	if xs, _ := st.Executions(); len(xs) != 3 {
		t.Errorf("after SyncTo(third): %d executions, want 3", len(xs))
	}
}

// Frames staged while another commit syncs are not lost: the next commit takes them, in order.
func TestStageDuringCommits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sfn.log")
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 40)
	for i := range 40 {
		wg.Go(func() {
			arn := fmt.Sprintf("%s-%d", execArn, i)
			f, err := st.StageExecution(Execution{Arn: arn, Status: "RUNNING"})
			if err == nil && i%2 == 0 {
				err = st.SyncTo(f)
			} else if err == nil {
				err = st.PutExecution(Execution{Arn: arn, Status: "SUCCEEDED", Events: []byte(`[]`)})
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("execution %d: %v", i, err)
		}
	}
	for round := range 2 {
		xs, err := st.Executions()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, x := range xs {
			got[x.Arn] = x.Status
		}
		for i := range 40 {
			want := "RUNNING"
			if i%2 == 1 {
				want = "SUCCEEDED"
			}
			if s := got[fmt.Sprintf("%s-%d", execArn, i)]; s != want {
				t.Errorf("round %d: execution %d is %q, want %q", round, i, s, want)
			}
		}
		st.Close()
		if st, err = Open(path); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
}

// Rewrites of the log while starts are staged and ends committed from many goroutines lose
// nothing: the frames written during a commit are made durable before the rewrite.
func TestRewriteWhileStaging(t *testing.T) {
	old := rewriteMin
	rewriteMin = 4 << 10
	t.Cleanup(func() { rewriteMin = old })
	path := filepath.Join(t.TempDir(), "sfn.log")
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	input := strings.Repeat("x", 2<<10)
	var wg sync.WaitGroup
	errs := make([]error, 60)
	for i := range 60 {
		wg.Go(func() {
			arn := fmt.Sprintf("%s-%d", execArn, i)
			f, err := st.StageExecution(Execution{Arn: arn, Status: "RUNNING", Input: input})
			if err == nil {
				err = st.SyncTo(f)
			}
			if err == nil && i%3 != 0 {
				err = st.PutExecution(Execution{Arn: arn, Status: "SUCCEEDED", Input: input, Events: []byte(`[{"id":1}]`)})
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("execution %d: %v", i, err)
		}
	}
	if st.log.base == int64(len(logMagic)) {
		t.Error("the log was never rewritten")
	}
	st.Close()
	if st, err = Open(path); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	xs, err := st.Executions()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, x := range xs {
		got[x.Arn] = x.Status
	}
	for i := range 60 {
		arn, want := fmt.Sprintf("%s-%d", execArn, i), "SUCCEEDED"
		if i%3 == 0 {
			want = "RUNNING"
		}
		if got[arn] != want {
			t.Errorf("execution %d is %q, want %q", i, got[arn], want)
		}
		if ev, err := st.ExecutionEvents(arn); want == "SUCCEEDED" && (err != nil || string(ev) != `[{"id":1}]`) {
			t.Errorf("execution %d's events %s, %v", i, ev, err)
		}
	}
}

// A rewrite due while a start is staged (written during a commit's fdatasync) keeps that start.
func TestRewriteKeepsStaged(t *testing.T) {
	old := rewriteMin
	rewriteMin = 1
	t.Cleanup(func() { rewriteMin = old })
	path := filepath.Join(t.TempDir(), "sfn.log")
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.StageExecution(Execution{Arn: execArn, Status: "RUNNING", Input: strings.Repeat("x", 4<<10)}); err != nil {
		t.Fatal(err)
	}
	st.syncMu.Lock()
	st.wmu.Lock()
	before := st.log
	st.maybeCompact(st.log)
	after := st.log
	st.wmu.Unlock()
	st.syncMu.Unlock()
	if after == before {
		t.Fatal("no rewrite: the test's log did not grow enough")
	}
	st.Close()
	if st, err = Open(path); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if xs, _ := st.Executions(); len(xs) != 1 || xs[0].Arn != execArn {
		t.Errorf("after the rewrite and a reopen: %+v, want the staged start", xs)
	}
}
