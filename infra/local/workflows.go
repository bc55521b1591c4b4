package main

// Local Step Functions: the durable store, the engine over it, the state machines of
// statemachines/ and the routing of their status changes.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sinew/internal/asl"
	"sinew/internal/asl/jsonata"
	"sinew/internal/deploy"
	"sinew/internal/localaws/durable"
	"sinew/internal/localaws/eventbridge"
	"sinew/internal/localaws/localnames"
	"sinew/internal/localaws/sfnapi"
)

// startWorkflows routes the status changes of executions to settle, then starts Step Functions,
// which may end executions as soon as it recovers them, and the sweep of open records.
func startWorkflows(ctx context.Context, o options, dir string, st *durable.Store, fns *functions, events *eventbridge.Service, log *slog.Logger) (*sfnapi.Service, error) {
	if err := routeStatusChanges(events, fns, eventbridge.Target{}, log); err != nil {
		return nil, err
	}
	sfn, err := startStepFunctions(ctx, o, dir, st, fns, events, log)
	if err != nil {
		return nil, err
	}
	sweepOpenRecords(ctx, fns, o.sweepPeriod, log)
	return sfn, nil
}

// startStepFunctions is the local Step Functions: the engine over the durable store's recorder
// (which journals every Lambda call and timer), its executions recovered from the store, and the
// state machines of statemachines/ loaded.
func startStepFunctions(ctx context.Context, o options, dir string, st *durable.Store, fns *functions, events *eventbridge.Service, log *slog.Logger) (*sfnapi.Service, error) {
	direct := directIntegrations(o.quotas)
	rec := durable.NewRecorder(st, withIntegrations{fns: fns, direct: direct, iam: fns.iam}, asl.RealClock{}, log)
	fns.iam.useTokens(rec)
	var sfn *sfnapi.Service
	eng := asl.New(asl.Config{Clock: rec, Lambda: rec, Region: region, Account: account, Logger: log,
		Integrations: journaledIntegrations(rec, direct),
		Machines:     func(arn string) (*asl.Machine, bool) { return sfn.Resolve(arn) },
		// Child executions are executions of their own, journaled, and found again by a replayed parent.
		StartChild: func(ctx context.Context, in asl.StartInput) (asl.Child, error) {
			fns.iam.engineStartChild(ctx, in.StateMachineArn)
			return sfn.StartChild(ctx, in)
		},
		Transition: engineTransitions(o.quotas)})
	sfn = sfnapi.New(sfnapi.Options{Store: st, Recorder: rec, Engine: eng, Events: events, JSONata: jsonata.New(),
		Region: region, Account: account, Logger: log, Throttle: sfnThrottle(o.quotas)})
	logQuotas(log, o.quotas)
	if err := sfn.Recover(ctx); err != nil {
		return nil, err
	}
	if err := loadStateMachines(o.root, sfn, fns, log); err != nil {
		return nil, err
	}
	// Asynchronous Express starts are journaled from here on; those of before a restart run now
	// that their machines are loaded.
	if err := sfn.StartExpressJournal(dir); err != nil {
		return nil, err
	}
	return sfn, nil
}

// openSFNStore opens Step Functions' durable store under dir (in a temporary directory with
// --in-memory); closeStore closes it and removes the temporary directory.
func openSFNStore(o options, dir string) (st *durable.Store, closeStore func(), err error) {
	sfnPath := filepath.Join(dir, "stepfunctions.log")
	tmp := ""
	if o.inMemory {
		if tmp, err = os.MkdirTemp("", "sinew-local-sfn-"); err != nil {
			return nil, nil, err
		}
		sfnPath = filepath.Join(tmp, "stepfunctions.log")
	}
	removeTmp := func() {
		if tmp != "" {
			os.RemoveAll(tmp)
		}
	}
	if st, err = durable.Open(sfnPath); err != nil {
		removeTmp()
		return nil, nil, err
	}
	return st, func() { st.Close(); removeTmp() }, nil
}

