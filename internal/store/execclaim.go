package store

import (
	"context"
	"maps"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
)

// attrClaim holds, on a tool_call execution's record, the claim of its one call (JSON: what
// package dispatch's guard keeps per call id). The execution record, the call's record and its
// idempotency claim are then one item: one request claims, one records the outcome.
const attrClaim = "claim"

// seed is the part of an UpdateItem that makes an execution's record if no one has, whoever
// writes first (the route that started it, its executor, its function call): every SET is
// if_not_exists, so the order of the writers does not matter.
type seed struct {
	expr   string // SETs
	remove string // a REMOVE clause, or ""
	names  map[string]string
	values map[string]types.AttributeValue
}

// update is the UpdateExpression of the seed with extra SETs.
func (sd *seed) update(extra string) string {
	expr := "SET " + sd.expr
	if extra != "" {
		expr += ", " + extra
	}
	return expr + sd.remove
}

// execSeed makes the seed of x's record; a final or awaiting_input x.Status is set outright (the
// caller's condition keeps a final status from being replaced), running only if the record has
// none.
func (s *Store) execSeed(dev string, x Execution) (*seed, error) {
	if err := checkExec(dev, x.ExecutionID); err != nil {
		return nil, err
	}
	if !knownWorkflow(x.Workflow) {
		return nil, fault.Invalid("workflow", "workflow must be tool_call, agent_loop or task")
	}
	now := s.clock()
	doc, err := encodeDoc(struct {
		ExecutionID string    `json:"execution_id"`
		Workflow    string    `json:"workflow"`
		AgentID     string    `json:"agent_id,omitempty"`
		TaskID      string    `json:"task_id,omitempty"`
		SessionID   string    `json:"session_id,omitempty"`
		CreatedAt   time.Time `json:"created_at"`
	}{x.ExecutionID, x.Workflow, x.AgentID, x.TaskID, x.SessionID, now})
	if err != nil {
		return nil, err
	}
	st, status := "#st = if_not_exists(#st, :st), #up = if_not_exists(#up, :up)", x.Status
	if status.Final() || status == ExecAwaitingInput {
		st = "#st = :st, #up = :up"
	} else {
		status = ExecRunning
	}
	sd := &seed{
		expr: "#doc = if_not_exists(#doc, :doc), #kind = if_not_exists(#kind, :kind), " + st +
			", #g1pk = if_not_exists(#g1pk, :g1pk), #g1sk = if_not_exists(#g1sk, :g1sk), #first = :true",
		names: openNames(map[string]string{"#doc": attrDoc, "#kind": attrKind, "#st": attrStatus, "#up": attrUpdated,
			"#g1pk": AttrGSI1PK, "#g1sk": AttrGSI1SK, "#first": attrFirstState}),
		values: map[string]types.AttributeValue{":doc": doc, ":kind": str("exec"), ":st": str(string(status)),
			":up": str(now.Format(time.RFC3339Nano)), ":g1pk": str(execsGSI(dev)), ":g1sk": str(sortTime(now) + "#" + x.ExecutionID),
			":true": boolv(true)},
	}
	if status.Final() {
		sd.remove = openRemove
	} else {
		// In the open index from the record's making (open.go); a record found there in its final
		// status is taken out by the sweep.
		sd.expr += ", #o2pk = if_not_exists(#o2pk, :o2pk), #o2sk = if_not_exists(#o2sk, :o2sk)"
		sd.values[":o2pk"], sd.values[":o2sk"] = openKeys(dev, x.ExecutionID, now)
	}
	return sd, nil
}

// updateSeeded runs one UpdateItem of x's record: the seed, then extra (more SETs), under cond. ret
// says what the answer carries: NONE where the caller reads nothing back, since the whole record
// (a KB or more) would otherwise cross the wire and be decoded for nothing.
func (s *Store) updateSeeded(ctx context.Context, dev string, x Execution, extra, cond string, names map[string]string,
	values map[string]types.AttributeValue, ret types.ReturnValue) (*dynamodb.UpdateItemOutput, error) {
	sd, err := s.execSeed(dev, x)
	if err != nil {
		return nil, err
	}
	expr := sd.update(extra)
	maps.Copy(sd.names, names)
	maps.Copy(sd.values, values)
	in := &dynamodb.UpdateItemInput{TableName: &s.table, Key: execKey(dev, x.ExecutionID).av(), UpdateExpression: &expr,
		ExpressionAttributeNames: sd.names, ExpressionAttributeValues: sd.values, ReturnValues: ret,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}
	if cond != "" {
		in.ConditionExpression = &cond
	}
	return s.db.UpdateItem(ctx, in)
}

func claimAV(claim any) (types.AttributeValue, error) {
	raw, err := ClaimRaw(claim)
	if err != nil {
		return nil, err
	}
	return str(raw), nil
}

// ClaimRaw is claim's stored form on an execution's record: what TakeOverExecutionClaim compares.
func ClaimRaw(claim any) (string, error) {
	b, err := jsonv.Encode(claim)
	if err != nil {
		return "", fault.Wrap(fault.Internal, err, "a call's claim cannot be written as JSON")
	}
	return string(b), nil
}

// ClaimOf is the claim an execution's record holds (nil when none).
func claimOf(it map[string]types.AttributeValue) any {
	v, err := jsonv.DecodeString(getS(it, attrClaim))
	if err != nil {
		return nil
	}
	return v
}

