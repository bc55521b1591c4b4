package agentloop

import (
	"context"
	"fmt"
	"strconv"

	"sinew/internal/jsonv"
	"sinew/internal/llm"
	"sinew/internal/store"
)

// What a turn shares with the chat path about a session: the metadata's integration arguments, the
// history it appends to, and the agent's instructions as a system message.

// IntegrationArgs gives, per tool name, the x-integration-args the merge will add (the task's or
// session's entry for a tool replaces the agent's), so the formatted schema leaves
// them out.
func IntegrationArgs(agentMeta, scopeMeta map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, meta := range []map[string]any{agentMeta, scopeMeta} {
		m, _ := meta["x-integration-args"].(map[string]any)
		for name, v := range m {
			if args, ok := v.(map[string]any); ok {
				out[name] = args
			}
		}
	}
	return out
}

// AppendHistory appends messages to a session's history, in their JSON form. With a key, the
// append happens once whatever the number of calls (store.AppendMessagesOnce, in batches keyed
// key#0, key#1, ...); without one, every call appends.
func AppendHistory(ctx context.Context, st *store.Store, dev, sessionID, key string, msgs []llm.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	out := make([]store.Message, 0, len(msgs))
	for _, m := range msgs {
		sm := store.Message{Role: string(m.Role), Content: m.Content, Name: m.Name, ToolCallID: m.ToolCallID}
		if len(m.ToolCalls) > 0 {
			var tc any
			if err := jsonv.Convert(m.ToolCalls, &tc); err != nil {
				return fmt.Errorf("encoding a message: %w", err)
			}
			sm.ToolCalls = tc
		}
		out = append(out, sm)
	}
	// A transaction holds at most 100 items and 4 MB: a long loop's messages go in batches, in
	// order, the same batches however often it runs (their keys are their indexes).
	for i := 0; len(out) > 0; i++ {
		n := batchLen(out)
		var err error
		if key == "" {
			_, err = st.AppendMessages(ctx, dev, sessionID, out[:n])
		} else {
			_, err = st.AppendMessagesOnce(ctx, dev, sessionID, key+"#"+strconv.Itoa(i), out[:n])
		}
		if err != nil {
			return fmt.Errorf("saving the session's history: %w", err)
		}
		out = out[n:]
	}
	return nil
}

// batchLen is how many of msgs the next append takes: at most store.MaxAppendOnce messages of at
// most store.MaxAppendBytes together, and at least one (a message too large on its own is refused
// by the store).
func batchLen(msgs []store.Message) int {
	n, total := 0, 0
	for n < len(msgs) && n < store.MaxAppendOnce {
		total += store.MessageBytes(msgs[n])
		if n > 0 && total > store.MaxAppendBytes {
			break
		}
		n++
	}
	return n
}

// Instructions are an agent's instructions as a system message (a string or a list of strings).
func Instructions(v any) []llm.Message {
	var parts []string
	switch x := v.(type) {
	case string:
		parts = []string{x}
	case []any:
		for _, p := range x {
			if s, ok := p.(string); ok {
				parts = append(parts, s)
			}
		}
	case []string:
		parts = x
	}
	text := ""
	for i, p := range parts {
		if i > 0 {
			text += "\n"
		}
		text += p
	}
	if text == "" {
		return nil
	}
	return []llm.Message{{Role: llm.RoleSystem, Content: text}}
}
