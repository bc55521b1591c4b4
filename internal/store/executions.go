package store

import (
	"context"
	"time"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
)

// ExecStatus is an execution's status.
type ExecStatus string

// Execution statuses. The last four are final: once one is set it stays.
const (
	ExecRunning       ExecStatus = "running"
	ExecAwaitingInput ExecStatus = "awaiting_input"
	ExecSucceeded     ExecStatus = "succeeded"
	ExecFailed        ExecStatus = "failed"
	ExecTimedOut      ExecStatus = "timed_out"
	ExecCancelled     ExecStatus = "cancelled"
)

// Final reports whether st is a final status.
func (st ExecStatus) Final() bool {
	switch st {
	case ExecSucceeded, ExecFailed, ExecTimedOut, ExecCancelled:
		return true
	}
	return false
}

func (st ExecStatus) valid() bool { return st == ExecRunning || st == ExecAwaitingInput || st.Final() }

// Execution is the record of a tool_call or agent_loop execution. ExecutionID is the Step
// Functions execution name (an opaque string).
type Execution struct {
	ExecutionID  string        `json:"execution_id"`
	Workflow     string        `json:"workflow"`
	Status       ExecStatus    `json:"status"`
	AgentID      string        `json:"agent_id,omitempty"`
	TaskID       string        `json:"task_id,omitempty"`
	SessionID    string        `json:"session_id,omitempty"`
	CreatedAt    time.Time     `json:"created_at"`
	UpdatedAt    time.Time     `json:"updated_at"`
	Output       any           `json:"output,omitempty"`
	Error        any           `json:"error,omitempty"`
	PendingCalls []PendingCall `json:"pending_calls"`
	// FirstStateRan tells that the execution's first state has run (EnsureExecution): it is known
	// to exist in Step Functions. A record without it may name an execution that never started.
	FirstStateRan bool `json:"-"`
}

// Native attributes of an execution besides st: what changes after it is made.
const (
	attrUpdated = "updated"
	attrOutput  = "output"
	attrError   = "error"
)

// knownWorkflow: tool_call, agent_loop, or a Julep task's own machine (task).
func knownWorkflow(w string) bool { return w == "tool_call" || w == "agent_loop" || w == "task" }

// checkExec checks a developer and an execution id (a Step Functions execution name: at most 80
// characters there; some room is left for names made elsewhere).
func checkExec(dev, id string) error {
	if err := checkDev(dev); err != nil {
		return err
	}
	return checkOpaque("execution_id", id, 128)
}

func execPK(dev, id string) string   { return devPK(dev) + "#EXEC#" + esc(id) }
func execKey(dev, id string) itemKey { return itemKey{execPK(dev, id), "EXEC"} }
func execsGSI(dev string) string     { return devPK(dev) + "#EXECS" }

// CreateExecution records an execution if it is not recorded yet, and answers the record either
// way: Prepare runs at least once, and a second run must not reset what the first recorded.
func (s *Store) CreateExecution(ctx context.Context, dev string, x Execution) (*Execution, bool, error) {
	if err := checkExec(dev, x.ExecutionID); err != nil {
		return nil, false, err
	}
	if !knownWorkflow(x.Workflow) {
		return nil, false, fault.Invalid("workflow", "workflow must be tool_call, agent_loop or task")
	}
	if x.Status == "" {
		x.Status = ExecRunning
	}
	if !x.Status.valid() {
		return nil, false, fault.Invalid("status", "status %q is not an execution status", x.Status)
	}
	now := s.clock()
	x.CreatedAt, x.UpdatedAt, x.PendingCalls = now, now, nil
	doc, err := encodeDoc(struct {
		ExecutionID string    `json:"execution_id"`
		Workflow    string    `json:"workflow"`
		AgentID     string    `json:"agent_id,omitempty"`
		TaskID      string    `json:"task_id,omitempty"`
		SessionID   string    `json:"session_id,omitempty"`
		CreatedAt   time.Time `json:"created_at"`
	}{x.ExecutionID, x.Workflow, x.AgentID, x.TaskID, x.SessionID, x.CreatedAt})
	if err != nil {
		return nil, false, err
	}
	item := execKey(dev, x.ExecutionID).av()
	item[attrDoc], item[attrKind], item[attrStatus], item[attrUpdated] = doc, str("exec"), str(string(x.Status)), str(now.Format(time.RFC3339Nano))
	item[AttrGSI1PK], item[AttrGSI1SK] = str(execsGSI(dev)), str(sortTime(now)+"#"+x.ExecutionID)
	if !x.Status.Final() {
		item[AttrGSI2PK], item[AttrGSI2SK] = openKeys(dev, x.ExecutionID, now)
	}
	if err := putJSONAttr(item, attrOutput, x.Output); err != nil {
		return nil, false, err
	}
	if err := putJSONAttr(item, attrError, x.Error); err != nil {
		return nil, false, err
	}
	c, n, v := condNew()
	in := putInput(s, item, c, n, v)
	in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	_, err = s.db.PutItem(ctx, in)
	if ccf, ok := isCondFailed(err); ok {
		got, err := decodeExec(ccf.Item)
		return got, false, err
	}
	if err != nil {
		return nil, false, dbErr(err, "record execution")
	}
	return &x, true, nil
}