// RecordExecution records a started tool_call execution, after its start: the record is made if
// its executor has not made it already, and claim (its call's claim for the executor's first
// attempt; nil for none) is set unless one is held. One UpdateItem; it answers the record.
func (s *Store) RecordExecution(ctx context.Context, dev string, x Execution, claim any) (*Execution, error) {
	extra, values := "", map[string]types.AttributeValue{}
	names := map[string]string{}
	if claim != nil {
		av, err := claimAV(claim)
		if err != nil {
			return nil, err
		}
		extra, names["#claim"], values[":claim"] = "#claim = if_not_exists(#claim, :claim)", attrClaim, av
	}
	out, err := s.updateSeeded(ctx, dev, x, extra, "", names, values, types.ReturnValueAllNew)
	if err != nil {
		return nil, dbErr(err, "record execution")
	}
	return decodeExec(out.Attributes)
}

// ClaimExecution sets claim on an execution's record (made if need be) unless the record holds
// one: it answers the claim that holds, its stored form (for TakeOverExecutionClaim) and whether
// it is the new one.
func (s *Store) ClaimExecution(ctx context.Context, dev string, x Execution, claim any) (held any, raw string, created bool, _ error) {
	mine, err := ClaimRaw(claim)
	if err != nil {
		return nil, "", false, err
	}
	_, err = s.updateSeeded(ctx, dev, x, "#claim = :claim", "attribute_not_exists(#claim)",
		map[string]string{"#claim": attrClaim}, map[string]types.AttributeValue{":claim": str(mine)}, types.ReturnValueNone)
	if ccf, ok := isCondFailed(err); ok {
		return claimOf(ccf.Item), getS(ccf.Item, attrClaim), false, nil
	}
	if err != nil {
		return nil, "", false, dbErr(err, "claim call")
	}
	return jsonv.Normalize(claim), mine, true, nil
}

// TakeOverExecutionClaim replaces the claim on an execution's record only if it still holds raw
// (the stored form its caller read): of two callers that saw the same claim, one takes it (true,
// with the new claim's stored form) and the other gets false, no error.
func (s *Store) TakeOverExecutionClaim(ctx context.Context, dev string, x Execution, raw string, claim any) (string, bool, error) {
	if raw == "" {
		return "", false, fault.New(fault.Internal, "a takeover of execution %s's claim needs the claim as read", x.ExecutionID)
	}
	mine, err := ClaimRaw(claim)
	if err != nil {
		return "", false, err
	}
	_, err = s.updateSeeded(ctx, dev, x, "#claim = :claim", "#claim = :raw",
		map[string]string{"#claim": attrClaim}, map[string]types.AttributeValue{":claim": str(mine), ":raw": str(raw)}, types.ReturnValueNone)
	if _, ok := isCondFailed(err); ok {
		return "", false, nil
	}
	if err != nil {
		return "", false, dbErr(err, "take over call")
	}
	return mine, true, nil
}

// SetExecutionClaim replaces the claim on an execution's record; with output, the execution
// also succeeds with it, unless it already has a final status (which is kept). lean, when not nil,
// is the claim written beside output: claim less what output holds, so that the record, billed by
// its size, keeps a run's outcome once; claim itself is written where output is not (a final
// status kept). One UpdateItem (two when the execution had ended already, a stop say, which is rare).
func (s *Store) SetExecutionClaim(ctx context.Context, dev string, x Execution, claim, lean, output any) error {
	av, err := claimAV(claim)
	if err != nil {
		return err
	}
	names, values := map[string]string{"#claim": attrClaim}, map[string]types.AttributeValue{":claim": av}
	if output != nil {
		b, err := jsonv.Encode(output)
		if err != nil {
			return fault.Wrap(fault.Internal, err, "the output cannot be written as JSON")
		}
		beside := av
		if lean != nil {
			if beside, err = claimAV(lean); err != nil {
				return err
			}
		}
		x.Status = ExecSucceeded
		_, err = s.updateSeeded(ctx, dev, x, "#claim = :claim, #out = :out", "attribute_not_exists(#st) OR #st IN (:run, :await)",
			map[string]string{"#claim": attrClaim, "#out": attrOutput},
			map[string]types.AttributeValue{":claim": beside, ":out": str(string(b)), ":run": str(string(ExecRunning)), ":await": str(string(ExecAwaitingInput))}, types.ReturnValueNone)
		if _, ok := isCondFailed(err); !ok {
			return wrapDB(err, "record the call's outcome")
		}
		x.Status = ""
	}
	_, err = s.updateSeeded(ctx, dev, x, "#claim = :claim", "", names, values, types.ReturnValueNone)
	return wrapDB(err, "record the call's claim")
}

func wrapDB(err error, what string) error {
	if err == nil {
		return nil
	}
	return dbErr(err, what)
}

// SucceedWithCall gives a tool_call execution that ended SUCCEEDED after its function call was
// answered its final status and output, and marks the call answered: two plain updates, the call's
// first, so that a crash between them leaves the execution open (in the open index, for this
// event's retry or the sweep) rather than a call shown pending under an ended execution. It
// answers false when the execution was final already (its route or settle step recorded it).
func (s *Store) SucceedWithCall(ctx context.Context, dev, execID, callID string, output any) (bool, error) {
	if err := checkCallIDs(dev, execID, callID); err != nil {
		return false, err
	}
	// NotFound: the call was never recorded; Conflict: it settled otherwise (a stop expired it).
	if _, err := s.SettleCall(ctx, dev, execID, callID, CallAnswered); err != nil && !fault.Is(err, fault.NotFound) && !fault.Is(err, fault.Conflict) {
		return false, err
	}
	_, changed, err := s.SetExecutionStatus(ctx, dev, execID, ExecSucceeded, output, nil)
	if fault.Is(err, fault.NotFound) {
		return false, nil
	}
	return changed, err
}
