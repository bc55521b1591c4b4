package store

import (
	"context"
	"time"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
	"sinew/internal/tool"
)

// CallStatus is a function call's status.
type CallStatus string

// Call statuses: pending until the client answers (answered or failed) or the wait ends (expired).
const (
	CallPending  CallStatus = "pending"
	CallAnswered CallStatus = "answered"
	CallFailed   CallStatus = "failed"
	CallExpired  CallStatus = "expired"
)

// CallRetention is how long a call is kept after its wait ended, before TTL removes it.
const CallRetention = 30 * 24 * time.Hour

// PendingCall is a function call waiting for the client, with its status
// and the lease of a claim. TaskToken is shown to its owner only.
type PendingCall struct {
	CallID      string         `json:"call_id"`
	ExecutionID string         `json:"execution_id"`
	ModelCallID string         `json:"model_call_id,omitempty"`
	Tool        string         `json:"tool"`
	Type        tool.Type      `json:"type"`
	Arguments   map[string]any `json:"arguments"`
	CreatedAt   time.Time      `json:"created_at"`
	ExpiresAt   time.Time      `json:"expires_at"`
	TaskToken   string         `json:"task_token"`
	Status      CallStatus     `json:"status"`
	// LeaseUntil is when a claim's lease ends (zero when unclaimed); LeaseOwner who holds it.
	LeaseUntil time.Time `json:"-"`
	LeaseOwner string    `json:"-"`
}

func callKey(dev, execID, callID string) itemKey {
	return itemKey{execPK(dev, execID), "CALL#" + esc(callID)}
}
func callsGSI(dev string, st CallStatus) string { return devPK(dev) + "#CALLS#" + string(st) }

func decodeCall(it map[string]types.AttributeValue) (*PendingCall, error) {
	var c PendingCall
	if err := decodeDoc(it, &c); err != nil {
		return nil, err
	}
	c.Arguments = normMap(c.Arguments)
	c.Status, c.TaskToken, c.LeaseOwner = CallStatus(getS(it, attrStatus)), getS(it, attrToken), getS(it, attrLeaseBy)
	if ms := getN(it, attrLease); ms > 0 {
		c.LeaseUntil = time.UnixMilli(ms).UTC()
	}
	return &c, nil
}

// PutPendingCall records a function call waiting for the client and marks its execution
// awaiting_input, in one transaction. A call already recorded and still pending is overwritten:
// a retry of the function Task issues a new token. A call already answered, failed or expired is a
// Conflict, and so is an execution that has ended. A missing execution is NotFound, unless x
// gives its record, which is then made: a route records its execution only after starting it.
func (s *Store) PutPendingCall(ctx context.Context, dev string, c PendingCall, x ...Execution) (*PendingCall, error) {
	if err := checkCallIDs(dev, c.ExecutionID, c.CallID); err != nil {
		return nil, err
	}
	// Step Functions task tokens are up to 1024 characters; 2048 leaves room.
	for field, v := range map[string]string{"task_token": c.TaskToken, "tool": c.Tool} {
		if err := checkOpaque(field, v, 2048); err != nil {
			return nil, err
		}
	}
	now := s.clock()
	if !c.ExpiresAt.After(now) {
		return nil, fault.Invalid("expires_at", "expires_at must be in the future")
	}
	if c.Type == "" {
		c.Type = tool.TypeFunction
	}
	if c.Arguments == nil {
		c.Arguments = map[string]any{}
	}
	c.CreatedAt, c.Status, c.LeaseUntil, c.LeaseOwner = now, CallPending, time.Time{}, ""
	doc, err := encodeDoc(c)
	if err != nil {
		return nil, err
	}
	item := callKey(dev, c.ExecutionID, c.CallID).av()
	item[attrDoc], item[attrKind], item[attrStatus], item[attrToken] = doc, str("call"), str(string(CallPending)), str(c.TaskToken)
	item[attrExp], item[AttrTTL] = num(c.ExpiresAt.Unix()), ttlOf(c.ExpiresAt.Add(CallRetention))
	item[AttrGSI1PK], item[AttrGSI1SK] = str(callsGSI(dev, CallPending)), str(sortTime(now)+"#"+esc(c.ExecutionID)+"#"+esc(c.CallID))

	// With x, the execution's record is made here if its route has not recorded it yet (the route
	// records after the start, and this may run first); without, it must exist.
	seedX := Execution{ExecutionID: c.ExecutionID, Workflow: "tool_call"}
	if len(x) > 0 {
		seedX = x[0]
		seedX.ExecutionID = c.ExecutionID
	}
	seedX.Status = ExecAwaitingInput
	sd, err := s.execSeed(dev, seedX)
	if err != nil {
		return nil, err
	}
	cond := "attribute_not_exists(#pk) OR #st IN (:run, :await)"
	if len(x) == 0 {
		cond = "attribute_exists(#pk) AND #st IN (:run, :await)"
	}
	sd.names["#pk"], sd.values[":run"], sd.values[":await"] = AttrPK, str(string(ExecRunning)), str(string(ExecAwaitingInput))
	execOp := txOp{types.TransactWriteItem{Update: &types.Update{
		TableName:                           &s.table,
		Key:                                 execKey(dev, c.ExecutionID).av(),
		UpdateExpression:                    awsv2.String("SET " + sd.expr),
		ConditionExpression:                 &cond,
		ExpressionAttributeNames:            sd.names,
		ExpressionAttributeValues:           sd.values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}, nil}
	callOp := txOp{putTx(s, item, "attribute_not_exists(#pk) OR #st = :pending",
		map[string]string{"#pk": AttrPK, "#st": attrStatus}, map[string]types.AttributeValue{":pending": str(string(CallPending))}),
		fault.New(fault.Conflict, "call %s is already settled", c.CallID)}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{execOp.item, callOp.item}})
	if err != nil {
		var tce *types.TransactionCanceledException
		if failed, ok := txFailed(err); ok && errorsAs(err, &tce) {
			if failed[0] {
				if tce.CancellationReasons[0].Item == nil {
					return nil, notFound("execution", c.ExecutionID)
				}
				return nil, fault.New(fault.Conflict, "execution %s has ended", c.ExecutionID)
			}
			return nil, callOp.fail
		}
		return nil, dbErr(err, "record pending call")
	}
	return &c, nil
}

