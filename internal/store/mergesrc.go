package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
	"sinew/internal/merge"
	"sinew/internal/tool"
)

// MergeRef names what a call's merge reads (DESIGN §3.4): the agent, at most one of the task (the
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
	out := &merge.Sources{}
	if out.Agent, err = s.entries(ctx, dev, agent, got[keys[0]], ref.Tool, ""); err != nil {
		return nil, err
	}
	if scope != nil {
		if out.Scope, err = s.entries(ctx, dev, *scope, got[keys[1]], ref.Tool, ref.AgentID); err != nil {
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
			if out.ToolSetup, err = s.openToolSetupItem(ctx, dev, ref.ToolID, it); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// entries reads one owner's metadata entries for a tool from its item; agentID, when given, is the
// agent the owner must belong to.
func (s *Store) entries(ctx context.Context, dev string, o Owner, item map[string]types.AttributeValue, tool, agentID string) (merge.Entries, error) {
	if item == nil || getBool(item, attrDeleting) {
		return nil, notFound(string(o.Kind), o.ID)
	}
	var rec struct {
		AgentID  string         `json:"agent_id"`
		Metadata map[string]any `json:"metadata"`
	}
	if err := decodeDoc(item, &rec); err != nil {
		return nil, err
	}
	if agentID != "" && rec.AgentID != agentID {
		return nil, notFound(string(o.Kind), o.ID)
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
	sealed := getSealed(item)
	for _, key := range merge.SetupKeys {
		v, err := s.openEntry(ctx, dev, ownerTag(o.Kind, o.ID), key, tool, sealed)
		if err != nil {
			return nil, err
		}
		if v != nil {
			e[key] = v
		}
	}
	return e, nil
}
