package resources

import (
	"context"
	"net/http"

	"sinew/internal/fault"
	"sinew/internal/httpapi"
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
	if err := in.normalize(); err != nil {
		return err
	}
	if in.AgentID == "" {
		return fault.Invalid("agent_id", "agent_id is required: the session's agent")
	}
	return nil
}

// normalize reads Julep's spellings into sinew's and checks the fields a replacement (which may
// leave the agent out) checks too.
func (in *SessionInput) normalize() error {
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

func (h handlers) registerSessions(rt *httpapi.Router) {
	tags := []string{"sessions"}
	rt.Handle(httpapi.Route{Method: http.MethodPost, Path: "/sessions", Handler: h.createSession, Op: httpapi.Operation{ID: "createSession",
		Summary: "Create a session of an agent (and a user)", Tags: tags, Request: ref("SessionInput"),
		Responses: map[int]httpapi.Resp{201: {Description: "the session", Schema: ref("Session")},
			404: {Description: "the agent or user is unknown, or not the caller's"}}}})
	rt.Handle(httpapi.Route{Method: http.MethodGet, Path: "/sessions", Handler: h.listSessions, Op: httpapi.Operation{ID: "listSessions",
		Summary: "List sessions, newest first", Tags: tags, Params: httpapi.PageParams(),
		Responses: resp(200, "a page of sessions", httpapi.ListOf(ref("Session")))}})
	rt.Handle(httpapi.Route{Method: http.MethodGet, Path: "/sessions/{session_id}", Handler: h.getSession, Op: httpapi.Operation{ID: "getSession",
		Summary: "Get a session", Tags: tags, Responses: resp(200, "the session", ref("Session"))}})
	rt.Handle(httpapi.Route{Method: http.MethodPatch, Path: "/sessions/{session_id}", Handler: h.patchSession, Op: httpapi.Operation{ID: "patchSession",
		Summary: "Merge a patch into a session", Tags: tags, Request: ref("SessionPatch"), Responses: resp(200, "the session", ref("Session"))}})
	rt.Handle(httpapi.Route{Method: http.MethodDelete, Path: "/sessions/{session_id}", Handler: h.deleteSession, Op: httpapi.Operation{ID: "deleteSession",
		Summary: "Delete a session with its history", Tags: tags, Responses: resp(204, "deleted", nil)}})
	rt.Handle(httpapi.Route{Method: http.MethodGet, Path: "/sessions/{session_id}/history", Handler: h.sessionHistory, Op: httpapi.Operation{ID: "getSessionHistory",
		Summary: "A session's messages, oldest first", Tags: tags, Params: httpapi.PageParams(),
		Responses: resp(200, "a page of messages", httpapi.ListOf(ref("HistoryMessage")))}})
}

func (h handlers) createSession(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return created(h.s.CreateSession(ctx, r.DeveloperID, r.Body()))
}

func (h handlers) listSessions(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return list(r, func(p store.Page) (*store.List[store.Session], error) {
		return h.s.Store.ListSessions(ctx, r.DeveloperID, p)
	})
}

func (h handlers) getSession(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return ok(h.s.Store.GetSession(ctx, r.DeveloperID, r.Param("session_id")))
}

func (h handlers) patchSession(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return ok(h.s.PatchSession(ctx, r.DeveloperID, r.Param("session_id"), r.Body()))
}

func (h handlers) deleteSession(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return noContent(h.s.Store.DeleteSession(ctx, r.DeveloperID, r.Param("session_id")))
}

func (h handlers) sessionHistory(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return list(r, func(p store.Page) (*store.List[store.Message], error) {
		return h.s.Store.ListMessages(ctx, r.DeveloperID, r.Param("session_id"), p)
	})
}
