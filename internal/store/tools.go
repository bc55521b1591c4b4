package store

import (
	"context"
	"errors"
	"strings"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/merge"
	"sinew/internal/tool"
)

const (
	attrToolID = "tool_id"
	attrOwner  = "owner"
)

func toolKey(dev string, o Owner, id string) itemKey { return itemKey{ownerPK(dev, o), "TOOL#" + id} }
func claimKey(dev string, o Owner, name string) itemKey {
	return itemKey{ownerPK(dev, o), "TOOLNAME#" + name}
}
func toolSetupKey(dev, id string) itemKey { return itemKey{devPK(dev) + "#TOOL#" + id, "SETUP"} }

// toolSetupEncCtx binds the sealed value of setting k of a tool's integration.setup to its
// developer, owner ("agent/<id>", kept on the setup item) and id. Each setting is sealed alone (see
// sealSetup), in the setup item's sealed map under toolSetupEntry(k).
func toolSetupEncCtx(dev, owner, id, k string) map[string]string {
	return map[string]string{"developer": dev, "owner": owner, "tool": id, "field": "integration.setup", "key": k}
}

const toolSetupPrefix = "integration.setup/"

// toolSetupEntry is the name of setting k in the setup item's sealed map; prefixed, so that a
// setting named "" still makes a valid map key.
func toolSetupEntry(k string) string { return toolSetupPrefix + k }

// checkTool checks the rules of tool.Validate, so that nothing invalid is ever
// stored; field prefixes the field at fault for a tool inside a request ("tools[2].").
func checkTool(field string, t *tool.Tool) error {
	err := t.Validate()
	var fe *fault.Error
	if err == nil || field == "" || !errors.As(err, &fe) {
		return err
	}
	c := *fe
	c.Field, c.Msg = field+fe.Field, strings.TrimSuffix(field, ".")+": "+fe.Msg
	return &c
}

func normTool(t *tool.Tool) {
	if f := t.Function; f != nil {
		f.Parameters = normMap(f.Parameters)
	}
	if i := t.Integration; i != nil {
		i.Setup, i.Arguments = normMap(i.Setup), normMap(i.Arguments)
	}
	if sy := t.System; sy != nil {
		sy.Arguments = normMap(sy.Arguments)
	}
	if a := t.APICall; a != nil {
		a.Schema, a.Data, a.Files, a.JSON = normMap(a.Schema), normMap(a.Data), normMap(a.Files), normMap(a.JSON)
	}
}

// cloneTool deep-copies a tool through JSON, so the store never changes the caller's value.
func cloneTool(t *tool.Tool) (*tool.Tool, error) {
	b, err := jsonv.Encode(t)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidInput, err, "the tool cannot be written as JSON")
	}
	var c tool.Tool
	if err := decodeDoc(map[string]types.AttributeValue{attrDoc: str(string(b))}, &c); err != nil {
		return nil, err
	}
	normTool(&c)
	return &c, nil
}

