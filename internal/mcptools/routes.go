package mcptools

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"sinew/internal/executor"
	"sinew/internal/fault"
	"sinew/internal/httpapi"
	"sinew/internal/integrations/providers/mcp"
	"sinew/internal/resources"
	"sinew/internal/store"
	"sinew/internal/tool"
	"sinew/internal/workflow"
)

// Deps are what the import routes need.
type Deps struct {
	Store *store.Store
	// Executor runs the listing as an integration call (mcp list_tools) in the integration
	// function, the one that may open the setup's secrets; dispatch.Dispatcher is one.
	Executor Executor
	// ListWait bounds the listing (DefaultListWait when 0): the route answers within API
	// Gateway's 30 s.
	ListWait time.Duration
	Logger   *slog.Logger
}

// Executor runs one call through the executor of its type, answering its result object.
type Executor interface {
	Dispatch(ctx context.Context, env executor.Envelope, call *tool.Call) tool.Result
}

// DefaultListWait bounds a listing.
const DefaultListWait = 20 * time.Second

// Register adds POST /agents/{agent_id}/tools/mcp and POST /tasks/{task_id}/tools/mcp.
func Register(rt *httpapi.Router, d Deps) {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.ListWait <= 0 {
		d.ListWait = DefaultListWait
	}
	rt.Schema("MCPImport", requestSchema())
	rt.Schema("MCPImportResult", answerSchema())
	for _, o := range resources.ToolOwners {
		h := importer{d: d, owner: o.Of}
		rt.Handle(httpapi.Route{Method: http.MethodPost, Path: o.Base + "/tools/mcp", MaxBody: 64 << 10, Handler: h.create,
			Op: httpapi.Operation{ID: "import" + o.What + "ToolsFromMCP", Tags: []string{o.Tag},
				Summary: "Make or refresh integration tools from an MCP server's tools",
				Description: "Lists the server's tools (tools/list, every page; the integration function lists them, as it runs an mcp list_tools call, so only it opens the setup's secrets) and makes one integration tool per remote tool, named prefix + the remote name: provider mcp, method call_tool, " +
					"the remote name in its arguments, the remote input schema as its params_schema (what the model sees), the setup (headers sealed, or secret references) as its setup. " +
					"Calling again with the same prefix and server refreshes: tools gone remotely are removed, changed descriptions and schemas updated. A name held by a tool this import did not make " +
					"is a 409 and nothing changes.",
				Request: httpapi.Ref("MCPImport"),
				Responses: map[int]httpapi.Resp{
					http.StatusCreated:            {Description: "tools were added", Schema: httpapi.Ref("MCPImportResult")},
					http.StatusOK:                 {Description: "nothing was added; the tools are refreshed", Schema: httpapi.Ref("MCPImportResult")},
					http.StatusConflict:           {Description: "a tool this import did not make holds one of the names: nothing was changed"},
					http.StatusForbidden:          {Description: "the server's address is refused by the network guard"},
					http.StatusBadGateway:         {Description: "the server refused the listing (an HTTP 4xx or a JSON-RPC error)"},
					http.StatusServiceUnavailable: {Description: "the server could not be reached"},
				}}})
	}
}

type importer struct {
	d     Deps
	owner func(*httpapi.Request) store.Owner
}

func (h importer) create(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	var req Request
	if err := r.Decode(&req); err != nil {
		return nil, err
	}
	if err := req.check(); err != nil {
		return nil, err
	}
	o := h.owner(r)
	// The owner first: a missing agent is a 404 before the server is asked anything.
	have, err := h.d.Store.AllTools(ctx, r.DeveloperID, o)
	if err != nil {
		return nil, err
	}
	remote, server, err := h.list(ctx, r.DeveloperID, o, req.Setup)
	if err != nil {
		return nil, err
	}
	want, skipped := build(req, server, remote)
	p := diff(want, have, server, req.Prefix)
	if len(p.clashes) > 0 {
		e := fault.New(fault.Conflict, "the %s has tools named %s that this import did not make: nothing was changed; rename or delete them, or choose another prefix",
			o.Kind, strings.Join(p.clashes, ", "))
		e.Field = "prefix"
		return nil, e
	}
	res, err := h.apply(ctx, r.DeveloperID, o, p)
	if err != nil {
		return nil, err
	}
	res.Skipped = append([]Skipped{}, skipped...)
	status := http.StatusOK
	if len(res.Added) > 0 {
		status = http.StatusCreated
	}
	return httpapi.JSON(status, res), nil
}

