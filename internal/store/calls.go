package store

import (
	"context"
	"fmt"
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

// PendingCall is a function call waiting for the client, with its status. TaskToken is shown to
// its owner only.
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
	c.Status, c.TaskToken = CallStatus(getS(it, attrStatus)), getS(it, attrToken)
	return &c, nil
}

// PutPendingCall records a function call waiting for the client and marks its execution
// awaiting_input. A call already recorded and still pending is overwritten: a retry of the function
// Task issues a new token. A call already answered, failed or expired is a Conflict, and so is an
// execution that has ended. A missing execution is NotFound, unless x gives its record, which is
// then made: a route records its execution only after starting it.
//
// Two plain writes rather than one transaction, which DynamoDB bills twice. With x (a function
// Task's, which may run before its route records the execution), the call's first, so that an
// execution that says awaiting_input always has its call to answer: a crash between them leaves
// a pending call on a running execution, answerable as any other; a call put for an execution
// that has ended (a stop racing the wait) is expired here, and one whose execution ends just after
// by the end's status change, as Finish expires every call still pending. Without x, the
// execution's first: it must exist before a call is put under it.
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
	c.CreatedAt, c.Status = now, CallPending
	item, err := pendingItem(dev, c)
	if err != nil {
		return nil, err
	}
	if len(x) == 0 {
		if err := s.awaitInput(ctx, dev, c.ExecutionID); err != nil {
			return nil, err
		}
		if err := s.putCall(ctx, c.CallID, item); err != nil {
			return nil, err
		}
		return &c, nil
	}
	if err := s.putCall(ctx, c.CallID, item); err != nil {
		return nil, err
	}
	if err := s.awaitInput(ctx, dev, c.ExecutionID, x...); err != nil {
		if fault.Is(err, fault.Conflict) {
			// Its execution has ended: no one will answer it.
			if _, serr := s.SettleCall(ctx, dev, c.ExecutionID, c.CallID, CallExpired); serr != nil && !fault.Is(serr, fault.Conflict) {
				return nil, fmt.Errorf("%w (and expiring its call: %v)", err, serr)
			}
		}
		return nil, err
	}
	return &c, nil
}

// putCall puts a pending call's item, over one still pending (a retry's new token) but never
// over one settled (a Conflict).
func (s *Store) putCall(ctx context.Context, callID string, item map[string]types.AttributeValue) error {
	_, err := s.db.PutItem(ctx, putInput(s, item, "attribute_not_exists(#pk) OR #st = :pending",
		map[string]string{"#pk": AttrPK, "#st": attrStatus}, map[string]types.AttributeValue{":pending": str(string(CallPending))}))
	if _, ok := isCondFailed(err); ok {
		return fault.New(fault.Conflict, "call %s is already settled", callID)
	}
	if err != nil {
		return dbErr(err, "record pending call")
	}
	return nil
}

// pendingItem is c's item. Its doc leaves out the task token and the status, which are attributes
// of their own (the token, up to 1 KB, would otherwise be stored, and projected into GSI1, twice).
func pendingItem(dev string, c PendingCall) (map[string]types.AttributeValue, error) {
	stored := c
	stored.TaskToken, stored.Status = "", ""
	doc, err := encodeDoc(stored)
	if err != nil {
		return nil, err
	}
	item := callKey(dev, c.ExecutionID, c.CallID).av()
	item[attrDoc], item[attrKind], item[attrStatus], item[attrToken] = doc, str("call"), str(string(CallPending)), str(c.TaskToken)
	item[attrExp], item[AttrTTL] = num(c.ExpiresAt.Unix()), ttlOf(c.ExpiresAt.Add(CallRetention))
	item[AttrGSI1PK], item[AttrGSI1SK] = str(callsGSI(dev, CallPending)), str(sortTime(c.CreatedAt)+"#"+esc(c.ExecutionID)+"#"+esc(c.CallID))
	return item, nil
}

// awaitInput marks execID awaiting_input unless it has ended. With x, the record is made if its
// route has not recorded it yet (the route records after the start, and this may run first);
// without, it must exist.
func (s *Store) awaitInput(ctx context.Context, dev, execID string, x ...Execution) error {
	seedX := Execution{ExecutionID: execID, Workflow: "tool_call"}
	if len(x) > 0 {
		seedX = x[0]
		seedX.ExecutionID = execID
	}
	seedX.Status = ExecAwaitingInput
	cond := "attribute_not_exists(#pk) OR #st IN (:run, :await)"
	if len(x) == 0 {
		cond = "attribute_exists(#pk) AND #st IN (:run, :await)"
	}
	_, err := s.updateSeeded(ctx, dev, seedX, "", cond, map[string]string{"#pk": AttrPK},
		map[string]types.AttributeValue{":run": str(string(ExecRunning)), ":await": str(string(ExecAwaitingInput))}, types.ReturnValueNone)
	if ccf, ok := isCondFailed(err); ok {
		if ccf.Item == nil {
			return notFound("execution", execID)
		}
		return fault.New(fault.Conflict, "execution %s has ended", execID)
	}
	return wrapDB(err, "mark execution awaiting input")
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

// SettleCall gives a pending call its final status (answered, failed or expired). Doing it twice
// with the same status is no error; another final status already set is a Conflict.
func (s *Store) SettleCall(ctx context.Context, dev, execID, callID string, st CallStatus) (*PendingCall, error) {
	if err := checkCallIDs(dev, execID, callID); err != nil {
		return nil, err
	}
	if st != CallAnswered && st != CallFailed && st != CallExpired {
		return nil, fault.Invalid("status", "a call settles as answered, failed or expired, not %q", st)
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                &s.table,
		Key:                      callKey(dev, execID, callID).av(),
		UpdateExpression:         awsv2.String("SET #st = :st, #g = :g"),
		ConditionExpression:      awsv2.String("#st = :pending"),
		ExpressionAttributeNames: map[string]string{"#st": attrStatus, "#g": AttrGSI1PK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pending": str(string(CallPending)), ":st": str(string(st)),
			":g": str(callsGSI(dev, st))},
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if ccf, ok := isCondFailed(err); ok {
		if ccf.Item != nil && CallStatus(getS(ccf.Item, attrStatus)) == st {
			return decodeCall(ccf.Item)
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
