package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
	"sinew/internal/merge"
	"sinew/internal/tool"
)

// Bounds of one transaction of CreateTools: DynamoDB writes at most 100 items and 4 MB in one
// TransactWriteItems. A tool is two items (the tool and its name claim) and the owner one more.
const (
	toolsPerTx   = 49
	bytesPerTx   = 3 << 20 // under the 4 MB limit, with room for keys and the owner's record
	maxToolBatch = 500
)

// CreateTools stores several new tools under one owner (an agent or a task), all or none, and
// merges setup, the x-api_call-setup entries of the tools that carry credentials (by tool name),
// into the owner's metadata, sealed like any metadata setup.
//
// A name the owner has already, or a setup entry the owner's metadata has already for one of the
// names, is a Conflict naming it, and nothing is written. Up to 49 tools are one transaction,
// together with the owner's metadata. More are written in transactions of up to 49, the owner's
// metadata with the last; each carries its own conditions (the owner is live, each name is new),
// and when one fails the tools of the earlier ones are deleted again, so a failed import leaves
// nothing. Until the last transaction a reader may see some of the tools without their setup.
func (s *Store) CreateTools(ctx context.Context, dev string, o Owner, tools []tool.Tool, setup map[string]map[string]any) ([]tool.Tool, error) {
	if err := checkDev(dev); err != nil {
		return nil, err
	}
	if err := checkOwner(o, OwnerAgent, OwnerTask); err != nil {
		return nil, err
	}
	if len(tools) > maxToolBatch {
		return nil, fault.Invalid("tools", "%d tools at once; at most %d", len(tools), maxToolBatch)
	}
	made, err := s.newTools(tools, setup)
	if err != nil {
		return nil, err
	}
	if len(made) == 0 {
		// Nothing to write, but an answer for an owner that does not exist would mislead.
		it, err := s.get(ctx, ownerItem(dev, o), string(o.Kind))
		if err != nil {
			return nil, err
		}
		if it == nil || getBool(it, attrDeleting) {
			return nil, notFound(string(o.Kind), o.ID)
		}
		return []tool.Tool{}, nil
	}
	if err := s.checkNamesFree(ctx, dev, o, made); err != nil {
		return nil, err
	}
	chunks, err := s.toolChunks(ctx, dev, o, made)
	if err != nil {
		return nil, err
	}
	var written []*tool.Tool
	for i, c := range chunks {
		if i < len(chunks)-1 || len(setup) == 0 {
			err = s.transact(ctx, append([]txOp{{condLive(s, ownerItem(dev, o)), notFound(string(o.Kind), o.ID)}}, c.ops...), "create tools")
		} else {
			err = s.withOwnerSetup(ctx, dev, o, setup, c.ops)
		}
		if err != nil {
			s.rollbackTools(ctx, dev, o, written)
			return nil, err
		}
		written = append(written, c.tools...)
	}
	out := make([]tool.Tool, len(made))
	for i, t := range made {
		out[i] = *t
	}
	return out, nil
}

// newTools checks and copies the tools, with new ids, and their names against each other.
func (s *Store) newTools(tools []tool.Tool, setup map[string]map[string]any) ([]*tool.Tool, error) {
	made := make([]*tool.Tool, 0, len(tools))
	seen := map[string]int{}
	for i := range tools {
		field := fmt.Sprintf("tools[%d].", i)
		if j, dup := seen[tools[i].Name]; dup {
			return nil, fault.Invalid(field+"name", "tools[%d] and tools[%d] are both named %s", j, i, tools[i].Name)
		}
		seen[tools[i].Name] = i
		c, err := s.newTool(&tools[i], field)
		if err != nil {
			return nil, err
		}
		made = append(made, c)
	}
	for _, name := range slices.Sorted(maps.Keys(setup)) {
		if _, ok := seen[name]; !ok {
			return nil, fault.Invalid("setup", "setup has an entry for %s, which is not one of the tools", name)
		}
	}
	return made, nil
}

// checkNamesFree reads the name claims first, so a clash is answered before anything is written,
// naming every taken name; the writes' own conditions still decide a race.
func (s *Store) checkNamesFree(ctx context.Context, dev string, o Owner, tools []*tool.Tool) error {
	var taken []string
	for start := 0; start < len(tools); start += 100 { // BatchGetItem reads at most 100 keys
		part := tools[start:min(start+100, len(tools))]
		keys := make([]itemKey, len(part))
		for i, t := range part {
			keys[i] = claimKey(dev, o, t.Name)
		}
		found, err := s.batchGet(ctx, keys, "", nil)
		if err != nil {
			return err
		}
		for _, t := range part {
			if found[claimKey(dev, o, t.Name)] != nil {
				taken = append(taken, t.Name)
			}
		}
	}
	if len(taken) == 0 {
		return nil
	}
	shown := taken[:min(len(taken), 10)]
	more := ""
	if len(taken) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(taken)-len(shown))
	}
	e := fault.New(fault.Conflict, "the %s has tools named %s%s already: nothing was made; delete them or choose another prefix", o.Kind, strings.Join(shown, ", "), more)
	e.Field = "name"
	return e
}

