package workflow

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"sinew/internal/fault"
	"sinew/internal/store"
)

// DefaultSweepLimit bounds the records one sweep looks at, over all the open index's shards: a
// sweep costs at most that many Queries of one partition, reads and DescribeExecutions, whatever
// the number of open executions; what it leaves is the next sweep's, oldest first.
const DefaultSweepLimit = 200

// SweepOptions bound one sweep; zero values are the defaults.
type SweepOptions struct {
	Limit int           // records looked at, over all shards: DefaultSweepLimit when 0
	Grace time.Duration // how old a record is before the sweep looks at it: the Reconciler's Grace when 0
}

// SweepStats is what one sweep did.
type SweepStats struct {
	Looked   int `json:"looked"`   // open records due for a look
	Settled  int `json:"settled"`  // settled from Step Functions: their status change was lost
	Closed   int `json:"closed"`   // final already, taken out of the open index
	Deferred int `json:"deferred"` // still running: looked at again later
	Failed   int `json:"failed"`   // could not be looked at (the next sweep tries again)
}

// Sweep settles the open records whose execution ended (or does not exist) without them: it looks
// at up to o.Limit records whose grace has passed, the oldest of each shard of the open index
// first. A record whose execution still runs is looked at again after a gap that grows with its
// age (from the grace up to MaxGap), so the executions that wait long for a client cost a look an
// hour at most, and never crowd out the others.
func (r *Reconciler) Sweep(ctx context.Context, o SweepOptions) (SweepStats, error) {
	limit := o.Limit
	if limit <= 0 {
		limit = DefaultSweepLimit
	}
	if o.Grace <= 0 {
		o.Grace = orDefault(r.Grace, DefaultGrace)
	}
	per := max(1, (limit+store.OpenShards-1)/store.OpenShards)
	now := r.now()
	before := now.Add(-o.Grace)
	var mu sync.Mutex
	var total SweepStats
	var errs []error
	var wg sync.WaitGroup
	for shard := range store.OpenShards {
		// A go statement, not wg.Go: every func() given to wg.Go meets in its parameter, so the
		// static analysis behind the IAM grants (infra/cdk/awscalls) would have each function that
		// uses wg.Go reach the sweep's index Query.
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := r.sweepShard(ctx, shard, before, per, now, o.Grace)
			mu.Lock()
			defer mu.Unlock()
			total.Looked, total.Settled, total.Closed = total.Looked+st.Looked, total.Settled+st.Settled, total.Closed+st.Closed
			total.Deferred, total.Failed = total.Deferred+st.Deferred, total.Failed+st.Failed
			if err != nil {
				errs = append(errs, err)
			}
		}()
	}
	wg.Wait()
	if total.Looked > 0 {
		r.log().InfoContext(ctx, "sweep of open executions", "looked", total.Looked, "settled", total.Settled, "closed", total.Closed,
			"deferred", total.Deferred, "failed", total.Failed)
	}
	return total, errors.Join(errs...)
}

// sweepShard looks at one shard's due records, one after another.
func (r *Reconciler) sweepShard(ctx context.Context, shard int, before time.Time, limit int, now time.Time, grace time.Duration) (SweepStats, error) {
	var st SweepStats
	refs, err := r.Store.OpenExecutions(ctx, shard, before, limit)
	if err != nil {
		return st, fmt.Errorf("sweep shard %d: %w", shard, err)
	}
	var first error
	for _, ref := range refs {
		st.Looked++
		what, err := r.sweepOne(ctx, ref, now, grace)
		switch {
		case err != nil:
			st.Failed++
			r.log().WarnContext(ctx, "sweep: an open execution could not be looked at", "execution", ref.ExecutionID, "error", err)
			if first == nil {
				first = err
			}
		case what == "settled":
			st.Settled++
		case what == "closed":
			st.Closed++
		default:
			st.Deferred++
		}
	}
	return st, first
}

// sweepOne looks at one open record: "closed" (it was final), "settled", or "deferred".
func (r *Reconciler) sweepOne(ctx context.Context, ref store.OpenRef, now time.Time, grace time.Duration) (string, error) {
	x, err := r.Store.GetExecution(ctx, ref.Dev, ref.ExecutionID)
	if fault.Is(err, fault.NotFound) {
		return "closed", nil // the record is gone, and its index entry with it
	}
	if err != nil {
		return "", err
	}
	if x.Status.Final() {
		return "closed", r.Store.CloseOpen(ctx, ref.Dev, ref.ExecutionID)
	}
	settled, err := r.check(ctx, ref.Dev, x, now, grace)
	if err != nil {
		return "", err
	}
	if settled {
		return "settled", nil
	}
	// Due again once the gap has passed (Sweep takes records whose grace ran from before now-grace).
	gap := min(max(now.Sub(x.CreatedAt), grace), orDefault(r.MaxGap, DefaultMaxGap))
	next := now.Add(gap - grace)
	if _, err := r.Store.DeferOpen(ctx, ref, next); err != nil {
		return "", err
	}
	return "deferred", nil
}