// warnOldJournal says when dir holds the journal of an older local mode (a bbolt file), whose
// executions this one does not resume: their records in DynamoDB stay as they were.
func warnOldJournal(log *slog.Logger, dir string) {
	old := filepath.Join(dir, "stepfunctions.db")
	if _, err := os.Stat(old); err == nil {
		log.Warn("an older local mode's Step Functions journal is not read: executions it had running are not resumed; remove the file to silence this",
			"file", old)
	}
}

// maxFunctionTimeout is Lambda's longest function timeout.
const maxFunctionTimeout = 15 * time.Minute

func machineArn(name string) string { return localnames.StateMachineARN(name) }

// loadStateMachines loads statemachines/ with local substitutions, from the description infra/cdk
// reads.
func loadStateMachines(root string, sfn *sfnapi.Service, fns *functions, log *slog.Logger) error {
	resolve := func(v deploy.Value) (string, error) {
		if v.Kind == deploy.FunctionARN {
			return fns.arn(v.Target), nil
		}
		return localnames.Value(v)
	}
	for _, m := range deploy.StateMachines() {
		def, err := os.ReadFile(filepath.Join(root, m.File))
		if errors.Is(err, os.ErrNotExist) {
			log.Warn("state machine file not present yet; not loaded", "state_machine", m.Name, "file", m.File)
			continue
		}
		if err != nil {
			return err
		}
		rendered, err := m.Render(def, resolve)
		if err != nil {
			return err
		}
		arn, err := sfn.LoadMachine(m.Name, m.Type, rendered)
		if err != nil {
			return err
		}
		log.Info("state machine loaded", "arn", arn)
	}
	return nil
}

// routeStatusChanges sends Step Functions' "Execution Status Change" events of sinew's state
// machines to the settle function, as the deployed EventBridge rule does, through a durable target
// of the local EventBridge: each event is journaled before the engine records the execution's end,
// and is marked delivered only once settle has succeeded on it, so one that a crash, or a settle
// that failed, left undelivered reaches settle after the restart (at least once: settle is
// idempotent). Deliveries run side by side (a slow settle holds back no other event); a failed one
// is retried with EventBridge's retry policy (in AWS, Lambda also retries a function error twice
// and then the event goes to settle's on-failure queue: here every failure is the rule's to retry)
// and, once that runs out, goes to the dead-letter file. Call it before the engine recovers: an
// execution that ends as it resumes must find the target there.
func routeStatusChanges(events *eventbridge.Service, fns *functions, t eventbridge.Target, log *slog.Logger) error {
	fns.mu.RLock()
	settle := fns.iam.asRule(localnames.StatusChangeRule, "settle", fns.m["settle"])
	fns.mu.RUnlock()
	if settle == nil {
		log.Warn("no settle handler yet: Execution Status Change events are kept in the feed only")
		return nil
	}
	var arns []any
	for _, m := range deploy.StateMachines() {
		arns = append(arns, machineArn(m.Name))
	}
	// Julep tasks' machines, made at run time, as the deployed rule names them.
	arns = append(arns, map[string]any{"prefix": machineArn(strings.TrimSuffix(deploy.TaskMachines, "*"))})
	pat, _ := json.Marshal(map[string]any{"source": []any{"aws.states"}, "detail-type": []any{"Step Functions Execution Status Change"},
		"detail": map[string]any{"stateMachineArn": arns, "status": []any{"SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"}}})
	p, err := eventbridge.ParsePattern(pat)
	if err != nil {
		return fmt.Errorf("the status change pattern: %w", err)
	}
	t.Name, t.Rule = localnames.StatusChangeRule, eventbridge.Rule{Pattern: p}
	t.Deliver = func(ctx context.Context, ev eventbridge.Event) error {
		data, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		_, ferr, err := settle.Invoke(ctx, data)
		if ferr != nil {
			// A function error's message may quote the event: only its type is told.
			return fmt.Errorf("settle failed: %s", ferr.Type)
		}
		return err
	}
	return events.AddTarget(t)
}
