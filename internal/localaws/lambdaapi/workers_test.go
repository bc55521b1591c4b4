package lambdaapi

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// goroutineID is the running goroutine's number, from its stack's first line.
func goroutineID() int {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	f := bytes.Fields(buf)
	if len(f) < 2 {
		return -1
	}
	id, _ := strconv.Atoi(string(f[1]))
	return id
}

// TestWorkersUnbounded: invocations that all wait for one another each get a goroutine at once.
func TestWorkersUnbounded(t *testing.T) {
	const n = 200
	var started, release sync.WaitGroup
	started.Add(n)
	release.Add(1)
	done := make(chan struct{}, n)
	for range n {
		goWorker(func() {
			started.Done()
			release.Wait()
			done <- struct{}{}
		})
	}
	started.Wait() // would never return with fewer than n goroutines
	release.Done()
	for range n {
		<-done
	}
}

// TestWorkersReused: an invocation after another has ended runs on the goroutine the first ran
// on, once that one is idle.
func TestWorkersReused(t *testing.T) {
	ids := make(chan int, 1)
	job := func() { ids <- goroutineID() }
	goWorker(job)
	first := <-ids
	// The worker goes idle just after the job's send; another test's invocation may take it.
	for range 1000 {
		goWorker(job)
		if id := <-ids; id == first {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Errorf("no invocation ran on goroutine %d again", first)
}