// GetCall reads one call of an execution.
func (s *Store) GetCall(ctx context.Context, dev, execID, callID string) (*PendingCall, error) {
	if err := checkCallIDs(dev, execID, callID); err != nil {
		return nil, err
	}
	it, err := s.get(ctx, callKey(dev, execID, callID), "call")
	if err != nil {
		return nil, err
	}
	if it == nil || s.ttlPassed(it) {
		return nil, notFound("call", callID)
	}
	return decodeCall(it)
}

func (s *Store) ttlPassed(it map[string]types.AttributeValue) bool {
	ttl := getN(it, AttrTTL)
	return ttl > 0 && ttl <= s.clock().Unix()
}

func checkCallIDs(dev, execID, callID string) error {
	if err := checkExec(dev, execID); err != nil {
		return err
	}
	return checkOpaque("call_id", callID, 256)
}

// ClaimCall claims a pending call for answering, with a lease of d held by owner (a request id),
// so two answers cannot both reach Step Functions. It answers the call, token included. A call
// already answered or failed, or claimed by a lease still running, is a Conflict; one whose wait
// has ended is Gone; a missing one NotFound.
func (s *Store) ClaimCall(ctx context.Context, dev, execID, callID, owner string, d time.Duration) (*PendingCall, error) {
	if err := checkCallIDs(dev, execID, callID); err != nil {
		return nil, err
	}
	if err := checkOpaque("owner", owner, 256); err != nil {
		return nil, err
	}
	now := s.clock()
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:        &s.table,
		Key:              callKey(dev, execID, callID).av(),
		UpdateExpression: awsv2.String("SET #lease = :until, #by = :owner"),
		ConditionExpression: awsv2.String("#st = :pending AND #exp > :nows AND #ttl > :nows AND " +
			"(attribute_not_exists(#lease) OR #lease <= :nowms)"),
		ExpressionAttributeNames: map[string]string{"#lease": attrLease, "#by": attrLeaseBy, "#st": attrStatus, "#exp": attrExp, "#ttl": AttrTTL},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":until": num(now.Add(d).UnixMilli()), ":owner": str(owner), ":pending": str(string(CallPending)),
			":nows": num(now.Unix()), ":nowms": num(now.UnixMilli()),
		},
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if ccf, ok := isCondFailed(err); ok {
		return nil, s.callStateErr(ccf.Item, callID, now)
	}
	if err != nil {
		return nil, dbErr(err, "claim call")
	}
	return decodeCall(out.Attributes)
}

// callStateErr says why a call could not be claimed or settled, from its stored state.
func (s *Store) callStateErr(it map[string]types.AttributeValue, callID string, now time.Time) error {
	if it == nil || s.ttlPassed(it) {
		return notFound("call", callID)
	}
	switch st := CallStatus(getS(it, attrStatus)); {
	case st == CallExpired || (st == CallPending && getN(it, attrExp) <= now.Unix()):
		return fault.New(fault.Gone, "call %s has expired: the execution stopped waiting for it", callID)
	case st != CallPending:
		return fault.New(fault.Conflict, "call %s is already %s", callID, st)
	}
	return fault.New(fault.Conflict, "call %s is being answered by another request; try again shortly", callID)
}

