package resources

import (
	"net/http"

	"sinew/internal/httpapi"
	"sinew/internal/store"
)

// Register adds every resource route to rt, with its OpenAPI operation: each resource's file
// declares its routes, one rt.Handle per route, each served by a named method.
func Register(rt *httpapi.Router, s *Service) {
	registerSchemas(rt)
	h := handlers{s}
	h.registerAgents(rt)
	for _, o := range ToolOwners {
		toolRoutes{s: s, owner: o.Of}.register(rt, o.Base, o.Tag, o.What)
	}
	h.registerTasks(rt)
	h.registerUsers(rt)
	docRoutes{s: s, owner: byAgent}.register(rt, "/agents/{agent_id}", "Agent")
	docRoutes{s: s, owner: byUser}.register(rt, "/users/{user_id}", "User")
	h.registerSessions(rt)
	h.registerFlags(rt)
	h.registerUpserts(rt)
}

// handlers serves the routes of the resources that have one path each.
type handlers struct{ s *Service }

// ref names a schema of the OpenAPI document.
var ref = httpapi.Ref

// Response helpers.
func created(v any, err error) (*httpapi.Response, error) {
	if err != nil {
		return nil, err
	}
	return httpapi.JSON(http.StatusCreated, v), nil
}

func ok(v any, err error) (*httpapi.Response, error) {
	if err != nil {
		return nil, err
	}
	return httpapi.OK(v), nil
}

func noContent(err error) (*httpapi.Response, error) { return nil, err }

func list[T any](r *httpapi.Request, fetch func(store.Page) (*store.List[T], error)) (*httpapi.Response, error) {
	p, err := r.Page()
	if err != nil {
		return nil, err
	}
	return ok(fetch(page(p)))
}

type ownerFn func(r *httpapi.Request) store.Owner

// ToolOwner is a kind of owner of tools as its routes name it: every route that makes or lists
// tools (here, and the imports of packages openapitools and mcptools) is served under each.
type ToolOwner struct {
	Base string  // the owner's path, like /agents/{agent_id}
	Tag  string  // the routes' OpenAPI tag
	What string  // the owner in operation ids: Agent, Task
	Of   ownerFn // the owner a request names
}

// ToolOwners are the owners of tools: agents and tasks.
var ToolOwners = []ToolOwner{
	{Base: "/agents/{agent_id}", Tag: "agent tools", What: "Agent", Of: byAgent},
	{Base: "/tasks/{task_id}", Tag: "task tools", What: "Task", Of: byTask},
}

func byAgent(r *httpapi.Request) store.Owner { return agentOwner(r.Param("agent_id")) }
func byUser(r *httpapi.Request) store.Owner  { return userOwner(r.Param("user_id")) }
func byTask(r *httpapi.Request) store.Owner  { return taskOwner(r.Param("task_id")) }

// Operation helpers.
func resp(status int, desc string, schema any) map[int]httpapi.Resp {
	return map[int]httpapi.Resp{status: {Description: desc, Schema: schema}}
}

func withConflict(m map[int]httpapi.Resp, why string) map[int]httpapi.Resp {
	m[http.StatusConflict] = httpapi.Resp{Description: why}
	return m
}
