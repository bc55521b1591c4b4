package resources

import (
	"context"
	"net/http"

	"sinew/internal/fault"
	"sinew/internal/httpapi"
	"sinew/internal/store"
)

// upsert is Julep's create_or_update: the record of that id is replaced (as PUT replaces it) when
// there is one, else created with that id. made tells which.
func upsert[T any](replace, create func() (*T, error)) (v *T, made bool, err error) {
	v, err = replace()
	if !fault.Is(err, fault.NotFound) {
		return v, false, err
	}
	v, err = create()
	if fault.Is(err, fault.Conflict) {
		v, err = replace() // made by a concurrent request since
		return v, false, err
	}
	return v, err == nil, err
}

// UpsertAgent is POST /agents/{agent_id}: the agent created with that id, or replaced.
func (s *Service) UpsertAgent(ctx context.Context, dev, id string, body []byte) (*store.Agent, bool, error) {
	in, err := decodeInput[AgentInput](body)
	if err != nil {
		return nil, false, err
	}
	return upsert(func() (*store.Agent, error) {
		return s.Store.UpdateAgent(ctx, dev, id, func(a *store.Agent) error { in.apply(a); return nil })
	}, func() (*store.Agent, error) {
		a := store.Agent{ID: id}
		in.apply(&a)
		return s.Store.CreateAgent(ctx, dev, a)
	})
}

// UpsertUser is POST /users/{user_id}: the user created with that id, or replaced.
func (s *Service) UpsertUser(ctx context.Context, dev, id string, body []byte) (*store.User, bool, error) {
	in, err := decodeInput[UserInput](body)
	if err != nil {
		return nil, false, err
	}
	return upsert(func() (*store.User, error) {
		return s.Store.UpdateUser(ctx, dev, id, func(u *store.User) error { in.apply(u); return nil })
	}, func() (*store.User, error) {
		u := store.User{ID: id}
		in.apply(&u)
		return s.Store.CreateUser(ctx, dev, u)
	})
}

// ReplaceSession is PUT /sessions/{session_id} (the SDK's sessions.reset): the session's user,
// situation and metadata replaced; its agent stays (it may be left out), and a body naming
// another is refused.
func (s *Service) ReplaceSession(ctx context.Context, dev, id string, body []byte) (*store.Session, error) {
	in, err := sessionReplacement(body)
	if err != nil {
		return nil, err
	}
	return s.replaceSession(ctx, dev, id, in)
}

// sessionReplacement decodes a session's body that may leave its agent out.
func sessionReplacement(body []byte) (*SessionInput, error) {
	var in SessionInput
	if err := httpapi.DecodeJSON(body, &in); err != nil {
		return nil, err
	}
	return &in, in.normalize()
}

func (s *Service) replaceSession(ctx context.Context, dev, id string, in *SessionInput) (*store.Session, error) {
	return s.Store.UpdateSession(ctx, dev, id, func(x *store.Session) error {
		if in.AgentID != "" && in.AgentID != x.AgentID {
			return fault.Invalid("agent_id", "a session's agent does not change (it is %s): create another session", x.AgentID)
		}
		x.UserID, x.Situation, x.Metadata = in.UserID, in.Situation, in.Metadata
		return nil
	})
}

// UpsertSession is POST /sessions/{session_id}: the session created with that id (its agent
// required), or replaced (its agent staying).
func (s *Service) UpsertSession(ctx context.Context, dev, id string, body []byte) (*store.Session, bool, error) {
	in, err := sessionReplacement(body)
	if err != nil {
		return nil, false, err
	}
	return upsert(func() (*store.Session, error) { return s.replaceSession(ctx, dev, id, in) }, func() (*store.Session, error) {
		if err := in.check(); err != nil {
			return nil, err // a new session needs its agent
		}
		return s.Store.CreateSession(ctx, dev, store.Session{ID: id, AgentID: in.AgentID, UserID: in.UserID, Situation: in.Situation, Metadata: in.Metadata})
	})
}

