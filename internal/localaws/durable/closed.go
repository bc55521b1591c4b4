package durable

import (
	"encoding/json"
	"fmt"
	"time"
)

// TombstoneSpan is how long the task tokens of an ended execution are remembered: an answer with
// one gets TaskTimedOut, as AWS answers a token whose task is over, across restarts too. After it,
// TaskDoesNotExist, as the engine answers every token it never knew.
const TombstoneSpan = 48 * time.Hour

// closedTokens is a bClosed entry: the tokens an execution had when it ended.
type closedTokens struct {
	At     time.Time `json:"at"`
	Tokens []string  `json:"tokens"`
}

// closedSet is the recorder's memory of ended executions' tokens (r.mu): each token, and each
// execution's entry, to drop them together once past TombstoneSpan.
type closedSet struct {
	tokens map[string]struct{}
	byExec map[string]closedTokens
	ends   int // ends since the last prune
}

// pruneEvery is how many ends pass between prunes, so that a prune's scan of every execution's
// entry costs each end O(1) on average.
const pruneEvery = 1024

func (c *closedSet) add(arn string, ct closedTokens) {
	if c.tokens == nil {
		c.tokens, c.byExec = map[string]struct{}{}, map[string]closedTokens{}
	}
	for _, tok := range ct.Tokens {
		c.tokens[tok] = struct{}{}
	}
	c.byExec[arn] = ct
}

// expired removes and returns the executions whose entry is older than TombstoneSpan at now.
func (c *closedSet) expired(now time.Time) []string {
	var out []string
	for arn, ct := range c.byExec {
		if now.Sub(ct.At) < TombstoneSpan {
			continue
		}
		for _, tok := range ct.Tokens {
			delete(c.tokens, tok)
		}
		delete(c.byExec, arn)
		out = append(out, arn)
	}
	return out
}

// loadClosed takes up the tokens of executions that ended within TombstoneSpan, and drops the
// older ones from the store.
func (r *Recorder) loadClosed() {
	if r.st == nil {
		return
	}
	all, err := r.st.closedTokens()
	if err != nil {
		r.log.Warn("the task tokens of ended executions could not be read; answers with them get TaskDoesNotExist", "error", err)
		return
	}
	for arn, ct := range all {
		r.closed.add(arn, ct)
	}
	r.dropExpired(r.closed.expired(r.clock.Now()))
}

// closeTokens remembers, durably, the tokens of execution arn, which just ended.
func (r *Recorder) closeTokens(arn string, toks []string) {
	if len(toks) == 0 {
		return
	}
	ct := closedTokens{At: r.clock.Now().UTC(), Tokens: toks}
	r.mu.Lock()
	r.closed.add(arn, ct)
	r.closed.ends++
	var old []string
	if r.closed.ends >= pruneEvery {
		r.closed.ends, old = 0, r.closed.expired(ct.At)
	}
	r.mu.Unlock()
	if r.st == nil {
		return
	}
	if err := r.st.put(bClosed, arn, ct); err != nil {
		// Only the answer's error code is at stake: TaskDoesNotExist instead of TaskTimedOut.
		r.log.Warn("the task tokens of an ended execution were not kept", "execution", arn, "error", err)
	}
	r.dropExpired(old)
}

func (r *Recorder) dropExpired(arns []string) {
	if r.st == nil || len(arns) == 0 {
		return
	}
	ops := make([]op, 0, len(arns))
	for _, arn := range arns {
		ops = append(ops, op{kind: opDel, bucket: bClosed, a: arn})
	}
	if err := r.st.w.update(ops...); err != nil {
		r.log.Warn("expired task tokens could not be dropped; the next start tries again", "error", err)
	}
}

// closedTokens reads every bClosed entry.
func (s *Store) closedTokens() (map[string]closedTokens, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(map[string]closedTokens, len(s.st.kv[bClosed]))
	for arn, v := range s.st.kv[bClosed] {
		var ct closedTokens
		if err := json.Unmarshal(v, &ct); err != nil {
			return nil, fmt.Errorf("durable: the closed tokens of %s: %w", arn, err)
		}
		out[arn] = ct
	}
	return out, nil
}
