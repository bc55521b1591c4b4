package chat

import (
	"fmt"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/llm"
	"sinew/internal/loop"
	"sinew/internal/tool"
)

// answersKnown refuses a tool message that answers no call of the conversation.
func answersKnown(history, msgs []llm.Message) error {
	asked := map[string]bool{}
	for _, m := range history {
		for _, c := range m.ToolCalls {
			asked[c.ID] = true
		}
	}
	for i, m := range msgs {
		for _, c := range m.ToolCalls {
			asked[c.ID] = true
		}
		if m.Role == llm.RoleTool && !asked[m.ToolCallID] {
			return fault.Invalid(fmt.Sprintf("messages[%d].tool_call_id", i), "messages[%d] answers %q, which no assistant message of the session asked for", i, m.ToolCallID)
		}
	}
	return nil
}

// closeDead answers the unanswered calls of a turn whose process stopped while they ran (the
// claim found the session's open-turn mark: this chat holds the session's turn, so no live chat
// holds it), so the session goes on: the model is told they were interrupted. The answers are
// saved with the turn's first write, which clears the mark.
func (r *chatRun) closeDead() []llm.Message {
	if r.open == "" {
		return nil
	}
	open := map[string]bool{}
	for _, id := range loop.Unanswered(r.history) {
		open[id] = true
	}
	var msgs []llm.Message
	for _, c := range lastAssistant(r.history).ToolCalls {
		if open[c.ID] {
			msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Name: c.Name,
				Content: jsonv.EncodeString(map[string]any{"type": string(fault.Transient),
					"error": "the call was interrupted: the process running the chat stopped while it ran, and it may or may not have taken effect"})})
		}
	}
	return msgs
}

func lastAssistant(msgs []llm.Message) llm.Message {
	st := loop.State{Messages: msgs}
	return st.Last()
}

// closeTurn answers the calls of a turn cut short that agent_loop could not take over: the
// session's history stays whole (no call left unanswered, which would refuse every later chat
// with a 422 the caller cannot answer), and the model is told what happened on the next chat.
func closeTurn(turn []tool.Call, cause error) []llm.Message {
	msgs := make([]llm.Message, 0, len(turn))
	for _, c := range turn {
		msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: c.ModelCallID, Name: c.Name(),
			Content: jsonv.EncodeString(map[string]any{"type": string(fault.Timeout),
				"error": "the call did not finish within the chat's time budget, and handing it over to agent_loop failed (" + faultMessage(cause) + ")"})})
	}
	return msgs
}
