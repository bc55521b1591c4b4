package system

import (
	"context"
	"maps"
	"slices"
	"time"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/store"
)

type key struct{ resource, subresource, operation string }

// handler is one entry of the dispatch table: what the model is told (description and the JSON
// Schema of the arguments) and what runs.
type handler struct {
	desc   string
	params map[string]any
	run    func(ctx context.Context, x *Executor, cc Context, a args) (any, error)
}

// Deleted is what a delete answers (Julep's ResourceDeletedResponse).
type Deleted struct {
	ID        string    `json:"id"`
	DeletedAt time.Time `json:"deleted_at"`
}

func deleted(id string, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return Deleted{ID: id, DeletedAt: time.Now().UTC()}, nil
}

// ---- argument schemas ----

func schema(required []string, props ...map[string]any) map[string]any {
	all := map[string]any{}
	for _, p := range props {
		maps.Copy(all, p)
	}
	s := map[string]any{"type": "object", "properties": all, "additionalProperties": false}
	if len(required) > 0 {
		r := make([]any, len(required))
		for i, k := range required {
			r[i] = k
		}
		s["required"] = r
	}
	return s
}

func idProp(name, desc string) map[string]any {
	return map[string]any{name: map[string]any{"type": "string", "format": "uuid", "description": desc}}
}