type toolChunk struct {
	tools []*tool.Tool
	ops   []txOp
}

// toolChunks splits the tools' writes into transactions within DynamoDB's bounds.
func (s *Store) toolChunks(ctx context.Context, dev string, o Owner, tools []*tool.Tool) ([]toolChunk, error) {
	var chunks []toolChunk
	var cur toolChunk
	size := 0
	for _, t := range tools {
		ops, err := s.toolOps(ctx, dev, o, t, 1, nil, nil, "")
		if err != nil {
			return nil, err
		}
		n := 0
		for _, op := range ops {
			if op.item.Put != nil {
				n += itemSize(op.item.Put.Item)
			}
		}
		if len(cur.tools) == toolsPerTx || (len(cur.tools) > 0 && size+n > bytesPerTx) {
			chunks, cur, size = append(chunks, cur), toolChunk{}, 0
		}
		cur.tools, cur.ops, size = append(cur.tools, t), append(cur.ops, ops...), size+n
	}
	return append(chunks, cur), nil
}

// itemSize is an item's size as far as its string attributes go (the tool's JSON dominates).
func itemSize(item map[string]types.AttributeValue) int {
	n := 0
	for k, v := range item {
		n += len(k)
		if sv, ok := v.(*types.AttributeValueMemberS); ok {
			n += len(sv.Value)
		}
	}
	return n
}

// withOwnerSetup writes ops together with the owner's record, whose metadata gains the setup
// entries, in one transaction (updateRecord reads the owner again if it changed meanwhile).
func (s *Store) withOwnerSetup(ctx context.Context, dev string, o Owner, setup map[string]map[string]any, ops []txOp) error {
	add := func(meta *map[string]any) error {
		if *meta == nil {
			*meta = map[string]any{}
		}
		entries, _ := (*meta)[merge.KeyAPICallSetup].(map[string]any)
		if entries == nil {
			entries = map[string]any{}
		}
		for _, name := range slices.Sorted(maps.Keys(setup)) {
			if _, taken := entries[name]; taken {
				e := fault.New(fault.Conflict, "the %s's metadata has an %s entry for %s already: nothing was made; remove the entry or choose another prefix", o.Kind, merge.KeyAPICallSetup, name)
				e.Field = "metadata." + merge.KeyAPICallSetup + "." + name
				return e
			}
			entries[name] = cloneMap(setup[name])
		}
		(*meta)[merge.KeyAPICallSetup] = entries
		return nil
	}
	check := func(_, _ any) ([]txOp, map[string]types.AttributeValue, error) { return ops, nil, nil }
	var err error
	switch o.Kind {
	case OwnerAgent:
		_, err = updateRecord(ctx, s, dev, agentKey(dev, o.ID), "agent", o.ID, OwnerAgent,
			func(a *Agent) error { return add(&a.Metadata) },
			func(old, new *Agent) ([]txOp, map[string]types.AttributeValue, error) { return check(old, new) })
	default:
		_, err = updateRecord(ctx, s, dev, taskKey(dev, o.ID), "task", o.ID, OwnerTask,
			func(t *Task) error { return add(&t.Metadata) },
			func(old, new *Task) ([]txOp, map[string]types.AttributeValue, error) { return check(old, new) })
	}
	return err
}

// rollbackTools deletes the tools an import wrote before one of its transactions failed. A
// failure here leaves tools a person can delete; it is logged, and the import's own error is
// what the caller gets.
func (s *Store) rollbackTools(ctx context.Context, dev string, o Owner, tools []*tool.Tool) {
	if len(tools) == 0 {
		return
	}
	keys := make([]itemKey, 0, 2*len(tools))
	for _, t := range tools {
		keys = append(keys, toolKey(dev, o, t.ID), claimKey(dev, o, t.Name))
	}
	if err := s.batchDelete(context.WithoutCancel(ctx), keys); err != nil {
		s.log.ErrorContext(ctx, "rolling back an import of tools failed", "owner", ownerTag(o.Kind, o.ID), "tools", len(tools), "err", err)
	}
}

// AllTools is every tool of an owner, in the order they were made: what an import compares
// against to know which names are taken and which tools it made before.
func (s *Store) AllTools(ctx context.Context, dev string, o Owner) ([]tool.Tool, error) {
	if err := checkDev(dev); err != nil {
		return nil, err
	}
	if err := checkOwner(o, OwnerAgent, OwnerTask); err != nil {
		return nil, err
	}
	return s.allTools(ctx, dev, o)
}
