package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
	"sinew/internal/merge"
	"sinew/internal/tool"
)

// MergeRef names what a call's merge reads (package merge): the agent, at most one of the task (the
// workflow path) and the session (the chat path), the tool's name (the metadata key) and, for a
// stored tool, its id (whose sealed integration.setup is read too).
type MergeRef struct {
	AgentID   string
	TaskID    string
	SessionID string
	Tool      string
	ToolID    string // "" for an inline tool
}

// MergeSources reads, in ONE BatchGetItem, the agent's metadata entries for the tool (args and
// opened setup), the task's or the session's, and the stored tool's own integration.setup. The
// agent, task or session and tool must exist (NotFound otherwise), and the task or session must
// be the agent's. Setup comes back opened: call it only inside an executor.
func (s *Store) MergeSources(ctx context.Context, dev string, ref MergeRef) (*merge.Sources, error) {
	if err := checkIDs(dev, "agent_id", ref.AgentID); err != nil {
		return nil, err
	}
	if ref.TaskID != "" && ref.SessionID != "" {
		return nil, fault.Invalid("session_id", "a call names at most one of task_id and session_id, not both")
	}
	if !tool.ValidName(ref.Tool) {
		return nil, fault.Invalid("tool", "tool must be a tool name matching ^[A-Za-z_][A-Za-z0-9_]{0,39}$")
	}
	agent := Owner{OwnerAgent, ref.AgentID}
	keys := []itemKey{ownerItem(dev, agent)}
	var scope *Owner
	switch {
	case ref.TaskID != "":
		scope = &Owner{OwnerTask, ref.TaskID}
	case ref.SessionID != "":
		scope = &Owner{OwnerSession, ref.SessionID}
	}
	if scope != nil {
		if err := checkID(scope.Kind.field(), scope.ID); err != nil {
			return nil, err
		}
		keys = append(keys, ownerItem(dev, *scope))
	}
	if ref.ToolID != "" {
		if err := checkID("tool_id", ref.ToolID); err != nil {
			return nil, err
		}
		keys = append(keys, toolSetupKey(dev, ref.ToolID))
	}
	// Only what the merge needs: not the agent's instructions or the task's prompt.
	got, err := s.batchGet(ctx, keys, "#pk, #sk, #doc, #sealed, #data, #owner, #del",
		map[string]string{"#pk": AttrPK, "#sk": AttrSK, "#doc": attrDoc, "#sealed": attrSealed, "#data": attrData, "#owner": attrOwner, "#del": attrDeleting})
	if err != nil {
		return nil, err
	}
	// Every sealed value is opened in one parallel batch after the read (each is a KMS Decrypt).
	out := &merge.Sources{}
	var jobs []openJob
	if out.Agent, jobs, err = entries(dev, agent, got[keys[0]], ref.Tool, "", jobs); err != nil {
		return nil, err
	}
	if scope != nil {
		if out.Scope, jobs, err = entries(dev, *scope, got[keys[1]], ref.Tool, ref.AgentID, jobs); err != nil {
			return nil, err
		}
	}
	if ref.ToolID != "" {
		// A stored tool without setup has no setup item: that is not an error. Whether the tool
		// exists was settled when the call was prepared.
		if it := got[keys[len(keys)-1]]; it != nil {
			// The tool must be the agent's or the task's: a setup is never lent to another owner.
			if tag := getS(it, attrOwner); tag != ownerTag(OwnerAgent, ref.AgentID) && (ref.TaskID == "" || tag != ownerTag(OwnerTask, ref.TaskID)) {
				return nil, notFound("tool", ref.ToolID)
			}
			out.ToolSetup, jobs = toolSetupJobs(dev, ref.ToolID, it, jobs)
		}
	}
	if err := s.openAll(ctx, jobs); err != nil {
		return nil, err
	}
	return out, nil
}

// entries reads one owner's metadata entries for a tool from its item; agentID, when given, is the
// agent the owner must belong to. The setup entries' values are left to open: jobs with them
// appended is returned.
func entries(dev string, o Owner, item map[string]types.AttributeValue, tool, agentID string, jobs []openJob) (merge.Entries, []openJob, error) {
	if item == nil || getBool(item, attrDeleting) {
		return nil, nil, notFound(string(o.Kind), o.ID)
	}
	var rec struct {
		AgentID  string         `json:"agent_id"`
		Metadata map[string]any `json:"metadata"`
	}
	if err := decodeDoc(item, &rec); err != nil {
		return nil, nil, err
	}
	if agentID != "" && rec.AgentID != agentID {
		return nil, nil, notFound(string(o.Kind), o.ID)
	}
	meta := normMap(rec.Metadata)
	e := merge.Entries{}
	for _, key := range merge.ArgsKeys {
		if tools, ok := meta[key].(map[string]any); ok {
			if v, ok := tools[tool].(map[string]any); ok {
				e[key] = v
			}
		}
	}
	// The visible metadata holds each setup entry with its keys (values redacted): which entries
	// exist, an empty one included, comes from there; the values from the sealed map.
	sealed := getSealed(item)
	owner := ownerTag(o.Kind, o.ID)
	for _, key := range merge.SetupKeys {
		tools, _ := meta[key].(map[string]any)
		red, ok := tools[tool].(map[string]any)
		if !ok {
			continue
		}
		v := make(map[string]any, len(red))
		for k := range red {
			b, ok := sealed[metaEntry(key, tool, k)]
			if !ok {
				return nil, nil, fault.New(fault.Internal, "%s %s: metadata.%s.%s.%s has no sealed value", o.Kind, o.ID, key, tool, k)
			}
			jobs = append(jobs, openJob{encCtx: metaEncCtx(dev, owner, key, tool, k), blob: b, dst: v, k: k,
				what: "metadata." + key + "." + tool + "." + k})
		}
		e[key] = v
	}
	return e, jobs, nil
}

// plainSources is the merge's sources of a call of t from the items FindCallTool read (the agent's,
// and scope's when scope.ID is set), or nil when they need a sealed value: a stored setup of the
// tool's, or a setup entry of the owners' metadata with a value. An empty setup entry is kept: it
// holds nothing to open, and its presence still replaces a lower level's entry.
func plainSources(dev string, agentItem map[string]types.AttributeValue, scope Owner, scopeItem map[string]types.AttributeValue,
	t *tool.Tool, agentID string) *merge.Sources {
	if t.Integration != nil && len(t.Integration.Setup) > 0 {
		return nil
	}
	var jobs []openJob
	out := &merge.Sources{}
	var err error
	if out.Agent, jobs, err = entries(dev, Owner{OwnerAgent, agentID}, agentItem, t.Name, "", jobs); err != nil {
		return nil
	}
	if scope.ID != "" {
		if out.Scope, jobs, err = entries(dev, scope, scopeItem, t.Name, agentID, jobs); err != nil {
			return nil
		}
	}
	if len(jobs) > 0 {
		return nil
	}
	return out
}
