package durable

import (
	"slices"
	"sync"
)

// Group commit. Every write must reach the disk before it is acknowledged (fdatasync), and writes
// from many executions would queue for one fdatasync each. Instead a write joins the queue and the
// first writer commits everything queued as one frame (one write, one fdatasync): no added delay
// when alone, shared fdatasyncs under load.
type committer struct {
	s       *Store
	mu      sync.Mutex
	queue   []*commitReq
	running bool
}

type commitReq struct {
	ops  []op
	upTo Frame // a SyncTo: done without a commit once this frame is durable
	done chan error
}

// update makes ops durable, in one frame with the writes queued alongside them, and then part of
// the store's state.
func (c *committer) update(ops ...op) error {
	return c.wait(&commitReq{ops: ops, done: make(chan error, 1)})
}

// syncTo waits until frame f is durable, committing when no commit has made it so.
func (c *committer) syncTo(f Frame) error {
	return c.wait(&commitReq{upTo: f, done: make(chan error, 1)})
}

func (c *committer) wait(r *commitReq) error {
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
		// A SyncTo whose frame the commit before made durable needs no commit of its own.
		batch = slices.DeleteFunc(batch, func(r *commitReq) bool {
			if r.upTo != 0 && r.ops == nil && c.s.durable(r.upTo) {
				r.done <- nil
				return true
			}
			return false
		})
		if len(batch) == 0 {
			continue
		}
		var ops []op
		for _, r := range batch {
			ops = append(ops, r.ops...)
		}
		err := c.s.commit(ops)
		for _, r := range batch {
			r.done <- err
		}
	}
}
