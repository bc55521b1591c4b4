package durable

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// Concurrent writes share commits, every one lands, and a failing write fails alone.
func TestGroupCommit(t *testing.T) {
	st := openStore(t)
	boom := errors.New("boom")
	var wg sync.WaitGroup
	errs := make([]error, 60)
	for i := range 60 {
		wg.Go(func() {
			if i%20 == 7 {
				errs[i] = st.w.update(func(*bolt.Tx) error { return boom })
				return
			}
			errs[i] = st.RecordCall(execArn, fmt.Sprintf("k#%d", i), Call{Payload: []byte(fmt.Sprint(i))})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if want := i%20 == 7; want != errors.Is(err, boom) || (!want && err != nil) {
			t.Errorf("write %d: %v", i, err)
		}
	}
	j, err := st.LoadJournal(execArn)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Calls) != 57 {
		t.Errorf("%d calls journaled, want 57", len(j.Calls))
	}
}
