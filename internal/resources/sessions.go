package resources

import (
	"context"

	"sinew/internal/fault"
	"sinew/internal/store"
)

// SessionInput is the body of POST /sessions. Julep's clients send agent and user; sinew's names
// are agent_id and user_id; either spelling is accepted, not both.
type SessionInput struct {
	AgentID   string         `json:"agent_id,omitempty"`
	Agent     string         `json:"agent,omitempty"`
	UserID    string         `json:"user_id,omitempty"`
	User      string         `json:"user,omitempty"`
	Situation string         `json:"situation,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

func (in *SessionInput) check() error {
	if in.Agent != "" {
		if in.AgentID != "" {
			return fault.Invalid("agent", "send agent_id or agent, not both")
		}
		in.AgentID, in.Agent = in.Agent, ""
	}
	if in.User != "" {
		if in.UserID != "" {
			return fault.Invalid("user", "send user_id or user, not both")
		}
		in.UserID, in.User = in.User, ""
	}
	if in.AgentID == "" {
		return fault.Invalid("agent_id", "agent_id is required: the session's agent")
	}
	return checkText("situation", in.Situation, false, maxAbout)
}

// SessionPatch is the body of PATCH /sessions/{session_id}: the agent stays; the user may change.
type SessionPatch struct {
	UserID    string         `json:"user_id,omitempty"`
	Situation string         `json:"situation,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

func (in *SessionPatch) check() error { return checkText("situation", in.Situation, false, maxAbout) }

// CreateSession creates a session; its agent and user must be the caller's.
func (s *Service) CreateSession(ctx context.Context, dev string, body []byte) (*store.Session, error) {
	in, err := decodeInput[SessionInput](body)
	if err != nil {
		return nil, err
	}
	return s.Store.CreateSession(ctx, dev, store.Session{AgentID: in.AgentID, UserID: in.UserID, Situation: in.Situation, Metadata: in.Metadata})
}

// PatchSession merges a patch into a session (PATCH).
func (s *Service) PatchSession(ctx context.Context, dev, id string, body []byte) (*store.Session, error) {
	patch, err := decodePatch(body)
	if err != nil {
		return nil, err
	}
	return s.Store.UpdateSession(ctx, dev, id, func(x *store.Session) error {
		in, err := patchInput[SessionPatch](&SessionPatch{UserID: x.UserID, Situation: x.Situation, Metadata: x.Metadata}, patch)
		if err != nil {
			return err
		}
		x.UserID, x.Situation, x.Metadata = in.UserID, in.Situation, in.Metadata
		return nil
	})
}
