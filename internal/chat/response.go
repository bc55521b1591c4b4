package chat

import (
	"context"
	"net/http"
	"time"

	"github.com/google/uuid"

	"sinew/internal/llm"
	"sinew/internal/loop"
	"sinew/internal/store"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

// Response is the 200 answer.
type Response struct {
	ID          string        `json:"id"`
	SessionID   string        `json:"session_id"`
	CreatedAt   time.Time     `json:"created_at"`
	Choices     []Choice      `json:"choices"`
	Usage       llm.Usage     `json:"usage"`
	ToolResults []tool.Result `json:"tool_results"`
	Pending     []PendingCall `json:"pending_calls"`
	Model       string        `json:"model,omitempty"`
	Scripted    bool          `json:"scripted,omitempty"`
}

// Reply is a chat's answer: 200 with the chat, or 202 when the loop was handed to agent_loop.
type Reply struct {
	Status  int               `json:"status"`
	Chat    *Response         `json:"chat,omitempty"`
	Started *workflow.Started `json:"started,omitempty"`
}

// Body is what the route answers.
func (r *Reply) Body() any {
	if r.Started != nil {
		return r.Started
	}
	return r.Chat
}

// Choice is the one choice of a chat answer.
type Choice struct {
	Index        int              `json:"index"`
	FinishReason llm.FinishReason `json:"finish_reason"`
	Message      llm.Message      `json:"message"`
}

// PendingCall is a function call handed back to the caller.
type PendingCall struct {
	CallID      string `json:"call_id"`
	ModelCallID string `json:"model_call_id"`
	Tool        string `json:"tool"`
	Arguments   any    `json:"arguments"`
}

// answer gives the finished loop's response and saves the turn, with the response as its
// Idempotency-Key's answer, in the turn's last write. Outputs stored by reference are answered as
// values up to the HTTP API's inline limit, in the order the calls ran; larger ones stay
// references for GET /payloads/{ref}.
func (r *chatRun) answer(ctx context.Context) (*Reply, error) {
	resp := r.s.response(r.sessionID, r.st)
	if err := r.inline(ctx, resp); err != nil {
		// The turn is saved all the same: what ran is not run again by a repeat.
		if serr := r.end(ctx, len(r.st.Messages), nil, nil); serr != nil {
			return nil, serr
		}
		return nil, err
	}
	reply := &Reply{Status: http.StatusOK, Chat: resp}
	if err := r.end(ctx, len(r.st.Messages), nil, r.answerRecord(ctx, reply)); err != nil {
		return nil, err
	}
	return reply, nil
}

// inline reads back resp's tool outputs stored by reference, up to store.AnswerInlineLimit.
func (r *chatRun) inline(ctx context.Context, resp *Response) error {
	left := int64(store.AnswerInlineLimit)
	for i, tr := range resp.ToolResults {
		n, ok := store.RefSize(tr.Output)
		if !ok {
			continue
		}
		out, err := r.s.d.Store.InlineRefs(ctx, r.c.DeveloperID, tr.Output, left)
		if err != nil {
			return err
		}
		if _, still := store.RefOf(out); !still {
			left -= n
		}
		resp.ToolResults[i].Output = out
	}
	return nil
}

func (s *Service) response(sessionID string, st *loop.State) *Response {
	last := st.Last()
	last.Role = llm.RoleAssistant
	out := &Response{
		ID: uuid.Must(uuid.NewV7()).String(), SessionID: sessionID, CreatedAt: s.d.Now().UTC(),
		Choices:     []Choice{{Index: 0, FinishReason: st.FinishReason, Message: last}},
		Usage:       st.Usage,
		ToolResults: st.Results, Pending: []PendingCall{}, Model: st.Model, Scripted: st.Scripted,
	}
	if out.ToolResults == nil {
		out.ToolResults = []tool.Result{}
	}
	for _, p := range st.Pending {
		out.Pending = append(out.Pending, PendingCall{CallID: p.CallID, ModelCallID: p.ModelCallID, Tool: p.Tool, Arguments: p.Arguments})
	}
	return out
}