func upserted[T any](v *T, made bool, err error) (*httpapi.Response, error) {
	if err != nil {
		return nil, err
	}
	if made {
		return httpapi.JSON(http.StatusCreated, v), nil
	}
	return httpapi.OK(v), nil
}

// registerUpserts adds Julep's create_or_update routes of agents and users (the SDK's
// agents.createOrUpdate, users.createOrUpdate).
func (h handlers) registerUpserts(rt *httpapi.Router) {
	const desc = "Julep's create_or_update: created with this id (201), or, when it exists, its fields replaced as PUT replaces them (200)."
	rt.Handle(httpapi.Route{Method: http.MethodPost, Path: "/agents/{agent_id}", Handler: func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
		return upserted(h.s.UpsertAgent(ctx, r.DeveloperID, r.Param("agent_id"), r.Body()))
	}, Op: httpapi.Operation{ID: "createOrUpdateAgent", Summary: "Create an agent with the given id, or replace it", Description: desc,
		Tags: []string{"agents"}, Request: ref("AgentInput"),
		Responses: map[int]httpapi.Resp{201: {Description: "created", Schema: ref("Agent")}, 200: {Description: "replaced", Schema: ref("Agent")}}}})
	rt.Handle(httpapi.Route{Method: http.MethodPost, Path: "/users/{user_id}", Handler: func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
		return upserted(h.s.UpsertUser(ctx, r.DeveloperID, r.Param("user_id"), r.Body()))
	}, Op: httpapi.Operation{ID: "createOrUpdateUser", Summary: "Create a user with the given id, or replace it", Description: desc,
		Tags: []string{"users"}, Request: ref("UserInput"),
		Responses: map[int]httpapi.Resp{201: {Description: "created", Schema: ref("User")}, 200: {Description: "replaced", Schema: ref("User")}}}})
	rt.Handle(httpapi.Route{Method: http.MethodPost, Path: "/sessions/{session_id}", Handler: func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
		return upserted(h.s.UpsertSession(ctx, r.DeveloperID, r.Param("session_id"), r.Body()))
	}, Op: httpapi.Operation{ID: "createOrUpdateSession", Summary: "Create a session with the given id, or replace it", Description: desc + " A session's agent does not change.",
		Tags: []string{"sessions"}, Request: ref("SessionInput"),
		Responses: map[int]httpapi.Resp{201: {Description: "created", Schema: ref("Session")}, 200: {Description: "replaced", Schema: ref("Session")}}}})
	rt.Handle(httpapi.Route{Method: http.MethodPut, Path: "/sessions/{session_id}", Handler: func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
		return ok(h.s.ReplaceSession(ctx, r.DeveloperID, r.Param("session_id"), r.Body()))
	}, Op: httpapi.Operation{ID: "replaceSession", Summary: "Replace a session's user, situation and metadata (its agent stays)",
		Tags: []string{"sessions"}, Request: ref("SessionInput"), Responses: resp(200, "the session", ref("Session"))}})
	rt.Handle(httpapi.Route{Method: http.MethodGet, Path: "/agents/models", Handler: func(context.Context, *httpapi.Request) (*httpapi.Response, error) {
		models := make([]map[string]string, 0, len(h.s.Models))
		for _, m := range h.s.Models {
			models = append(models, map[string]string{"id": m})
		}
		return httpapi.OK(map[string]any{"models": models}), nil
	}, Op: httpapi.Operation{ID: "listModels", Summary: "List the models an agent may use (Julep's route)", Tags: []string{"agents"},
		Description: "The model this deployment is configured with (SINEW_MODEL), the default of agents that name none.",
		Responses: resp(200, "{models: [{id}]}", map[string]any{"type": "object", "properties": map[string]any{"models": map[string]any{"type": "array",
			"items": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}}}}})}})
}
