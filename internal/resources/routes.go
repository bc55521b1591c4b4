package resources

import (
	"context"
	"net/http"

	"sinew/internal/config"
	"sinew/internal/httpapi"
	"sinew/internal/store"
	"sinew/internal/tool"
)

// Register adds every "resources" route of API.md to rt, with its OpenAPI operation.
func Register(rt *httpapi.Router, s *Service) {
	registerSchemas(rt)
	h := handlers{s}
	for _, r := range h.routes() {
		rt.Handle(r)
	}
}

type handlers struct{ s *Service }

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

func (h handlers) routes() []httpapi.Route {
	s := h.s
	var rs []httpapi.Route
	add := func(method, path string, op httpapi.Operation, fn httpapi.HandlerFunc) {
		rs = append(rs, httpapi.Route{Method: method, Path: path, Op: op, Handler: fn})
	}
	ref := httpapi.Ref

	// ---- agents ----
	add("POST", "/agents", httpapi.Operation{ID: "createAgent", Summary: "Create an agent", Tags: []string{"agents"},
		Request: ref("AgentInput"), Responses: resp(201, "the agent, setup values redacted", ref("Agent"))},
		func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
			return created(s.CreateAgent(ctx, r.DeveloperID, r.Body()))
		})
	add("GET", "/agents", httpapi.Operation{ID: "listAgents", Summary: "List agents, newest first", Tags: []string{"agents"},
		Params: httpapi.PageParams(), Responses: resp(200, "a page of agents", httpapi.ListOf(ref("Agent")))},
		func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
			return list(r, func(p store.Page) (*store.List[store.Agent], error) { return s.Store.ListAgents(ctx, r.DeveloperID, p) })
		})
	add("GET", "/agents/{agent_id}", httpapi.Operation{ID: "getAgent", Summary: "Get an agent", Tags: []string{"agents"},
		Responses: resp(200, "the agent, setup values redacted", ref("Agent"))},
		func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
			return ok(s.Store.GetAgent(ctx, r.DeveloperID, r.Param("agent_id")))
		})
	add("PUT", "/agents/{agent_id}", httpapi.Operation{ID: "updateAgent", Summary: "Replace an agent's fields", Tags: []string{"agents"},
		Request: ref("AgentInput"), Responses: resp(200, "the agent", ref("Agent"))},
		func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
			return ok(s.ReplaceAgent(ctx, r.DeveloperID, r.Param("agent_id"), r.Body()))
		})
	add("PATCH", "/agents/{agent_id}", httpapi.Operation{ID: "patchAgent", Summary: "Merge a patch into an agent", Tags: []string{"agents"},
		Request: ref("AgentPatch"), Responses: resp(200, "the agent", ref("Agent"))},
		func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
			return ok(s.PatchAgent(ctx, r.DeveloperID, r.Param("agent_id"), r.Body()))
		})
	add("DELETE", "/agents/{agent_id}", httpapi.Operation{ID: "deleteAgent", Summary: "Delete an agent with its tools, docs, tasks and sessions", Tags: []string{"agents"},
		Responses: resp(204, "deleted", nil)},
		func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
			return noContent(s.Store.DeleteAgent(ctx, r.DeveloperID, r.Param("agent_id")))
		})

	// ---- tools of agents and tasks ----
	for _, o := range []struct {
		base, param, tag, what string
		owner                  ownerFn
	}{
		{"/agents/{agent_id}", "agent_id", "agent tools", "Agent", byAgent},
		{"/tasks/{task_id}", "task_id", "task tools", "Task", byTask},
	} {
		owner := o.owner
		add("POST", o.base+"/tools", httpapi.Operation{ID: "create" + o.what + "Tool", Summary: "Add a tool", Tags: []string{o.tag},
			Request: ref("ToolInput"), Responses: withConflict(resp(201, "the tool, setup values redacted", ref("Tool")), "the owner has a tool of that name")},
			func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
				return created(s.CreateTool(ctx, r.DeveloperID, owner(r), r.Body()))
			})
		add("GET", o.base+"/tools", httpapi.Operation{ID: "list" + o.what + "Tools", Summary: "List tools, in the order they were made", Tags: []string{o.tag},
			Params: httpapi.PageParams(), Responses: resp(200, "a page of tools", httpapi.ListOf(ref("Tool")))},
			func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
				return list(r, func(p store.Page) (*store.List[toolT], error) {
					return s.Store.ListTools(ctx, r.DeveloperID, owner(r), p)
				})
			})
		add("GET", o.base+"/tools/{tool_id}", httpapi.Operation{ID: "get" + o.what + "Tool", Summary: "Get a tool", Tags: []string{o.tag},
			Responses: resp(200, "the tool, setup values redacted", ref("Tool"))},
			func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
				return ok(s.Store.GetTool(ctx, r.DeveloperID, owner(r), r.Param("tool_id")))
			})
		add("PUT", o.base+"/tools/{tool_id}", httpapi.Operation{ID: "update" + o.what + "Tool", Summary: "Replace a tool", Tags: []string{o.tag},
			Request: ref("ToolInput"), Responses: withConflict(resp(200, "the tool", ref("Tool")), "the new name is taken")},
			func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
				return ok(s.ReplaceTool(ctx, r.DeveloperID, owner(r), r.Param("tool_id"), r.Body()))
			})
		add("PATCH", o.base+"/tools/{tool_id}", httpapi.Operation{ID: "patch" + o.what + "Tool", Summary: "Merge a patch into a tool", Tags: []string{o.tag},
			Request: ref("ToolPatch"), Responses: withConflict(resp(200, "the tool", ref("Tool")), "the new name is taken")},
			func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
				return ok(s.PatchTool(ctx, r.DeveloperID, owner(r), r.Param("tool_id"), r.Body()))
			})
		add("DELETE", o.base+"/tools/{tool_id}", httpapi.Operation{ID: "delete" + o.what + "Tool", Summary: "Delete a tool", Tags: []string{o.tag},
			Responses: resp(204, "deleted", nil)},
			func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
				return noContent(s.Store.DeleteTool(ctx, r.DeveloperID, owner(r), r.Param("tool_id")))
			})
	}

	// ---- tasks ----
	add("POST", "/agents/{agent_id}/tasks", httpapi.Operation{ID: "createTask", Summary: "Create a task of an agent, with its tools", Tags: []string{"tasks"},
		Request: ref("TaskInput"), Responses: withConflict(resp(201, "the task with its tools", ref("Task")), "two of its tools share a name")},
		func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
			return created(s.CreateTask(ctx, r.DeveloperID, r.Param("agent_id"), r.Body()))
		})
	add("GET", "/agents/{agent_id}/tasks", httpapi.Operation{ID: "listTasks", Summary: "List an agent's tasks, in the order they were made (without their tools)", Tags: []string{"tasks"},
		Params: httpapi.PageParams(), Responses: resp(200, "a page of tasks", httpapi.ListOf(ref("TaskSummary")))},
		func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
			return list(r, func(p store.Page) (*store.List[store.Task], error) {
				return s.Store.ListTasks(ctx, r.DeveloperID, r.Param("agent_id"), p)
			})
		})
	add("GET", "/tasks/{task_id}", httpapi.Operation{ID: "getTask", Summary: "Get a task with its tools", Tags: []string{"tasks"},
		Responses: resp(200, "the task", ref("Task"))},
		func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
			return ok(s.GetTask(ctx, r.DeveloperID, r.Param("task_id")))
		})
	add("PUT", "/tasks/{task_id}", httpapi.Operation{ID: "updateTask", Summary: "Replace a task's own fields (its tools stay)", Tags: []string{"tasks"},
		Request: ref("TaskUpdate"), Responses: resp(200, "the task", ref("Task"))},
		func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
			return ok(s.ReplaceTask(ctx, r.DeveloperID, r.Param("task_id"), r.Body()))
		})
	add("PATCH", "/tasks/{task_id}", httpapi.Operation{ID: "patchTask", Summary: "Merge a patch into a task's own fields", Tags: []string{"tasks"},
		Request: ref("TaskPatch"), Responses: resp(200, "the task", ref("Task"))},
		func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
			return ok(s.PatchTask(ctx, r.DeveloperID, r.Param("task_id"), r.Body()))
		})
	add("DELETE", "/tasks/{task_id}", httpapi.Operation{ID: "deleteTask", Summary: "Delete a task with its tools", Tags: []string{"tasks"},
		Responses: resp(204, "deleted", nil)},
		func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
			return noContent(s.Store.DeleteTask(ctx, r.DeveloperID, r.Param("task_id")))
		})

	// ---- users ----
	add("POST", "/users", httpapi.Operation{ID: "createUser", Summary: "Create a user", Tags: []string{"users"},
		Request: ref("UserInput"), Responses: resp(201, "the user", ref("User"))},
		func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
			return created(s.CreateUser(ctx, r.DeveloperID, r.Body()))
		})
	add("GET", "/users", httpapi.Operation{ID: "listUsers", Summary: "List users, newest first", Tags: []string{"users"},
		Params: httpapi.PageParams(), Responses: resp(200, "a page of users", httpapi.ListOf(ref("User")))},
		func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
			return list(r, func(p store.Page) (*store.List[store.User], error) { return s.Store.ListUsers(ctx, r.DeveloperID, p) })
		})
	add("GET", "/users/{user_id}", httpapi.Operation{ID: "getUser", Summary: "Get a user", Tags: []string{"users"},
		Responses: resp(200, "the user", ref("User"))},
		func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
			return ok(s.Store.GetUser(ctx, r.DeveloperID, r.Param("user_id")))
		})
	add("PUT", "/users/{user_id}", httpapi.Operation{ID: "updateUser", Summary: "Replace a user's fields", Tags: []string{"users"},
		Request: ref("UserInput"), Responses: resp(200, "the user", ref("User"))},
		func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
			return ok(s.ReplaceUser(ctx, r.DeveloperID, r.Param("user_id"), r.Body()))
		})
	add("PATCH", "/users/{user_id}", httpapi.Operation{ID: "patchUser", Summary: "Merge a patch into a user", Tags: []string{"users"},
		Request: ref("UserPatch"), Responses: resp(200, "the user", ref("User"))},
		func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
			return ok(s.PatchUser(ctx, r.DeveloperID, r.Param("user_id"), r.Body()))
		})
	add("DELETE", "/users/{user_id}", httpapi.Operation{ID: "deleteUser", Summary: "Delete a user with the user's docs", Tags: []string{"users"},
		Responses: resp(204, "deleted", nil)},
		func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
			return noContent(s.Store.DeleteUser(ctx, r.DeveloperID, r.Param("user_id")))
		})

	// ---- docs and search ----
	for _, o := range []struct {
		base, what string
		owner      ownerFn
	}{
		{"/agents/{agent_id}", "Agent", byAgent},
		{"/users/{user_id}", "User", byUser},
	} {
		owner := o.owner
		rs = append(rs, httpapi.Route{Method: "POST", Path: o.base + "/docs", MaxBody: docMaxBody,
			Op: httpapi.Operation{ID: "create" + o.what + "Doc", Summary: "Add a doc", Tags: []string{"docs"},
				Request: ref("DocInput"), Responses: resp(201, "the doc", ref("Doc"))},
			Handler: func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
				return created(s.CreateDoc(ctx, r.DeveloperID, owner(r), r.Body()))
			}})
		add("GET", o.base+"/docs", httpapi.Operation{ID: "list" + o.what + "Docs", Summary: "List docs, in the order they were made", Tags: []string{"docs"},
			Params: httpapi.PageParams(), Responses: resp(200, "a page of docs", httpapi.ListOf(ref("Doc")))},
			func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
				return list(r, func(p store.Page) (*store.List[store.Doc], error) {
					return s.Store.ListDocs(ctx, r.DeveloperID, owner(r), p)
				})
			})
		add("DELETE", o.base+"/docs/{doc_id}", httpapi.Operation{ID: "delete" + o.what + "Doc", Summary: "Delete a doc", Tags: []string{"docs"},
			Responses: resp(204, "deleted", nil)},
			func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
				return noContent(s.Store.DeleteDoc(ctx, r.DeveloperID, owner(r), r.Param("doc_id")))
			})
		add("POST", o.base+"/search", httpapi.Operation{ID: "search" + o.what + "Docs", Summary: "Keyword search of the docs",
			Description: "A keyword search, not Julep's embedding search: the text's words are scored against each doc's title and " +
				"content with BM25, case- and accent-insensitively; docs that match no word are left out; metadata_filter keeps docs " +
				"whose metadata has each given key with an equal value. vector is refused.",
			Tags: []string{"docs"}, Request: ref("SearchRequest"), Responses: resp(200, "the best docs first", ref("SearchResult"))},
			func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
				return ok(s.SearchDocs(ctx, r.DeveloperID, owner(r), r.Body()))
			})
	}

	// ---- sessions ----
	add("POST", "/sessions", httpapi.Operation{ID: "createSession", Summary: "Create a session of an agent (and a user)", Tags: []string{"sessions"},
		Request: ref("SessionInput"), Responses: map[int]httpapi.Resp{201: {Description: "the session", Schema: ref("Session")},
			404: {Description: "the agent or user is unknown, or not the caller's"}}},
		func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
			return created(s.CreateSession(ctx, r.DeveloperID, r.Body()))
		})
	add("GET", "/sessions", httpapi.Operation{ID: "listSessions", Summary: "List sessions, newest first", Tags: []string{"sessions"},
		Params: httpapi.PageParams(), Responses: resp(200, "a page of sessions", httpapi.ListOf(ref("Session")))},
		func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
			return list(r, func(p store.Page) (*store.List[store.Session], error) {
				return s.Store.ListSessions(ctx, r.DeveloperID, p)
			})
		})
	add("GET", "/sessions/{session_id}", httpapi.Operation{ID: "getSession", Summary: "Get a session", Tags: []string{"sessions"},
		Responses: resp(200, "the session", ref("Session"))},
		func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
			return ok(s.Store.GetSession(ctx, r.DeveloperID, r.Param("session_id")))
		})
	add("PATCH", "/sessions/{session_id}", httpapi.Operation{ID: "patchSession", Summary: "Merge a patch into a session", Tags: []string{"sessions"},
		Request: ref("SessionPatch"), Responses: resp(200, "the session", ref("Session"))},
		func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
			return ok(s.PatchSession(ctx, r.DeveloperID, r.Param("session_id"), r.Body()))
		})
	add("DELETE", "/sessions/{session_id}", httpapi.Operation{ID: "deleteSession", Summary: "Delete a session with its history", Tags: []string{"sessions"},
		Responses: resp(204, "deleted", nil)},
		func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
			return noContent(s.Store.DeleteSession(ctx, r.DeveloperID, r.Param("session_id")))
		})
	add("GET", "/sessions/{session_id}/history", httpapi.Operation{ID: "getSessionHistory", Summary: "A session's messages, oldest first", Tags: []string{"sessions"},
		Params: httpapi.PageParams(), Responses: resp(200, "a page of messages", httpapi.ListOf(ref("HistoryMessage")))},
		func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
			return list(r, func(p store.Page) (*store.List[store.Message], error) {
				return s.Store.ListMessages(ctx, r.DeveloperID, r.Param("session_id"), p)
			})
		})

	// ---- flags ----
	add("GET", "/flags", httpapi.Operation{ID: "getFlags", Summary: "The caller's flags", Tags: []string{"flags"},
		Responses: resp(200, "every known flag", ref("Flags"))},
		func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
			return ok(s.Flags(ctx, r.DeveloperID))
		})
	add("PUT", "/flags/{name}", httpapi.Operation{ID: "setFlag", Summary: "Set one of the caller's flags", Tags: []string{"flags"},
		Params:  []httpapi.Param{{Name: "name", In: "path", Schema: map[string]any{"type": "string", "enum": flagEnum()}}},
		Request: ref("FlagInput"), Responses: map[int]httpapi.Resp{200: {Description: "the flag", Schema: ref("Flag")}, 404: {Description: "not a known flag"}}},
		func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
			return ok(s.SetFlag(ctx, r.DeveloperID, r.Param("name"), r.Body()))
		})
	return rs
}

type toolT = tool.Tool

func flagEnum() []any {
	out := make([]any, len(config.Flags))
	for i, f := range config.Flags {
		out[i] = f
	}
	return out
}
