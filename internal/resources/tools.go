package resources

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"sinew/internal/fault"
	"sinew/internal/httpapi"
	"sinew/internal/store"
	"sinew/internal/tool"
)

// readOnlyToolFields are answered by the API and ignored in bodies, so a tool read can be written
// back as it is.
var readOnlyToolFields = []string{"id", "created_at", "updated_at"}

// decodeToolBody decodes a tool strictly (tool.DecodeStrict: unknown fields and wrong types named,
// Julep's json_/schema_ aliases accepted); the store checks a tool's rules as it writes.
func decodeToolBody(body []byte, prefix string) (*tool.Tool, error) {
	if prefix == "" {
		// The body's own faults (empty, malformed, trailing data, not an object) named as "body",
		// as for every other route.
		var raw map[string]json.RawMessage
		if err := httpapi.DecodeJSON(body, &raw); err != nil {
			return nil, err
		}
	} else if b := bytes.TrimSpace(body); len(b) > 0 && b[0] != '{' {
		p := strings.TrimSuffix(prefix, ".")
		return nil, fault.Invalid(p, "%s must be a JSON object", p)
	}
	var t tool.Tool
	if err := tool.DecodeStrict(body, &t, prefix); err != nil {
		return nil, err
	}
	t.ID, t.CreatedAt, t.UpdatedAt = "", time.Time{}, time.Time{}
	return &t, nil
}

// CreateTool adds a tool to an agent or a task; a name the owner has is a Conflict (409).
func (s *Service) CreateTool(ctx context.Context, dev string, o store.Owner, body []byte) (*tool.Tool, error) {
	t, err := decodeToolBody(body, "")
	if err != nil {
		return nil, err
	}
	return s.Store.CreateTool(ctx, dev, o, *t)
}

// ReplaceTool replaces a tool (PUT); integration.setup values sent as "<redacted>" keep the stored ones.
func (s *Service) ReplaceTool(ctx context.Context, dev string, o store.Owner, id string, body []byte) (*tool.Tool, error) {
	nt, err := decodeToolBody(body, "")
	if err != nil {
		return nil, err
	}
	return s.Store.UpdateTool(ctx, dev, o, id, func(t *tool.Tool) error {
		*t = *nt
		return nil
	})
}

// PatchTool merges a patch into a tool, with Julep's rule: at most one of function, integration,
// system, api_call, agreeing with the type (the patch's, else the tool's). A patch that changes the
// type must carry the new type's field; the old one goes.
func (s *Service) PatchTool(ctx context.Context, dev string, o store.Owner, id string, body []byte) (*tool.Tool, error) {
	patch, err := decodePatch(body)
	if err != nil {
		return nil, err
	}
	for _, k := range readOnlyToolFields {
		delete(patch, k)
	}
	var specs []string
	for _, ty := range tool.Types {
		if v, ok := patch[string(ty)]; ok && v != nil {
			specs = append(specs, string(ty))
		}
	}
	if len(specs) > 1 {
		return nil, fault.Invalid(strings.Join(specs, ","), "a patch may carry at most one of function, integration, system, api_call, but it has %s", strings.Join(specs, " and "))
	}
	newType := ""
	if v, ok := patch["type"]; ok && v != nil {
		s, ok := v.(string)
		if !ok {
			return nil, fault.Invalid("type", "type must be a string")
		}
		newType = s
	}
	if len(specs) == 1 && newType != "" && specs[0] != newType {
		return nil, fault.Invalid(specs[0], "type is %q but the patch carries %q: they must agree", newType, specs[0])
	}
	return s.Store.UpdateTool(ctx, dev, o, id, func(t *tool.Tool) error {
		cur, err := toValue(t)
		if err != nil {
			return err
		}
		for _, k := range readOnlyToolFields {
			delete(cur, k)
		}
		eff := string(t.Type)
		if newType != "" {
			eff = newType
		}
		if len(specs) == 1 && specs[0] != eff {
			return fault.Invalid(specs[0], "the tool's type is %q but the patch carries %q: send \"type\": %q with it to change the type", eff, specs[0], specs[0])
		}
		if eff != string(t.Type) {
			delete(cur, string(t.Type)) // a new type takes its own field, from the patch
		}
		merged, _ := mergePatch(cur, patch).(map[string]any)
		b, err := encodeBody(merged)
		if err != nil {
			return err
		}
		nt, err := decodeToolBody(b, "")
		if err != nil {
			return err
		}
		*t = *nt
		return nil
	})
}

