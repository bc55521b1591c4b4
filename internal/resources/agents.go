package resources

import (
	"context"
	"net/http"

	"sinew/internal/httpapi"
	"sinew/internal/store"
)

// AgentInput is the body of POST /agents and PUT /agents/{agent_id}.
type AgentInput struct {
	Name            string         `json:"name"`
	About           string         `json:"about,omitempty"`
	Model           string         `json:"model,omitempty"`
	Instructions    any            `json:"instructions,omitempty"`
	DefaultSettings map[string]any `json:"default_settings,omitempty"`
	Metadata        map[string]any `json:"metadata,omitempty"`
}

func (in *AgentInput) check() error {
	if err := checkText("name", in.Name, true, maxName); err != nil {
		return err
	}
	if err := checkText("about", in.About, false, maxAbout); err != nil {
		return err
	}
	if err := checkText("model", in.Model, false, maxName); err != nil {
		return err
	}
	return checkStrings("instructions", in.Instructions, false)
}

func (in *AgentInput) apply(a *store.Agent) {
	a.Name, a.About, a.Model, a.Instructions = in.Name, in.About, in.Model, in.Instructions
	a.DefaultSettings, a.Metadata = in.DefaultSettings, in.Metadata
}

func agentInputOf(a *store.Agent) *AgentInput {
	return &AgentInput{Name: a.Name, About: a.About, Model: a.Model, Instructions: a.Instructions,
		DefaultSettings: a.DefaultSettings, Metadata: a.Metadata}
}

// CreateAgent creates an agent from a body.
func (s *Service) CreateAgent(ctx context.Context, dev string, body []byte) (*store.Agent, error) {
	in, err := decodeInput[AgentInput](body)
	if err != nil {
		return nil, err
	}
	var a store.Agent
	in.apply(&a)
	return s.Store.CreateAgent(ctx, dev, a)
}

// ReplaceAgent replaces an agent's fields with a body's (PUT).
func (s *Service) ReplaceAgent(ctx context.Context, dev, id string, body []byte) (*store.Agent, error) {
	in, err := decodeInput[AgentInput](body)
	if err != nil {
		return nil, err
	}
	return s.Store.UpdateAgent(ctx, dev, id, func(a *store.Agent) error {
		in.apply(a)
		return nil
	})
}

// PatchAgent merges a patch into an agent (PATCH).
func (s *Service) PatchAgent(ctx context.Context, dev, id string, body []byte) (*store.Agent, error) {
	patch, err := decodePatch(body)
	if err != nil {
		return nil, err
	}
	return s.Store.UpdateAgent(ctx, dev, id, func(a *store.Agent) error {
		in, err := patchInput[AgentInput](agentInputOf(a), patch)
		if err != nil {
			return err
		}
		in.apply(a)
		return nil
	})
}

func (h handlers) registerAgents(rt *httpapi.Router) {
	tags := []string{"agents"}
	rt.Handle(httpapi.Route{Method: http.MethodPost, Path: "/agents", Handler: h.createAgent, Op: httpapi.Operation{ID: "createAgent",
		Summary: "Create an agent", Tags: tags, Request: ref("AgentInput"), Responses: resp(201, "the agent, setup values redacted", ref("Agent"))}})
	rt.Handle(httpapi.Route{Method: http.MethodGet, Path: "/agents", Handler: h.listAgents, Op: httpapi.Operation{ID: "listAgents",
		Summary: "List agents, newest first", Tags: tags, Params: httpapi.PageParams(), Responses: resp(200, "a page of agents", httpapi.ListOf(ref("Agent")))}})
	rt.Handle(httpapi.Route{Method: http.MethodGet, Path: "/agents/{agent_id}", Handler: h.getAgent, Op: httpapi.Operation{ID: "getAgent",
		Summary: "Get an agent", Tags: tags, Responses: resp(200, "the agent, setup values redacted", ref("Agent"))}})
	rt.Handle(httpapi.Route{Method: http.MethodPut, Path: "/agents/{agent_id}", Handler: h.updateAgent, Op: httpapi.Operation{ID: "updateAgent",
		Summary: "Replace an agent's fields", Tags: tags, Request: ref("AgentInput"), Responses: resp(200, "the agent", ref("Agent"))}})
	rt.Handle(httpapi.Route{Method: http.MethodPatch, Path: "/agents/{agent_id}", Handler: h.patchAgent, Op: httpapi.Operation{ID: "patchAgent",
		Summary: "Merge a patch into an agent", Tags: tags, Request: ref("AgentPatch"), Responses: resp(200, "the agent", ref("Agent"))}})
	rt.Handle(httpapi.Route{Method: http.MethodDelete, Path: "/agents/{agent_id}", Handler: h.deleteAgent, Op: httpapi.Operation{ID: "deleteAgent",
		Summary: "Delete an agent with its tools, docs, tasks and sessions", Tags: tags, Responses: resp(204, "deleted", nil)}})
}

func (h handlers) createAgent(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return created(h.s.CreateAgent(ctx, r.DeveloperID, r.Body()))
}

func (h handlers) listAgents(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return list(r, func(p store.Page) (*store.List[store.Agent], error) {
		return h.s.Store.ListAgents(ctx, r.DeveloperID, p)
	})
}

func (h handlers) getAgent(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return ok(h.s.Store.GetAgent(ctx, r.DeveloperID, r.Param("agent_id")))
}

func (h handlers) updateAgent(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return ok(h.s.ReplaceAgent(ctx, r.DeveloperID, r.Param("agent_id"), r.Body()))
}

func (h handlers) patchAgent(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return ok(h.s.PatchAgent(ctx, r.DeveloperID, r.Param("agent_id"), r.Body()))
}

func (h handlers) deleteAgent(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return noContent(h.s.Store.DeleteAgent(ctx, r.DeveloperID, r.Param("agent_id")))
}
