package sfnapi

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"sinew/internal/localaws/outbox"
)

// Files of the asynchronous Express starts' journal under the local directory
// (StartExpressJournal).
const (
	ExpressJournalFileName    = "express-async.journal"
	ExpressDeadLetterFileName = "express-async-dead-letter.jsonl"
)

// expressConsumer is the outbox consumer that runs journaled Express starts.
const expressConsumer = "express-async"

// expressStart is an asynchronous Express start as the journal keeps it.
type expressStart struct {
	Machine string `json:"machine"`
	Name    string `json:"name"`
	ID      string `json:"id"`
	Input   string `json:"input"`
}

// StartExpressJournal journals the asynchronous Express starts in dir from now on, as AWS runs
// them at least once: a start is durable (fdatasync) before StartExecution answers, and runs to
// its end; one a crash or a stop cut off runs again, under the same ARN, after the next start.
// Call it once the state machines are loaded. Without it, such starts are kept in memory only.
func (s *Service) StartExpressJournal(dir string) error {
	ob, err := outbox.Open(filepath.Join(dir, ExpressJournalFileName), outbox.Options{
		DeadLetterPath: filepath.Join(dir, ExpressDeadLetterFileName), Logger: s.log})
	if err != nil {
		return fmt.Errorf("sfnapi: %w", err)
	}
	// An execution that ends, whatever its status, is taken; only one that could not be started is
	// retried, and not for longer than an execution could have run.
	err = ob.AddConsumer(outbox.Consumer{Name: expressConsumer, Deliver: s.runJournaled,
		Retry:       outbox.RetryPolicy{MaximumRetryAttempts: 2, MaximumEventAge: maxExpress},
		Backoff:     outbox.ExponentialBackoff(time.Second, 10*time.Second),
		Concurrency: maxJournaledExpress})
	if err != nil {
		_ = ob.Close()
		return fmt.Errorf("sfnapi: %w", err)
	}
	s.mu.Lock()
	s.expressJournal = ob
	s.mu.Unlock()
	return nil
}

// maxJournaledExpress bounds the journaled Express executions running at once: AWS runs far more,
// and each waits mostly on what it calls.
const maxJournaledExpress = 1000

// startExpressAsync answers an asynchronous Express start: journaled and run by the journal's
// consumer when StartExpressJournal ran, else started here and kept in memory.
func (s *Service) startExpressAsync(ctx context.Context, m *machine, name, input string) (any, error) {
	s.mu.Lock()
	ob := s.expressJournal
	s.mu.Unlock()
	if ob == nil {
		x, err := s.startExpress(ctx, m, name, input, "")
		if err != nil {
			return nil, err
		}
		go s.runSync(ctx, x)
		return map[string]any{"executionArn": x.ARN, "startDate": epoch(x.Describe().StartDate)}, nil
	}
	st := expressStart{Machine: m.rec.Arn, Name: orName(name), ID: uuid.NewString(), Input: input}
	data, err := json.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("sfnapi: encode an Express start: %w", err)
	}
	now := time.Now()
	if err := ob.Put(outbox.Entry{ID: st.ID, Data: data, Consumers: []string{expressConsumer}}); err != nil {
		return nil, fmt.Errorf("sfnapi: journal an Express start: %w", err)
	}
	arn := strings.Replace(st.Machine, ":stateMachine:", ":express:", 1) + ":" + st.Name + ":" + st.ID
	return map[string]any{"executionArn": arn, "startDate": epoch(now)}, nil
}

// runJournaled runs one journaled Express start to its end. A start whose machine is gone is
// dropped, as its executions would have ended with it.
func (s *Service) runJournaled(ctx context.Context, _ string, data json.RawMessage) error {
	var st expressStart
	if err := json.Unmarshal(data, &st); err != nil {
		s.log.Error("a journaled Express start is not one; dropped", "error", err)
		return nil
	}
	s.mu.Lock()
	m := s.machines[st.Machine]
	s.mu.Unlock()
	if m == nil {
		s.log.Warn("a journaled Express start's state machine is gone; dropped", "state_machine_arn", st.Machine, "name", st.Name)
		return nil
	}
	x, err := s.startExpress(ctx, m, st.Name, st.Input, st.ID)
	if err != nil {
		return err
	}
	s.runSync(ctx, x)
	return nil
}