func putJSONAttr(item map[string]types.AttributeValue, name string, v any) error {
	if v == nil {
		return nil
	}
	b, err := jsonv.Encode(v)
	if err != nil {
		return fault.Wrap(fault.InvalidInput, err, "%s cannot be written as JSON", name)
	}
	item[name] = str(string(b))
	return nil
}

func decodeExec(it map[string]types.AttributeValue) (*Execution, error) {
	var x Execution
	if err := decodeDoc(it, &x); err != nil {
		return nil, err
	}
	x.Status = ExecStatus(getS(it, attrStatus))
	x.FirstStateRan = getBool(it, attrFirstState)
	x.UpdatedAt, _ = time.Parse(time.RFC3339Nano, getS(it, attrUpdated))
	for name, dst := range map[string]*any{attrOutput: &x.Output, attrError: &x.Error} {
		if s := getS(it, name); s != "" {
			v, err := jsonv.DecodeString(s)
			if err != nil {
				return nil, fault.Wrap(fault.Internal, err, "stored execution %s has a broken %s", x.ExecutionID, name)
			}
			*dst = v
		}
	}
	x.PendingCalls = []PendingCall{}
	return &x, nil
}

// ExecutionRecord reads an execution's own record, without its pending calls: one GetItem.
func (s *Store) ExecutionRecord(ctx context.Context, dev, id string) (*Execution, error) {
	if err := checkExec(dev, id); err != nil {
		return nil, err
	}
	it, err := s.get(ctx, execKey(dev, id), "execution")
	if err != nil {
		return nil, err
	}
	if it == nil {
		return nil, notFound("execution", id)
	}
	return decodeExec(it)
}

// GetExecution reads an execution with its pending function calls, in one Query of its partition.
func (s *Store) GetExecution(ctx context.Context, dev, id string) (*Execution, error) {
	if err := checkExec(dev, id); err != nil {
		return nil, err
	}
	items, err := s.queryAll(ctx, execPK(dev, id), "", false)
	if err != nil {
		return nil, err
	}
	var x *Execution
	var calls []PendingCall
	now := s.clock()
	for _, it := range items {
		switch getS(it, attrKind) {
		case "exec":
			if x, err = decodeExec(it); err != nil {
				return nil, err
			}
		case "call":
			c, err := decodeCall(it)
			if err != nil {
				return nil, err
			}
			if c.Status == CallPending && now.Before(c.ExpiresAt) {
				calls = append(calls, *c)
			}
		}
	}
	if x == nil {
		return nil, notFound("execution", id)
	}
	if calls != nil {
		x.PendingCalls = calls
	}
	return x, nil
}

// ListExecutions lists the developer's executions, newest first (without their calls).
func (s *Store) ListExecutions(ctx context.Context, dev string, p Page) (*List[Execution], error) {
	if err := checkDev(dev); err != nil {
		return nil, err
	}
	return listPage(ctx, s, pageQuery{index: GSI1, part: execsGSI(dev)}, p, "executions", decodeExec)
}

// SetExecutionStatus sets an execution's status and, for a final one, its output or error. A
// final status is kept: the first to arrive wins (the settle step's tool outcome before Step
// Functions' own SUCCEEDED event), and a later change answers the record unchanged with false.
func (s *Store) SetExecutionStatus(ctx context.Context, dev, id string, st ExecStatus, output, errObj any) (*Execution, bool, error) {
	if err := checkExec(dev, id); err != nil {
		return nil, false, err
	}
	if !st.valid() {
		return nil, false, fault.Invalid("status", "status %q is not an execution status", st)
	}
	set := "SET #st = :st, #up = :up"
	values := map[string]types.AttributeValue{
		":st": str(string(st)), ":up": str(s.clock().Format(time.RFC3339Nano)),
		":run": str(string(ExecRunning)), ":await": str(string(ExecAwaitingInput)),
	}
	names := map[string]string{"#st": attrStatus, "#up": attrUpdated, "#pk": AttrPK}
	for name, v := range map[string]any{attrOutput: output, attrError: errObj} {
		if v == nil {
			continue
		}
		b, err := jsonv.Encode(v)
		if err != nil {
			return nil, false, fault.Wrap(fault.InvalidInput, err, "%s cannot be written as JSON", name)
		}
		set += ", #" + name + " = :" + name
		names["#"+name], values[":"+name] = name, str(string(b))
	}
	if st.Final() {
		set += openRemove // out of the open index: nothing is left for the sweep to settle
		openNames(names)
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           &s.table,
		Key:                                 execKey(dev, id).av(),
		UpdateExpression:                    &set,
		ConditionExpression:                 awsv2.String("attribute_exists(#pk) AND #st IN (:run, :await)"),
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           values,
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if ccf, ok := isCondFailed(err); ok {
		if ccf.Item == nil {
			return nil, false, notFound("execution", id)
		}
		x, err := decodeExec(ccf.Item)
		return x, false, err
	}
	if err != nil {
		return nil, false, dbErr(err, "update execution")
	}
	x, err := decodeExec(out.Attributes)
	return x, true, err
}
