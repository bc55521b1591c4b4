package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"time"

	"github.com/google/uuid"

	"sinew/internal/localaws/localnames"
)

// DefaultSweepPeriod is how often local mode sweeps the open records (--sweep-period): shorter
// than a deployment's (deploy.SweepPeriod), since one person's records are few and a developer
// watching one waits.
const DefaultSweepPeriod = 30 * time.Second

// sweepOpenRecords invokes settle with a schedule's "Scheduled Event" every period until ctx ends,
// as the deployed schedule rule does (deploy.TriggerSweep): settle then settles, from Step
// Functions, the open records whose status change never reached it (an event dead-lettered, or
// lost before this local mode journaled events). Local mode's grace is the period, so that a
// record is swept within about two periods of its execution's end. A period of 0 turns it off.
func sweepOpenRecords(ctx context.Context, fns *functions, period time.Duration, log *slog.Logger) {
	if period <= 0 {
		return
	}
	fns.mu.RLock()
	settle := fns.iam.asRule(localnames.SweepRule, "settle", fns.m["settle"])
	fns.mu.RUnlock()
	if settle == nil {
		log.Warn("no settle handler yet: open records are not swept")
		return
	}
	grace := int(math.Ceil(period.Seconds()))
	go func() {
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			ev, _ := json.Marshal(map[string]any{"version": "0", "id": uuid.NewString(), "detail-type": "Scheduled Event", "source": "aws.events",
				"account": localnames.Account, "time": time.Now().UTC().Format(time.RFC3339), "region": localnames.Region,
				"resources": []string{localnames.RuleARN(localnames.SweepRule)}, "detail": map[string]any{"grace_seconds": grace}})
			if _, ferr, err := settle.Invoke(ctx, ev); ferr != nil || err != nil {
				if ctx.Err() != nil {
					return
				}
				why := slog.Any("error", err)
				if ferr != nil {
					why = slog.String("error_type", ferr.Type)
				}
				log.Warn("the sweep of open records failed; the next one tries again", why)
			}
		}
	}()
}