// toolOps are the writes of a tool under its owner: the name claim (unique per owner), the tool,
// and its sealed integration setup, if any. old is the stored version when updating (nil when
// creating); oldSealed the sealed map of its setup item, whose blobs values written back as
// Redacted keep (never opened).
func (s *Store) toolOps(ctx context.Context, dev string, o Owner, t *tool.Tool, ver int64, old *tool.Tool, oldSealed map[string][]byte, field string) ([]txOp, error) {
	var sealed map[string][]byte
	if t.Integration != nil && len(t.Integration.Setup) > 0 {
		sealed = map[string][]byte{}
		owner := ownerTag(o.Kind, o.ID)
		err := s.sealSetup(ctx, t.Integration.Setup, oldSealed, sealed, toolSetupEntry,
			func(k string) map[string]string { return toolSetupEncCtx(dev, owner, t.ID, k) },
			field+"integration.setup")
		if err != nil {
			return nil, err
		}
		t.Integration.Setup = RedactSetup(t.Integration.Setup)
	}
	doc, err := encodeDoc(t)
	if err != nil {
		return nil, err
	}
	toolItem := toolKey(dev, o, t.ID).av()
	toolItem[attrDoc], toolItem[attrVer], toolItem[attrKind], toolItem[attrToolID] = doc, num(ver), str("tool"), str(t.ID)
	claim := claimKey(dev, o, t.Name).av()
	claim[attrDoc], claim[attrVer], claim[attrKind], claim[attrToolID] = doc, num(ver), str("toolname"), str(t.ID)

	dup := fault.New(fault.Conflict, "a tool named %s exists already", t.Name)
	dup.Field = field + "name"
	var ops []txOp
	if old == nil {
		c, n, v := condNew()
		ops = append(ops, txOp{putTx(s, toolItem, c, n, v), dup}, txOp{putTx(s, claim, c, n, v), dup})
	} else {
		c, n, v := condVersion(ver - 1)
		ops = append(ops, txOp{putTx(s, toolItem, c, n, v), errRetry})
		if old.Name == t.Name {
			ops = append(ops, txOp{putTx(s, claim, "#tid = :tid", map[string]string{"#tid": attrToolID},
				map[string]types.AttributeValue{":tid": str(t.ID)}), errRetry})
		} else {
			c, n, v := condNew()
			ops = append(ops, txOp{putTx(s, claim, c, n, v), dup},
				txOp{types.TransactWriteItem{Delete: &types.Delete{
					TableName: &s.table, Key: claimKey(dev, o, old.Name).av(),
					ConditionExpression:       awsv2.String("#tid = :tid"),
					ExpressionAttributeNames:  map[string]string{"#tid": attrToolID},
					ExpressionAttributeValues: map[string]types.AttributeValue{":tid": str(t.ID)},
				}}, errRetry})
		}
	}
	switch {
	case sealed != nil:
		item := toolSetupKey(dev, t.ID).av()
		item[attrSealed], item[attrOwner], item[attrKind] = sealedAV(sealed), str(ownerTag(o.Kind, o.ID)), str("toolsetup")
		ops = append(ops, txOp{item: types.TransactWriteItem{Put: &types.Put{TableName: &s.table, Item: item}}})
	case old != nil && old.Integration != nil && len(old.Integration.Setup) > 0:
		ops = append(ops, txOp{item: deleteTx(s, toolSetupKey(dev, t.ID))})
	}
	return ops, nil
}

// CreateTool stores a new tool under its owner (an agent or a task). A name the owner already has
// is a fault.Conflict; an owner that does not exist is fault.NotFound. The tool's
// integration.setup is sealed apart and answered as Redacted.
func (s *Store) CreateTool(ctx context.Context, dev string, o Owner, t tool.Tool) (*tool.Tool, error) {
	if err := checkDev(dev); err != nil {
		return nil, err
	}
	if err := checkOwner(o, OwnerAgent, OwnerTask); err != nil {
		return nil, err
	}
	c, err := s.newTool(&t, "")
	if err != nil {
		return nil, err
	}
	ops, err := s.toolOps(ctx, dev, o, c, 1, nil, nil, "")
	if err != nil {
		return nil, err
	}
	ops = append([]txOp{{condLive(s, ownerItem(dev, o)), notFound(string(o.Kind), o.ID)}}, ops...)
	if err := s.transact(ctx, ops, "create tool"); err != nil {
		return nil, err
	}
	return c, nil
}

// newTool is a copy of t with a new id and timestamps, checked.
func (s *Store) newTool(t *tool.Tool, field string) (*tool.Tool, error) {
	if err := checkTool(field, t); err != nil {
		return nil, err
	}
	c, err := cloneTool(t)
	if err != nil {
		return nil, err
	}
	if c.Integration != nil {
		for k, v := range c.Integration.Setup {
			if v == Redacted {
				return nil, fault.Invalid(field+"integration.setup."+k, "integration.setup.%s is %q: give the value", k, Redacted)
			}
		}
	}
	now := s.clock()
	c.ID, c.CreatedAt, c.UpdatedAt = newID(), now, now
	return c, nil
}