// toolRoutes serves the tool routes of one kind of owner (agents or tasks).
type toolRoutes struct {
	s     *Service
	owner ownerFn
}

// register adds the tool routes under base (the owner's path); tag and what name them in the
// OpenAPI document.
func (h toolRoutes) register(rt *httpapi.Router, base, tag, what string) {
	tags := []string{tag}
	rt.Handle(httpapi.Route{Method: http.MethodPost, Path: base + "/tools", Handler: h.create, Op: httpapi.Operation{ID: "create" + what + "Tool",
		Summary: "Add a tool", Tags: tags, Request: ref("ToolInput"),
		Responses: withConflict(resp(201, "the tool, setup values redacted", ref("Tool")), "the owner has a tool of that name")}})
	rt.Handle(httpapi.Route{Method: http.MethodGet, Path: base + "/tools", Handler: h.list, Op: httpapi.Operation{ID: "list" + what + "Tools",
		Summary: "List tools, in the order they were made", Tags: tags, Params: httpapi.PageParams(),
		Responses: resp(200, "a page of tools", httpapi.ListOf(ref("Tool")))}})
	rt.Handle(httpapi.Route{Method: http.MethodGet, Path: base + "/tools/{tool_id}", Handler: h.get, Op: httpapi.Operation{ID: "get" + what + "Tool",
		Summary: "Get a tool", Tags: tags, Responses: resp(200, "the tool, setup values redacted", ref("Tool"))}})
	rt.Handle(httpapi.Route{Method: http.MethodPut, Path: base + "/tools/{tool_id}", Handler: h.update, Op: httpapi.Operation{ID: "update" + what + "Tool",
		Summary: "Replace a tool", Tags: tags, Request: ref("ToolInput"),
		Responses: withConflict(resp(200, "the tool", ref("Tool")), "the new name is taken")}})
	rt.Handle(httpapi.Route{Method: http.MethodPatch, Path: base + "/tools/{tool_id}", Handler: h.patch, Op: httpapi.Operation{ID: "patch" + what + "Tool",
		Summary: "Merge a patch into a tool", Tags: tags, Request: ref("ToolPatch"),
		Responses: withConflict(resp(200, "the tool", ref("Tool")), "the new name is taken")}})
	rt.Handle(httpapi.Route{Method: http.MethodDelete, Path: base + "/tools/{tool_id}", Handler: h.delete, Op: httpapi.Operation{ID: "delete" + what + "Tool",
		Summary: "Delete a tool", Tags: tags, Responses: resp(204, "deleted", nil)}})
}

func (h toolRoutes) create(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return created(changed[*tool.Tool](ctx, h, r)(h.s.CreateTool(ctx, r.DeveloperID, h.owner(r), r.Body())))
}

// changed passes a tool route's answer on, a task's state machine first brought in step with the
// task's tools when they changed (a function tool of the task waits on the task's execution).
func changed[T any](ctx context.Context, h toolRoutes, r *httpapi.Request) func(T, error) (T, error) {
	return func(v T, err error) (T, error) {
		if o := h.owner(r); err == nil && o.Kind == store.OwnerTask {
			err = h.s.toolsChanged(ctx, r.DeveloperID, o.ID)
		}
		return v, err
	}
}

func (h toolRoutes) list(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return list(r, func(p store.Page) (*store.List[tool.Tool], error) {
		return h.s.Store.ListTools(ctx, r.DeveloperID, h.owner(r), p)
	})
}

func (h toolRoutes) get(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return ok(h.s.Store.GetTool(ctx, r.DeveloperID, h.owner(r), r.Param("tool_id")))
}

func (h toolRoutes) update(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return ok(changed[*tool.Tool](ctx, h, r)(h.s.ReplaceTool(ctx, r.DeveloperID, h.owner(r), r.Param("tool_id"), r.Body())))
}

func (h toolRoutes) patch(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return ok(changed[*tool.Tool](ctx, h, r)(h.s.PatchTool(ctx, r.DeveloperID, h.owner(r), r.Param("tool_id"), r.Body())))
}

func (h toolRoutes) delete(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	_, err := changed[any](ctx, h, r)(nil, h.s.Store.DeleteTool(ctx, r.DeveloperID, h.owner(r), r.Param("tool_id")))
	return noContent(err)
}