// ReleaseCall gives a claim back (the answer could not be delivered, e.g. Step Functions was
// unavailable), so the call can be answered again. Only the lease's owner can release it.
func (s *Store) ReleaseCall(ctx context.Context, dev, execID, callID, owner string) error {
	if err := checkCallIDs(dev, execID, callID); err != nil {
		return err
	}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           &s.table,
		Key:                                 callKey(dev, execID, callID).av(),
		UpdateExpression:                    awsv2.String("REMOVE #lease, #by"),
		ConditionExpression:                 awsv2.String("#st = :pending AND #by = :owner"),
		ExpressionAttributeNames:            map[string]string{"#lease": attrLease, "#by": attrLeaseBy, "#st": attrStatus},
		ExpressionAttributeValues:           map[string]types.AttributeValue{":pending": str(string(CallPending)), ":owner": str(owner)},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if ccf, ok := isCondFailed(err); ok {
		if ccf.Item == nil {
			return notFound("call", callID)
		}
		if CallStatus(getS(ccf.Item, attrStatus)) != CallPending {
			return fault.New(fault.Conflict, "call %s is already %s", callID, getS(ccf.Item, attrStatus))
		}
		return fault.New(fault.Conflict, "call %s is not claimed by %s", callID, owner)
	}
	return dbErr(err, "release call")
}

// SettleCall gives a pending call its final status (answered, failed or expired) and drops any
// lease. With owner set, only the lease's holder may settle it; the settle Lambda passes "". Doing
// it twice with the same status is no error; another final status already set is a Conflict.
func (s *Store) SettleCall(ctx context.Context, dev, execID, callID string, st CallStatus, owner string) (*PendingCall, error) {
	if err := checkCallIDs(dev, execID, callID); err != nil {
		return nil, err
	}
	if st != CallAnswered && st != CallFailed && st != CallExpired {
		return nil, fault.Invalid("status", "a call settles as answered, failed or expired, not %q", st)
	}
	cond := "#st = :pending"
	names := map[string]string{"#st": attrStatus, "#lease": attrLease, "#by": attrLeaseBy, "#g": AttrGSI1PK}
	values := map[string]types.AttributeValue{":pending": str(string(CallPending)), ":st": str(string(st)), ":g": str(callsGSI(dev, st))}
	if owner != "" {
		cond += " AND #by = :owner"
		values[":owner"] = str(owner)
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           &s.table,
		Key:                                 callKey(dev, execID, callID).av(),
		UpdateExpression:                    awsv2.String("SET #st = :st, #g = :g REMOVE #lease, #by"),
		ConditionExpression:                 &cond,
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           values,
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if ccf, ok := isCondFailed(err); ok {
		if ccf.Item != nil && CallStatus(getS(ccf.Item, attrStatus)) == st {
			return decodeCall(ccf.Item)
		}
		if ccf.Item != nil && CallStatus(getS(ccf.Item, attrStatus)) == CallPending {
			return nil, fault.New(fault.Conflict, "call %s is claimed by another request", callID)
		}
		if ccf.Item == nil {
			return nil, notFound("call", callID)
		}
		return nil, fault.New(fault.Conflict, "call %s is already %s", callID, getS(ccf.Item, attrStatus))
	}
	if err != nil {
		return nil, dbErr(err, "settle call")
	}
	return decodeCall(out.Attributes)
}

// ListCalls lists the developer's calls of one status across executions, oldest first (the order
// to answer them in). Pending calls whose wait has ended are left out.
func (s *Store) ListCalls(ctx context.Context, dev string, st CallStatus, p Page) (*List[PendingCall], error) {
	if err := checkDev(dev); err != nil {
		return nil, err
	}
	switch st {
	case CallPending, CallAnswered, CallFailed, CallExpired:
	default:
		return nil, fault.Invalid("status", "status must be pending, answered, failed or expired")
	}
	q := pageQuery{index: GSI1, part: callsGSI(dev, st), forward: true}
	if st == CallPending {
		q.filter, q.names, q.values = "#exp > :now", map[string]string{"#exp": attrExp}, map[string]types.AttributeValue{":now": num(s.clock().Unix())}
	}
	return listPage(ctx, s, q, p, "calls", decodeCall)
}

// ExecutionCalls lists every function call of an execution, whatever its status (the settle step
// brings those still pending to their final state when the execution ends).
func (s *Store) ExecutionCalls(ctx context.Context, dev, execID string) ([]PendingCall, error) {
	if err := checkExec(dev, execID); err != nil {
		return nil, err
	}
	items, err := s.queryAll(ctx, execPK(dev, execID), "CALL#", false)
	if err != nil {
		return nil, err
	}
	out := make([]PendingCall, 0, len(items))
	for _, it := range items {
		if s.ttlPassed(it) {
			continue
		}
		c, err := decodeCall(it)
		if err != nil {
			return nil, err
		}
		out = append(out, *c)
	}
	return out, nil
}