// GetTool reads a tool of an owner, in one request together with its owner, so a tool whose owner
// is gone or being deleted is NotFound.
func (s *Store) GetTool(ctx context.Context, dev string, o Owner, id string) (*tool.Tool, error) {
	t, _, err := s.getTool(ctx, dev, o, id)
	return t, err
}

func (s *Store) getTool(ctx context.Context, dev string, o Owner, id string) (*tool.Tool, int64, error) {
	if err := checkDev(dev); err != nil {
		return nil, 0, err
	}
	if err := checkOwner(o, OwnerAgent, OwnerTask); err != nil {
		return nil, 0, err
	}
	if err := checkID("tool_id", id); err != nil {
		return nil, 0, err
	}
	ok, tk := ownerItem(dev, o), toolKey(dev, o, id)
	got, err := s.batchGet(ctx, []itemKey{ok, tk}, "", nil)
	if err != nil {
		return nil, 0, err
	}
	if it := got[ok]; it == nil || getBool(it, attrDeleting) {
		return nil, 0, notFound(string(o.Kind), o.ID)
	}
	it := got[tk]
	if it == nil {
		return nil, 0, notFound("tool", id)
	}
	t, err := decodeTool(it)
	return t, getN(it, attrVer), err
}

func decodeTool(it map[string]types.AttributeValue) (*tool.Tool, error) {
	var t tool.Tool
	if err := decodeDoc(it, &t); err != nil {
		return nil, err
	}
	normTool(&t)
	return &t, nil
}

// ListTools lists an owner's tools in the order they were made. An unknown owner is NotFound
// (one GetItem besides the Query: the API must tell an empty list from a missing owner).
func (s *Store) ListTools(ctx context.Context, dev string, o Owner, p Page) (*List[tool.Tool], error) {
	if err := checkDev(dev); err != nil {
		return nil, err
	}
	if err := checkOwner(o, OwnerAgent, OwnerTask); err != nil {
		return nil, err
	}
	if err := s.checkLive(ctx, dev, o); err != nil {
		return nil, err
	}
	return listPage(ctx, s, pageQuery{part: ownerPK(dev, o), prefix: "TOOL#", forward: true}, p, "tools", decodeTool)
}

// checkLive answers NotFound when an owner is missing or being deleted.
func (s *Store) checkLive(ctx context.Context, dev string, o Owner) error {
	it, err := s.get(ctx, ownerItem(dev, o), string(o.Kind))
	if err != nil {
		return err
	}
	if it == nil || getBool(it, attrDeleting) {
		return notFound(string(o.Kind), o.ID)
	}
	return nil
}

// UpdateTool applies mutate to a tool and stores it: the rename moves the name claim in the same
// transaction (a taken name is a Conflict), and integration.setup values left as Redacted keep the
// stored ones.
func (s *Store) UpdateTool(ctx context.Context, dev string, o Owner, id string, mutate func(*tool.Tool) error) (*tool.Tool, error) {
	var result *tool.Tool
	err := updateLoop(ctx, "tool", id, func() (bool, error) {
		old, ver, err := s.getTool(ctx, dev, o, id)
		if err != nil {
			return false, err
		}
		t, err := cloneTool(old)
		if err != nil {
			return false, err
		}
		if err := mutate(t); err != nil {
			return false, err
		}
		if err := checkTool("", t); err != nil {
			return false, err
		}
		t.ID, t.CreatedAt, t.UpdatedAt = id, old.CreatedAt, s.clock()
		// The old blobs, read but never opened: a value written back as Redacted keeps its blob.
		// They change only together with the tool, so the version condition covers them.
		var oldSealed map[string][]byte
		if t.Integration != nil && hasRedacted(t.Integration.Setup) {
			it, err := s.get(ctx, toolSetupKey(dev, id), "tool setup")
			if err != nil {
				return false, err
			}
			oldSealed = getSealed(it)
		}
		ops, err := s.toolOps(ctx, dev, o, t, ver+1, old, oldSealed, "")
		if err != nil {
			return false, err
		}
		ops = append([]txOp{{condLive(s, ownerItem(dev, o)), notFound(string(o.Kind), o.ID)}}, ops...)
		if err := s.transact(ctx, ops, "update tool"); err != nil {
			return err == errRetry, err
		}
		result = t
		return false, nil
	})
	return result, err
}