var (
	pageProps = map[string]any{
		"limit":  map[string]any{"type": "integer", "minimum": 1, "maximum": store.MaxLimit, "default": store.DefaultLimit, "description": "items per page"},
		"cursor": map[string]any{"type": "string", "description": "the next_cursor of the previous page"},
	}
	text          = func(d string) map[string]any { return map[string]any{"type": "string", "description": d} }
	object        = func(d string) map[string]any { return map[string]any{"type": "object", "description": d} }
	strOrList     = map[string]any{"anyOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "array", "items": map[string]any{"type": "string"}}}}
	metadataProp  = object("free-form metadata; setup keys (x-integration-setup, x-api_call-setup) are read as \"<redacted>\" and cannot be written here")
	agentFields   = map[string]any{"name": text("the agent's name"), "about": text("what the agent is"), "model": text("the model it uses"), "instructions": strOrList, "default_settings": object("model settings"), "metadata": metadataProp}
	userFields    = map[string]any{"name": text("the user's name"), "about": text("about the user"), "metadata": object("free-form metadata")}
	docFields     = map[string]any{"title": text("the doc's title"), "content": strOrList, "metadata": object("free-form metadata")}
	searchFields  = map[string]any{"text": text("the words to look for (a keyword search)"), "limit": map[string]any{"type": "integer", "minimum": 1, "maximum": 100, "default": 10}, "metadata_filter": object("keep docs whose metadata has these keys with equal values"), "search_params": object("the same fields, nested (Julep's form)")}
	sessionFields = map[string]any{"user_id": map[string]any{"type": "string", "format": "uuid"}, "situation": text("what the session is about"), "metadata": metadataProp}
	taskFields    = map[string]any{"name": text("the task's name"), "description": text("what it does"), "inherit_tools": map[string]any{"type": "boolean"}, "metadata": metadataProp, "prompt": object("{messages, settings, auto_run_tools, ...}")}
)

// ---- the table: Julep's get_handler, common/utils/evaluator.py at the commit of doc.go ----

var table = map[key]handler{}

func init() {
	registerDocs()
	registerAgents()
	registerUsers()
	registerSessions()
	registerTasks()
}

// registerDocs adds the doc operations of agents and users: list, create, delete and search.
func registerDocs() {
	for _, owner := range []string{"agent", "user"} {
		owner := owner
		idk := owner + "_id"
		ownerID := idProp(idk, "the "+owner)
		docOwner := func(a args) (store.Owner, error) {
			id, err := a.id(idk)
			kind := store.OwnerAgent
			if owner == "user" {
				kind = store.OwnerUser
			}
			return store.Owner{Kind: kind, ID: id}, err
		}
		table[key{owner, "doc", "list"}] = handler{"List the " + owner + "'s docs, in the order they were made.", schema([]string{idk}, ownerID, pageProps),
			func(ctx context.Context, x *Executor, cc Context, a args) (any, error) {
				o, err := docOwner(a)
				if err != nil {
					return nil, err
				}
				p, err := a.page()
				if err != nil {
					return nil, err
				}
				return x.Resources.Store.ListDocs(ctx, cc.DeveloperID, o, p)
			}}
		table[key{owner, "doc", "create"}] = handler{"Add a doc to the " + owner + ".", schema([]string{idk, "title", "content"}, ownerID, docFields),
			func(ctx context.Context, x *Executor, cc Context, a args) (any, error) {
				o, err := docOwner(a)
				if err != nil {
					return nil, err
				}
				b, err := a.body()
				if err != nil {
					return nil, err
				}
				return x.Resources.CreateDoc(ctx, cc.DeveloperID, o, b)
			}}
		table[key{owner, "doc", "delete"}] = handler{"Delete one of the " + owner + "'s docs.", schema([]string{idk, "doc_id"}, ownerID, idProp("doc_id", "the doc")),
			func(ctx context.Context, x *Executor, cc Context, a args) (any, error) {
				o, err := docOwner(a)
				if err != nil {
					return nil, err
				}
				doc, err := a.id("doc_id")
				if err != nil {
					return nil, err
				}
				if err := a.none(); err != nil {
					return nil, err
				}
				return deleted(doc, x.Resources.Store.DeleteDoc(ctx, cc.DeveloperID, o, doc))
			}}
		table[key{owner, "doc", "search"}] = handler{"Keyword search of the " + owner + "'s docs (BM25 over title and content), best first.",
			schema([]string{idk}, ownerID, searchFields),
			func(ctx context.Context, x *Executor, cc Context, a args) (any, error) {
				o, err := docOwner(a)
				if err != nil {
					return nil, err
				}
				b, err := a.body()
				if err != nil {
					return nil, err
				}
				return x.Resources.SearchDocs(ctx, cc.DeveloperID, o, b)
			}}
	}
}

// registerAgents adds the agent operations.
func registerAgents() {
	agentID := idProp("agent_id", "the agent")
	table[key{"agent", "", "list"}] = handler{"List the developer's agents, newest first.", schema(nil, pageProps),
		func(ctx context.Context, x *Executor, cc Context, a args) (any, error) {
			p, err := a.page()
			if err != nil {
				return nil, err
			}
			return x.Resources.Store.ListAgents(ctx, cc.DeveloperID, p)
		}}
	table[key{"agent", "", "get"}] = handler{"Get an agent.", schema([]string{"agent_id"}, agentID), getter("agent_id",
		func(ctx context.Context, x *Executor, dev, id string) (any, error) {
			return x.Resources.Store.GetAgent(ctx, dev, id)
		})}
	table[key{"agent", "", "create"}] = handler{"Create an agent.", schema([]string{"name"}, agentFields), creator(
		func(ctx context.Context, x *Executor, dev string, b []byte) (any, error) {
			return x.Resources.CreateAgent(ctx, dev, b)
		})}
	table[key{"agent", "", "update"}] = handler{"Update an agent: the given fields change, the rest stay.", schema([]string{"agent_id"}, agentID, agentFields), updater("agent_id",
		func(ctx context.Context, x *Executor, dev, id string, b []byte) (any, error) {
			return x.Resources.PatchAgent(ctx, dev, id, b)
		})}
	table[key{"agent", "", "delete"}] = handler{"Delete an agent with its tools, docs, tasks and sessions.", schema([]string{"agent_id"}, agentID), deleter("agent_id",
		func(ctx context.Context, x *Executor, dev, id string) error {
			return x.Resources.Store.DeleteAgent(ctx, dev, id)
		})}
}

// registerUsers adds the user operations.
func registerUsers() {
	userID := idProp("user_id", "the user")
	table[key{"user", "", "list"}] = handler{"List the developer's users, newest first.", schema(nil, pageProps),
		func(ctx context.Context, x *Executor, cc Context, a args) (any, error) {
			p, err := a.page()
			if err != nil {
				return nil, err
			}
			return x.Resources.Store.ListUsers(ctx, cc.DeveloperID, p)
		}}
	table[key{"user", "", "get"}] = handler{"Get a user.", schema([]string{"user_id"}, userID), getter("user_id",
		func(ctx context.Context, x *Executor, dev, id string) (any, error) {
			return x.Resources.Store.GetUser(ctx, dev, id)
		})}
	table[key{"user", "", "create"}] = handler{"Create a user.", schema(nil, userFields), creator(
		func(ctx context.Context, x *Executor, dev string, b []byte) (any, error) {
			return x.Resources.CreateUser(ctx, dev, b)
		})}
	table[key{"user", "", "update"}] = handler{"Update a user: the given fields change, the rest stay.", schema([]string{"user_id"}, userID, userFields), updater("user_id",
		func(ctx context.Context, x *Executor, dev, id string, b []byte) (any, error) {
			return x.Resources.PatchUser(ctx, dev, id, b)
		})}
	table[key{"user", "", "delete"}] = handler{"Delete a user with the user's docs.", schema([]string{"user_id"}, userID), deleter("user_id",
		func(ctx context.Context, x *Executor, dev, id string) error {
			return x.Resources.Store.DeleteUser(ctx, dev, id)
		})}
}

// registerSessions adds the session operations, session.chat among them.
func registerSessions() {
	agentID := idProp("agent_id", "the agent")
	sessionID := idProp("session_id", "the session")
	table[key{"session", "", "list"}] = handler{"List the developer's sessions, newest first.", schema(nil, pageProps),
		func(ctx context.Context, x *Executor, cc Context, a args) (any, error) {
			p, err := a.page()
			if err != nil {
				return nil, err
			}
			return x.Resources.Store.ListSessions(ctx, cc.DeveloperID, p)
		}}
	table[key{"session", "", "get"}] = handler{"Get a session.", schema([]string{"session_id"}, sessionID), getter("session_id",
		func(ctx context.Context, x *Executor, dev, id string) (any, error) {
			return x.Resources.Store.GetSession(ctx, dev, id)
		})}
	createSession := func(ctx context.Context, x *Executor, cc Context, a args) (any, error) {
		b, err := a.body()
		if err != nil {
			return nil, err
		}
		return x.Resources.CreateSession(ctx, cc.DeveloperID, b)
	}
	table[key{"session", "", "create"}] = handler{"Create a session of an agent (and a user).", schema([]string{"agent_id"}, agentID, sessionFields), createSession}
	table[key{"session", "", "update"}] = handler{"Update a session: the given fields change, the rest stay (its agent stays).", schema([]string{"session_id"}, sessionID, sessionFields),
		updater("session_id", func(ctx context.Context, x *Executor, dev, id string, b []byte) (any, error) {
			return x.Resources.PatchSession(ctx, dev, id, b)
		})}
	table[key{"session", "", "create_or_update"}] = handler{"Update the session named by session_id (the given fields change), or, without session_id, create one of agent_id.",
		schema(nil, sessionID, agentID, sessionFields),
		func(ctx context.Context, x *Executor, cc Context, a args) (any, error) {
			if _, ok := a["session_id"]; !ok {
				return createSession(ctx, x, cc, a)
			}
			id, _ := a.id("session_id")
			if agent, ok := a["agent_id"]; ok {
				// The session's agent cannot change; the same agent is accepted.
				s, err := x.Resources.Store.GetSession(ctx, cc.DeveloperID, id)
				if err != nil {
					return nil, err
				}
				if agent != s.AgentID {
					return nil, fault.Invalid("arguments.agent_id", "a session's agent cannot change")
				}
				delete(a, "agent_id")
			}
			b, err := a.body()
			if err != nil {
				return nil, err
			}
			return x.Resources.PatchSession(ctx, cc.DeveloperID, id, b)
		}}
	table[key{"session", "", "history"}] = handler{"A session's messages, oldest first.", schema([]string{"session_id"}, sessionID, pageProps),
		func(ctx context.Context, x *Executor, cc Context, a args) (any, error) {
			id, err := a.id("session_id")
			if err != nil {
				return nil, err
			}
			p, err := a.page()
			if err != nil {
				return nil, err
			}
			return x.Resources.Store.ListMessages(ctx, cc.DeveloperID, id, p)
		}}
	table[key{"session", "", "chat"}] = handler{"Chat in a session: send messages, get the agent's answer.",
		schema([]string{"session_id", "messages"}, sessionID, map[string]any{
			"messages":       map[string]any{"type": "array", "items": map[string]any{"type": "object"}, "description": "{role, content} messages"},
			"auto_run_tools": map[string]any{"type": "boolean"}, "model": text("the model"), "settings": object("model settings"),
			"max_iterations": map[string]any{"type": "integer", "minimum": 1},
		}),
		func(ctx context.Context, x *Executor, cc Context, a args) (any, error) {
			id, err := a.id("session_id")
			if err != nil {
				return nil, err
			}
			max := x.MaxDepth
			if max <= 0 {
				max = DefaultMaxDepth
			}
			if cc.Depth >= max {
				return nil, fault.Invalid("context.depth", "session.chat through a system tool is limited to %d nested chats, and this call is at depth %d", max, cc.Depth)
			}
			if x.Chat == nil {
				return nil, fault.Invalid("system", "system call session.chat is not available yet in this deployment")
			}
			next := cc
			next.Depth++
			next.SessionID = id
			return x.Chat.Chat(ctx, next, id, jsonv.Clone(map[string]any(a)).(map[string]any))
		}}
}

// registerTasks adds the task operations, task.execution.create among them.
func registerTasks() {
	agentID := idProp("agent_id", "the agent")
	taskID := idProp("task_id", "the task")
	table[key{"task", "", "list"}] = handler{"List an agent's tasks, in the order they were made.", schema([]string{"agent_id"}, agentID, pageProps),
		func(ctx context.Context, x *Executor, cc Context, a args) (any, error) {
			agent, err := a.id("agent_id")
			if err != nil {
				return nil, err
			}
			p, err := a.page()
			if err != nil {
				return nil, err
			}
			return x.Resources.Store.ListTasks(ctx, cc.DeveloperID, agent, p)
		}}
	table[key{"task", "", "get"}] = handler{"Get a task with its tools.", schema([]string{"task_id"}, taskID), getter("task_id",
		func(ctx context.Context, x *Executor, dev, id string) (any, error) {
			return x.Resources.GetTask(ctx, dev, id)
		})}
	table[key{"task", "", "create"}] = handler{"Create a task of an agent, with its tools.",
		schema([]string{"agent_id", "name"}, agentID, taskFields, map[string]any{"tools": map[string]any{"type": "array", "items": map[string]any{"type": "object"}, "description": "tool definitions"}}),
		func(ctx context.Context, x *Executor, cc Context, a args) (any, error) {
			agent, err := a.id("agent_id")
			if err != nil {
				return nil, err
			}
			b, err := a.body()
			if err != nil {
				return nil, err
			}
			return x.Resources.CreateTask(ctx, cc.DeveloperID, agent, b)
		}}
	table[key{"task", "", "update"}] = handler{"Update a task: the given fields change, the rest (and its tools) stay.", schema([]string{"task_id"}, taskID, taskFields), updater("task_id",
		func(ctx context.Context, x *Executor, dev, id string, b []byte) (any, error) {
			return x.Resources.PatchTask(ctx, dev, id, b)
		})}
	table[key{"task", "", "delete"}] = handler{"Delete a task with its tools.", schema([]string{"task_id"}, taskID), deleter("task_id",
		func(ctx context.Context, x *Executor, dev, id string) error {
			return x.Resources.Store.DeleteTask(ctx, dev, id)
		})}
	table[key{"task", "execution", "create"}] = handler{"Start an execution of a task: the agent works on the task's prompt with input as the user's message.",
		schema([]string{"task_id"}, taskID, map[string]any{"input": map[string]any{"description": "the execution's input"}}),
		func(ctx context.Context, x *Executor, cc Context, a args) (any, error) {
			id, err := a.id("task_id")
			if err != nil {
				return nil, err
			}
			// Julep's shape {"data": {"input": ...}} is accepted too.
			if d, ok := a["data"].(map[string]any); ok && len(a) == 1 {
				a = args(d)
			}
			input := a["input"]
			delete(a, "input")
			delete(a, "metadata") // Julep's CreateExecutionRequest.metadata: accepted, not kept
			if err := a.none(); err != nil {
				return nil, err
			}
			if x.Executions == nil {
				return nil, fault.Invalid("system", "system call task.execution.create is not available yet in this deployment")
			}
			// The task must be the caller's before anything starts.
			if _, err := x.Resources.Store.GetTask(ctx, cc.DeveloperID, id); err != nil {
				return nil, err
			}
			next := cc
			next.TaskID = id
			return x.Executions.StartTaskExecution(ctx, next, id, input)
		}}
}

func getter(idk string, get func(ctx context.Context, x *Executor, dev, id string) (any, error)) func(context.Context, *Executor, Context, args) (any, error) {
	return func(ctx context.Context, x *Executor, cc Context, a args) (any, error) {
		id, err := a.id(idk)
		if err != nil {
			return nil, err
		}
		if err := a.none(); err != nil {
			return nil, err
		}
		return get(ctx, x, cc.DeveloperID, id)
	}
}

func creator(create func(ctx context.Context, x *Executor, dev string, body []byte) (any, error)) func(context.Context, *Executor, Context, args) (any, error) {
	return func(ctx context.Context, x *Executor, cc Context, a args) (any, error) {
		b, err := a.body()
		if err != nil {
			return nil, err
		}
		return create(ctx, x, cc.DeveloperID, b)
	}
}

func updater(idk string, update func(ctx context.Context, x *Executor, dev, id string, body []byte) (any, error)) func(context.Context, *Executor, Context, args) (any, error) {
	return func(ctx context.Context, x *Executor, cc Context, a args) (any, error) {
		id, err := a.id(idk)
		if err != nil {
			return nil, err
		}
		b, err := a.body()
		if err != nil {
			return nil, err
		}
		return update(ctx, x, cc.DeveloperID, id, b)
	}
}

func deleter(idk string, del func(ctx context.Context, x *Executor, dev, id string) error) func(context.Context, *Executor, Context, args) (any, error) {
	return func(ctx context.Context, x *Executor, cc Context, a args) (any, error) {
		id, err := a.id(idk)
		if err != nil {
			return nil, err
		}
		if err := a.none(); err != nil {
			return nil, err
		}
		return deleted(id, del(ctx, x, cc.DeveloperID, id))
	}
}

// Supported lists the combinations with a handler, sorted.
func Supported() []string {
	out := make([]string, 0, len(table))
	for k := range table {
		out = append(out, Name(k.resource, k.subresource, k.operation))
	}
	slices.Sort(out)
	return out
}

// Parameters is the JSON Schema of a combination's arguments, which the model is shown for a system
// tool. developer_id is never among them: it is the caller's. A combination without a
// handler is a fault.InvalidInput naming it.
func Parameters(resource, subresource, operation string) (map[string]any, error) {
	h, ok := table[key{resource, subresource, operation}]
	if !ok {
		return nil, fault.Invalid("system", "system call %s is not supported", Name(resource, subresource, operation))
	}
	return jsonv.Clone(h.params).(map[string]any), nil
}

// Description is a combination's description, for a system tool without its own (Julep uses the
// handler's docstring).
func Description(resource, subresource, operation string) (string, error) {
	h, ok := table[key{resource, subresource, operation}]
	if !ok {
		return "", fault.Invalid("system", "system call %s is not supported", Name(resource, subresource, operation))
	}
	return h.desc, nil
}

// Schema gives a system handler's parameters and description together, as the tool formatter
// (package toolfmt) asks for them.
func Schema(resource, subresource, operation string) (map[string]any, string, error) {
	params, err := Parameters(resource, subresource, operation)
	if err != nil {
		return nil, "", err
	}
	desc, err := Description(resource, subresource, operation)
	if err != nil {
		return nil, "", err
	}
	return params, desc, nil
}