// list asks the server for its tools through the integration executor: the setup is sealed
// under a staged id the executor reads it by (as it reads a stored tool's), opened there only,
// and dropped after. A failure names the server, never a header's value (the executor redacts the
// call's setup values from its errors).
func (h importer) list(ctx context.Context, dev string, o store.Owner, raw map[string]any) ([]mcp.ToolInfo, string, error) {
	server, err := checkSetup(raw)
	if err != nil {
		return nil, "", err
	}
	cc := workflow.Context{DeveloperID: dev, AgentID: o.ID}
	if o.Kind == store.OwnerTask {
		task, err := h.d.Store.GetTask(ctx, dev, o.ID)
		if err != nil {
			return nil, "", err
		}
		cc.AgentID, cc.TaskID = task.AgentID, task.ID
	}
	if h.d.Executor == nil {
		return nil, "", fault.New(fault.Internal, "mcp import: no integration executor is configured")
	}
	id, err := h.d.Store.StageSetup(ctx, dev, o, raw)
	if err != nil {
		return nil, "", err
	}
	defer func() {
		if err := h.d.Store.DropStagedSetup(context.WithoutCancel(ctx), dev, id); err != nil {
			h.d.Logger.WarnContext(ctx, "mcp import: dropping the staged setup failed; its TTL removes it", "err", err)
		}
	}()
	lister := &tool.Tool{ID: id, Name: listToolName, Type: tool.TypeIntegration,
		Integration: &tool.IntegrationDef{Provider: "mcp", Method: "list_tools"}}
	call := tool.NewCall(lister, tool.NewCallID(), nil)
	ctx, cancel := context.WithTimeout(ctx, h.d.ListWait)
	defer cancel()
	res := h.d.Executor.Dispatch(ctx, executor.Envelope{Call: call, Tool: lister, Context: cc}, &call)
	if res.Error != nil {
		kind := fault.Kind(res.Error.Type)
		if kind == fault.Internal || kind == "" {
			kind = fault.Transient
		}
		return nil, "", fault.New(kind, "listing the tools of the MCP server %s failed: %s", server, res.Error.Message)
	}
	out, err := h.d.Store.LoadValue(ctx, dev, res.Output)
	if err != nil {
		return nil, "", err
	}
	var listed mcp.ListToolsOutput
	b, err := json.Marshal(out)
	if err == nil {
		err = json.Unmarshal(b, &listed)
	}
	if err != nil {
		return nil, "", fault.Wrap(fault.Internal, err, "mcp import: the listing of %s is not a list of tools", server)
	}
	return listed.Tools, server, nil
}

// listToolName names the listing's call (a tool that is never stored).
const listToolName = "mcp_list_tools"

// apply writes the plan: the new tools all or none first (a name taken meanwhile fails it before
// anything else changes), then the updates and removals.
func (h importer) apply(ctx context.Context, dev string, o store.Owner, p plan) (Result, error) {
	res := Result{Added: []string{}, Changed: []string{}, Removed: []string{}, Unchanged: p.same}
	if len(p.add) > 0 {
		made, err := h.d.Store.CreateTools(ctx, dev, o, p.add, nil)
		if err != nil {
			return res, err
		}
		for _, t := range made {
			res.Added = append(res.Added, t.Name)
		}
	}
	for _, c := range p.change {
		_, err := h.d.Store.UpdateTool(ctx, dev, o, c.id, func(t *tool.Tool) error {
			t.Description, t.Integration = c.want.Description, c.want.Integration
			return nil
		})
		if err != nil {
			return res, err
		}
		res.Changed = append(res.Changed, c.want.Name)
	}
	for _, t := range p.remove {
		if err := h.d.Store.DeleteTool(ctx, dev, o, t.ID); err != nil && !fault.Is(err, fault.NotFound) {
			return res, err
		}
		res.Removed = append(res.Removed, t.Name)
	}
	return res, nil
}

func requestSchema() map[string]any {
	str := func(d string) map[string]any { return map[string]any{"type": "string", "description": d} }
	header := map[string]any{"description": "the value (sealed when stored, never answered again) or a developer secret's reference",
		"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "object", "required": []any{"secret"}, "properties": map[string]any{"secret": str("a developer secret's name (PUT /secrets/{name})")}}}}
	return map[string]any{"type": "object", "additionalProperties": false, "required": []any{"setup", "prefix"},
		"properties": map[string]any{
			"setup": map[string]any{"type": "object", "required": []any{"transport", "http_url"}, "description": "the mcp integration's setup",
				"properties": map[string]any{
					"transport":    map[string]any{"type": "string", "enum": []any{"http", "sse"}},
					"http_url":     str("the server's MCP endpoint (http or https)"),
					"http_headers": map[string]any{"type": "object", "additionalProperties": header},
				}},
			"prefix": str("starts every tool's name, and with the server identifies the import for a refresh: ^[A-Za-z_][A-Za-z0-9_]{0,23}$"),
		}}
}

func answerSchema() map[string]any {
	names := map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
	return map[string]any{"type": "object", "required": []any{"added", "changed", "removed", "unchanged", "skipped"}, "properties": map[string]any{
		"added": names, "changed": names, "removed": names,
		"unchanged": map[string]any{"type": "integer"},
		"skipped": map[string]any{"type": "array", "items": map[string]any{"type": "object", "required": []any{"tool", "reason"},
			"properties": map[string]any{"tool": map[string]any{"type": "string", "description": "the remote tool's name"}, "reason": map[string]any{"type": "string"}}}},
	}}
}