func hasRedacted(setup map[string]any) bool {
	for _, v := range setup {
		if v == Redacted {
			return true
		}
	}
	return false
}

// toolSetupJobs is a tool's integration.setup from its setup item, with the jobs that open its
// values appended to jobs.
func toolSetupJobs(dev, id string, it map[string]types.AttributeValue, jobs []openJob) (map[string]any, []openJob) {
	sealed := getSealed(it)
	if len(sealed) == 0 {
		return nil, jobs
	}
	owner := getS(it, attrOwner)
	setup := make(map[string]any, len(sealed))
	for entry, b := range sealed {
		k, ok := strings.CutPrefix(entry, toolSetupPrefix)
		if !ok {
			continue
		}
		jobs = append(jobs, openJob{encCtx: toolSetupEncCtx(dev, owner, id, k), blob: b, dst: setup, k: k,
			what: "integration.setup." + k + " of tool " + id})
	}
	return setup, jobs
}

// DeleteTool deletes a tool with its name claim and sealed setup, in one transaction.
func (s *Store) DeleteTool(ctx context.Context, dev string, o Owner, id string) error {
	return updateLoop(ctx, "tool", id, func() (bool, error) {
		old, ver, err := s.getTool(ctx, dev, o, id)
		if err != nil {
			return false, err
		}
		ops := []txOp{
			{types.TransactWriteItem{Delete: &types.Delete{
				TableName: &s.table, Key: toolKey(dev, o, id).av(),
				ConditionExpression:       awsv2.String("#ver = :ver"),
				ExpressionAttributeNames:  map[string]string{"#ver": attrVer},
				ExpressionAttributeValues: map[string]types.AttributeValue{":ver": num(ver)},
			}}, errRetry},
			{item: deleteTx(s, claimKey(dev, o, old.Name))},
			{item: deleteTx(s, toolSetupKey(dev, id))},
		}
		if err := s.transact(ctx, ops, "delete tool"); err != nil {
			return err == errRetry, err
		}
		return false, nil
	})
}

// FoundTool is a tool found by name for a call, with its owner.
type FoundTool struct {
	Tool  tool.Tool
	Owner Owner
	// Plain is the merge's sources for the call (MergeSources' answer) as the same read found them,
	// when they hold no sealed value: the tool has no stored setup and the owners' metadata no
	// setup value for it. Nil when the merge needs a sealed value, which only the executor opens.
	Plain *merge.Sources
}

// FindTool finds the tool named name for a call (workflow.Prepare): with a task, among the
// task's tools first and then, when the task has inherit_tools, the agent's (the task's wins a
// clash); without a task, among the agent's. It is one BatchGetItem: the owners and their name
// claims, which hold a copy of the tool. The task must be the agent's.
func (s *Store) FindTool(ctx context.Context, dev, agentID, taskID, name string) (*FoundTool, error) {
	return s.FindCallTool(ctx, dev, agentID, taskID, "", name)
}

// FindCallTool is FindTool that also checks, in the same BatchGetItem, that the session (when
// given) is the agent's: what a call names is the caller's before it starts.
func (s *Store) FindCallTool(ctx context.Context, dev, agentID, taskID, sessionID, name string) (*FoundTool, error) {
	if err := checkIDs(dev, "agent_id", agentID); err != nil {
		return nil, err
	}
	if taskID != "" {
		if err := checkID("task_id", taskID); err != nil {
			return nil, err
		}
	}
	if !tool.ValidName(name) {
		return nil, fault.Invalid("tool", "tool must be a tool name matching ^[A-Za-z_][A-Za-z0-9_]{0,39}$")
	}
	agent, task := Owner{OwnerAgent, agentID}, Owner{OwnerTask, taskID}
	keys := []itemKey{ownerItem(dev, agent), claimKey(dev, agent, name)}
	if taskID != "" {
		keys = append(keys, ownerItem(dev, task), claimKey(dev, task, name))
	}
	session := Owner{OwnerSession, sessionID}
	if sessionID != "" {
		if err := checkID("session_id", sessionID); err != nil {
			return nil, err
		}
		keys = append(keys, ownerItem(dev, session))
	}
	got, err := s.batchGet(ctx, keys, "", nil)
	if err != nil {
		return nil, err
	}
	if it := got[keys[0]]; it == nil || getBool(it, attrDeleting) {
		return nil, notFound("agent", agentID)
	}
	if sessionID != "" {
		if _, _, err := entries(dev, session, got[ownerItem(dev, session)], name, agentID, nil); err != nil {
			return nil, err
		}
	}
	found, err := findCallTool(got, keys, agentID, taskID, name)
	if err != nil {
		return nil, err
	}
	scope := session
	if taskID != "" {
		scope = task
	}
	found.Plain = plainSources(dev, got[keys[0]], scope, got[ownerItem(dev, scope)], &found.Tool, agentID)
	return found, nil
}

