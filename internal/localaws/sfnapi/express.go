package sfnapi

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"sinew/internal/asl"
	"sinew/internal/localaws/durable"
)

// Express executions, as AWS runs them: at most five minutes, request-response integrations only
// (no .sync, no .waitForTaskToken), no history and no DescribeExecution (their ARNs,
// express:<machine>:<name>:<id>, are refused as InvalidArn there), a name used any number of
// times. What AWS gives instead is CloudWatch Logs; local mode logs each execution's end.

// expressPatterns are the integration patterns an Express state machine may not use.
var expressPatterns = []string{".sync", ".waitForTaskToken"}

// checkExpress refuses a definition that an Express state machine cannot run, as
// CreateStateMachine does: a Task (at any depth: Parallel branches, Map processors) whose resource
// waits for a job or a token.
func checkExpress(def string) error {
	var root map[string]any
	if err := json.Unmarshal([]byte(def), &root); err != nil {
		return nil // the definition's own parse reports it
	}
	return walkExpress(root, "")
}

func walkExpress(node map[string]any, at string) error {
	states, _ := node["States"].(map[string]any)
	for name, raw := range states {
		st, _ := raw.(map[string]any)
		loc := at + "/States/" + name
		if res, _ := st["Resource"].(string); strings.HasPrefix(res, "arn:aws:states:::") {
			for _, p := range expressPatterns {
				if strings.HasSuffix(res, p) || strings.Contains(res, p+":") {
					return apiErr("InvalidDefinition", "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: Express state machine does not support '%s' service integration at %s/Resource'", p, loc)
				}
			}
		}
		if branches, ok := st["Branches"].([]any); ok {
			for i, b := range branches {
				if bm, ok := b.(map[string]any); ok {
					if err := walkExpress(bm, loc+"/Branches["+strconv.Itoa(i)+"]"); err != nil {
						return err
					}
				}
			}
		}
		for _, k := range []string{"ItemProcessor", "Iterator"} {
			if p, ok := st[k].(map[string]any); ok {
				if err := walkExpress(p, loc+"/"+k); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// startExpress starts an Express execution of m on the engine alone: its state is not journaled
// (an asynchronous start is: StartExpressJournal). id is its ARN's last part ("": a random one).
func (s *Service) startExpress(ctx context.Context, m *machine, name, input, id string) (*asl.Execution, error) {
	// Not journaled (no execution of the recorder's is begun under this name), but named by its
	// machine, so what it calls is recorded as its machine's role calls it.
	ctx = durable.WithExecution(context.WithoutCancel(ctx), strings.Replace(m.rec.Arn, ":stateMachine:", ":express:", 1)+":"+name)
	x, err := s.opts.Engine.Start(ctx, asl.StartInput{Machine: m.m, StateMachineArn: m.rec.Arn,
		Name: orName(name), Input: input, RoleArn: m.rec.RoleArn, Express: true, ExpressID: id})
	if err != nil {
		return nil, engineErr(err)
	}
	return x, nil
}

// endExpress logs an Express execution's end, as its log group would hold it (no input or output:
// they may carry what only the caller should see), and drops it from the engine.
func (s *Service) endExpress(d asl.Description) {
	s.opts.Engine.Forget(d.ExecutionArn)
	s.logExpressEnd(d)
}

// runSync runs an Express execution to its end, at most five minutes, as StartSyncExecution does:
// then it is stopped and reported TIMED_OUT. A caller that goes away does not stop it.
func (s *Service) runSync(ctx context.Context, x *asl.Execution) asl.Description {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), maxExpress)
	defer cancel()
	d, werr := x.Wait(wctx)
	if werr != nil {
		_ = s.opts.Engine.Stop(x.ARN, asl.ErrTimeout, "The execution ran longer than the 5 minutes an Express execution may")
		d = x.Describe()
		d.Status, d.Error = asl.StatusTimedOut, asl.ErrTimeout
	}
	s.endExpress(d)
	return d
}

// syncOut is StartSyncExecution's answer: the execution's end and its billing details (Express
// bills memory in 64 MB steps and duration in 100 ms steps, rounded up).
func syncOut(d asl.Description) map[string]any {
	ms := d.StopDate.Sub(d.StartDate).Milliseconds()
	billed := max(100, (ms+99)/100*100)
	out := map[string]any{
		"executionArn": d.ExecutionArn, "stateMachineArn": d.StateMachineArn, "name": d.Name,
		"startDate": epoch(d.StartDate), "stopDate": epoch(d.StopDate), "status": d.Status,
		"input": d.Input, "inputDetails": map[string]any{"included": true},
		"billingDetails": map[string]any{"billedMemoryUsedInMB": 64, "billedDurationInMilliseconds": billed},
	}
	if d.Status == asl.StatusSucceeded {
		out["output"] = d.Output
		out["outputDetails"] = map[string]any{"included": true}
	}
	if d.Error != "" {
		out["error"] = d.Error
	}
	if d.Cause != "" {
		out["cause"] = d.Cause
	}
	return out
}
