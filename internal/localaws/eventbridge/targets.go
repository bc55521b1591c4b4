package eventbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"sinew/internal/localaws/outbox"
)

// JournalFileName is the delivery journal's file under the local directory: every accepted event
// that a durable target (AddTarget) has still to receive, and what became of each delivery.
const JournalFileName = "events.journal"

// DeadLetterFileName is the file under the local directory that receives, as JSON lines, the
// events whose delivery to a target ran out of attempts or age: a rule target's dead-letter queue.
const DeadLetterFileName = "events-dead-letter.jsonl"

// RetryPolicy is a target's retry policy, as EventBridge's RetryPolicy
// (https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_RetryPolicy.html).
type RetryPolicy = outbox.RetryPolicy

// DefaultRetryPolicy is EventBridge's default: "EventBridge retries sending the event for 24 hours
// and up to 185 times with an exponential back off and jitter"
// (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-retry-policy.html).
var DefaultRetryPolicy = RetryPolicy{MaximumRetryAttempts: 185, MaximumEventAge: 24 * time.Hour}

// DefaultTargetConcurrency bounds a target's deliveries running at once when it gives none.
const DefaultTargetConcurrency = outbox.DefaultConcurrency

// DefaultBackoff is the wait before retry number n: doubling from a second up to 8 minutes, with
// jitter, so that 185 retries spread over about the 24 hours of the default policy (AWS does not
// publish its schedule).
var DefaultBackoff = outbox.ExponentialBackoff(time.Second, 8*time.Minute)

// Target is a durable rule target: every event put after AddTarget that matches Rule is journaled
// before PutEvents (or Put) answers, and delivered until Deliver succeeds, across restarts of
// local mode (at least once), or until the retry policy runs out and it goes to the dead-letter
// file.
type Target struct {
	// Name identifies the target across restarts: the events journaled for it are delivered to
	// the target of that name added after a restart.
	Name    string
	Rule    Rule
	Deliver func(ctx context.Context, e Event) error // nil error: delivered
	Retry   *RetryPolicy                             // nil: DefaultRetryPolicy
	// Concurrency bounds the deliveries running at once; 0 is DefaultTargetConcurrency.
	Concurrency int
	// Backoff is the wait before retry number n; nil is DefaultBackoff.
	Backoff func(n int) time.Duration
}

// DeadLetter is one line of the dead-letter file.
type DeadLetter struct {
	Target   string
	Event    FeedEntry
	Attempts int
	Error    string
	At       time.Time
}

// ReadDeadLetterFile reads the dead-letter file at path; a missing file holds none.
func ReadDeadLetterFile(path string) ([]DeadLetter, error) {
	ds, err := outbox.ReadDeadLetters(path)
	if err != nil {
		return nil, err
	}
	out := make([]DeadLetter, 0, len(ds))
	for _, d := range ds {
		dl := DeadLetter{Target: d.Consumer, Attempts: d.Attempts, Error: d.Error, At: d.At}
		if err := json.Unmarshal(d.Data, &dl.Event); err != nil {
			return nil, fmt.Errorf("dead letter %s: %w", d.ID, err)
		}
		out = append(out, dl)
	}
	return out, nil
}

// AddTarget starts delivering to t: the events journaled for its name before (a restart) at
// once, and every matching event put from now on.
func (s *Service) AddTarget(t Target) error {
	if t.Name == "" || t.Deliver == nil {
		return errors.New("eventbridge: a target needs a name and a Deliver function")
	}
	if t.Retry == nil {
		t.Retry = &DefaultRetryPolicy
	}
	if t.Backoff == nil {
		t.Backoff = DefaultBackoff
	}
	if t.Concurrency <= 0 {
		t.Concurrency = DefaultTargetConcurrency
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("eventbridge: the service is closed")
	}
	if _, ok := s.targets[t.Name]; ok {
		return fmt.Errorf("eventbridge: target %s is added already", t.Name)
	}
	deliver := t.Deliver
	err := s.outbox.AddConsumer(outbox.Consumer{Name: t.Name, Retry: *t.Retry, Backoff: t.Backoff, Concurrency: t.Concurrency,
		Deliver: func(ctx context.Context, _ string, data json.RawMessage) error {
			var fe FeedEntry
			if err := json.Unmarshal(data, &fe); err != nil {
				return fmt.Errorf("a journaled event is not one: %w", err)
			}
			return deliver(ctx, fe.Event)
		}})
	if err != nil {
		return fmt.Errorf("eventbridge: %w", err)
	}
	s.targets[t.Name] = t.Rule
	return nil
}

// journalFor gives the journal's entries of the events durable targets match (s.mu held).
func (s *Service) journalFor(events []FeedEntry, lines [][]byte, envelope func(int) func() map[string]any) []outbox.Entry {
	var out []outbox.Entry
	for i, e := range events {
		var names []string
		for name, rule := range s.targets {
			if rule.matches(e, envelope(i)) {
				names = append(names, name)
			}
		}
		if len(names) > 0 {
			out = append(out, outbox.Entry{ID: e.ID, Data: lines[i], Consumers: names})
		}
	}
	return out
}
