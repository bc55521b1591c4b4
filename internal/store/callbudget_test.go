package store_test

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// TestTakeCalls: concurrent takers of one turn's count each get their own share, another turn's
// count is its own, and the item carries a time to live.
func TestTakeCalls(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	var befores []int
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			b, err := e.s.TakeCalls(ctx(), "d", "turn-1", 10, time.Hour)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			befores = append(befores, b)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(befores)
	if want := []int{0, 10, 20, 30, 40, 50, 60, 70}; !slices.Equal(befores, want) {
		t.Errorf("counts before each take %v, want %v", befores, want)
	}
	if b, err := e.s.TakeCalls(ctx(), "d", "turn-2", 3, time.Hour); err != nil || b != 0 {
		t.Errorf("another turn: %d %v, want a count of its own", b, err)
	}
	if ttl := ttlOf(t, e.rawItem(t, "DEV#d#IDEM#call-budget%23turn-1", "IDEM")); ttl <= time.Now().Unix() {
		t.Errorf("ttl %d, want one in the future", ttl)
	}
}
