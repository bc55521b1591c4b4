package durable

import "sync"

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
	done chan error
}

// update makes ops durable, in one frame with the writes queued alongside them, and then part of
// the store's state.
func (c *committer) update(ops ...op) error {
	r := &commitReq{ops: ops, done: make(chan error, 1)}
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
