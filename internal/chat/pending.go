package chat

import (
	"context"
	"fmt"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/llm"
	"sinew/internal/loop"
	"sinew/internal/tool"
)

// closeTurn answers, in the history, the calls of a turn cut short that agent_loop could not take
// over: the session's history stays whole (no call left unanswered, which would refuse every later
// chat with a 422 the caller cannot answer), and the model is told what happened on the next chat.
func (s *Service) closeTurn(ctx context.Context, dev, sessionID string, turn []tool.Call, cause error) {
	msgs := make([]llm.Message, 0, len(turn))
	for _, c := range turn {
		msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: c.ModelCallID, Name: c.Name(),
			Content: jsonv.EncodeString(map[string]any{"type": string(fault.Timeout),
				"error": "the call did not finish within the chat's time budget, and handing it over to agent_loop failed (" + faultMessage(cause) + ")"})})
	}
	if err := s.save(context.WithoutCancel(ctx), dev, sessionID, msgs); err != nil {
		s.d.Log.WarnContext(ctx, "chat: answering a turn that could not be handed off", "error", err.Error())
	}
}

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

// closeDead answers in the history the unanswered calls of a turn whose process stopped while
// they ran (an open-turn record is left: the caller holds the session's turn, so no live chat
// holds it), so the session goes on: the model is told they were interrupted. It answers the
// history as it now is.
func (s *Service) closeDead(ctx context.Context, dev, sessionID string, history []llm.Message) ([]llm.Message, error) {
	rec, err := s.d.Store.GetIdempotency(ctx, dev, openKey(sessionID))
	if fault.Is(err, fault.NotFound) {
		return history, nil
	}
	if err != nil {
		return nil, err
	}
	var msgs []llm.Message
	open := map[string]bool{}
	for _, id := range loop.Unanswered(history) {
		open[id] = true
	}
	for _, c := range lastAssistant(history).ToolCalls {
		if open[c.ID] {
			msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Name: c.Name,
				Content: jsonv.EncodeString(map[string]any{"type": string(fault.Transient),
					"error": "the call was interrupted: the process running the chat stopped while it ran, and it may or may not have taken effect"})})
		}
	}
	if err := s.save(ctx, dev, sessionID, msgs); err != nil {
		return nil, err
	}
	if err := s.d.Store.ReleaseIdempotency(ctx, dev, openKey(sessionID), rec); err != nil {
		return nil, err
	}
	return append(history, msgs...), nil
}

func lastAssistant(msgs []llm.Message) llm.Message {
	st := loop.State{Messages: msgs}
	return st.Last()
}