// findCallTool picks the call's tool from what FindCallTool read.
func findCallTool(got map[itemKey]map[string]types.AttributeValue, keys []itemKey, agentID, taskID, name string) (*FoundTool, error) {
	agent, task := Owner{OwnerAgent, agentID}, Owner{OwnerTask, taskID}
	inherit := true
	if taskID != "" {
		o, err := decodeRecord[Task](got[keys[2]], "task", taskID)
		if err != nil {
			return nil, err
		}
		if o.rec.AgentID != agentID {
			return nil, notFound("task", taskID)
		}
		if it := got[keys[3]]; it != nil {
			t, err := decodeTool(it)
			if err != nil {
				return nil, err
			}
			return &FoundTool{Tool: *t, Owner: task}, nil
		}
		inherit = o.rec.InheritTools
	}
	if it := got[keys[1]]; it != nil && inherit {
		t, err := decodeTool(it)
		if err != nil {
			return nil, err
		}
		return &FoundTool{Tool: *t, Owner: agent}, nil
	}
	return nil, fault.New(fault.NotFound, "no tool named %s", name)
}

// MaxToolsPerOwner bounds the tools one owner can show a model in one call of ToolsFor.
const MaxToolsPerOwner = 1000

// ToolsFor lists the tools a call or a prompt sees: with a task, the task's tools
// and, when it has inherit_tools, the agent's after them, a name the task has hiding the agent's;
// without a task, the agent's. The task must be the agent's.
func (s *Store) ToolsFor(ctx context.Context, dev, agentID, taskID string) ([]tool.Tool, error) {
	if err := checkIDs(dev, "agent_id", agentID); err != nil {
		return nil, err
	}
	agent := Owner{OwnerAgent, agentID}
	inherit := true
	var out []tool.Tool
	if taskID != "" {
		task, err := s.GetTask(ctx, dev, taskID)
		if err != nil {
			return nil, err
		}
		if task.AgentID != agentID {
			return nil, notFound("task", taskID)
		}
		if out, err = s.allTools(ctx, dev, Owner{OwnerTask, taskID}); err != nil {
			return nil, err
		}
		inherit = task.InheritTools
	}
	if !inherit {
		return out, s.checkLive(ctx, dev, agent)
	}
	agentTools, err := s.allTools(ctx, dev, agent)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(out))
	for _, t := range out {
		seen[t.Name] = true
	}
	for _, t := range agentTools {
		if !seen[t.Name] {
			out = append(out, t)
		}
	}
	return out, nil
}

// allTools is every tool of an owner, in the order they were made.
func (s *Store) allTools(ctx context.Context, dev string, o Owner) ([]tool.Tool, error) {
	var out []tool.Tool
	p := Page{Limit: MaxLimit}
	for {
		l, err := s.ListTools(ctx, dev, o, p)
		if err != nil {
			return nil, err
		}
		out = append(out, l.Items...)
		if l.NextCursor == nil {
			return out, nil
		}
		if len(out) >= MaxToolsPerOwner {
			return nil, fault.New(fault.TooLarge, "%s %s has more than %d tools", o.Kind, o.ID, MaxToolsPerOwner)
		}
		p.Cursor = *l.NextCursor
	}
}
