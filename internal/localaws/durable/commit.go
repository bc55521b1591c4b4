package durable

import (
	"sync"

	bolt "go.etcd.io/bbolt"
)

// Group commit. Every write must reach the disk before it is acknowledged (fsync), and bbolt has
// one writer at a time, so writes from many executions would queue for one fsync each. Instead a
// write joins the queue and the first writer commits everything queued in one transaction (one
// fsync): no added delay when alone, shared fsyncs under load. bbolt's own Batch waits a fixed
// delay to gather writes, which would slow every lone write.
type committer struct {
	db      *bolt.DB
	mu      sync.Mutex
	queue   []*commitReq
	running bool
}

type commitReq struct {
	fn   func(*bolt.Tx) error
	done chan error
}

// update runs fn in a write transaction shared with the writes queued alongside it. fn may run
// twice (alone, after a shared transaction failed), so it must only put and delete.
func (c *committer) update(fn func(*bolt.Tx) error) error {
	r := &commitReq{fn: fn, done: make(chan error, 1)}
	c.mu.Lock()
	c.queue = append(c.queue, r)
	if !c.running {
		c.running = true
		go c.loop()
	}
	c.mu.Unlock()
	return <-r.done
}

func (c *committer) loop() {
	for {
		c.mu.Lock()
		batch := c.queue
		c.queue = nil
		if len(batch) == 0 {
			c.running = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		err := c.db.Update(func(tx *bolt.Tx) error {
			for _, r := range batch {
				if err := r.fn(tx); err != nil {
					return err
				}
			}
			return nil
		})
		if err == nil || len(batch) == 1 {
			for _, r := range batch {
				r.done <- err
			}
			continue
		}
		// One write failed the shared transaction: give each its own, so only it fails.
		for _, r := range batch {
			r.done <- c.db.Update(r.fn)
		}
	}
}
