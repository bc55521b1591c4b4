package openapitools

import (
	"context"
	"log/slog"
	"net/http"

	"sinew/internal/httpapi"
	"sinew/internal/netguard"
	"sinew/internal/resources"
	"sinew/internal/store"
	"sinew/internal/tool"
)

// Deps are what the import routes need.
type Deps struct {
	Store *store.Store
	// Guard is the api_call network policy; nil reads SINEW_APICALL_ALLOW (netguard.FromEnv), as
	// the api_call executor does.
	Guard  *netguard.Policy
	Logger *slog.Logger
}

// Answer is the route's answer: the tools made, as GET .../tools shows them, and the operations
// skipped with the reason.
type Answer struct {
	Tools   []tool.Tool `json:"tools"`
	Skipped []Skipped   `json:"skipped"`
}

// maxBody leaves room around the document for the rest of the request and for its text being
// escaped in a JSON string.
const maxBody = MaxDocumentBytes + MaxDocumentBytes/4

// Register adds POST /agents/{agent_id}/tools/openapi and POST /tasks/{task_id}/tools/openapi.
func Register(rt *httpapi.Router, d Deps) {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Guard == nil {
		g, err := netguard.FromEnv(netguard.WithLogger(d.Logger))
		if err != nil {
			// A malformed allowlist allows nothing extra here; the executor refuses to start on it.
			d.Logger.Warn("openapi import: SINEW_APICALL_ALLOW is malformed; only public servers are allowed", "err", err)
			g = netguard.New(netguard.WithLogger(d.Logger))
		}
		d.Guard = g
	}
	rt.Schema("OpenAPIImport", requestSchema())
	rt.Schema("OpenAPIImportResult", answerSchema())
	for _, o := range resources.ToolOwners {
		h := importer{d: d, owner: o.Of}
		rt.Handle(httpapi.Route{Method: http.MethodPost, Path: o.Base + "/tools/openapi", MaxBody: maxBody, Handler: h.create,
			Op: httpapi.Operation{ID: "import" + o.What + "ToolsFromOpenAPI", Tags: []string{o.Tag},
				Summary: "Make api_call tools from an OpenAPI document",
				Description: "One api_call tool per operation of an OpenAPI 3.0 or 3.1 document (a JSON object, or its JSON or YAML text), all made or none: " +
					"its URL is base_url or the document's server and the operation's path; its params_schema holds the path, query, header and cookie parameters and the JSON or form body (as the argument body), " +
					"argument_locations says where each goes. Credentials of apiKey, HTTP bearer and basic schemes go, sealed or as a developer-secret reference, into the owner's metadata " +
					"x-api_call-setup entry of each tool, never into a tool. Operations that cannot become a whole tool (OAuth2 or OpenID Connect, multipart or binary bodies, callbacks, " +
					"servers the network guard refuses, ...) are listed in skipped with the reason.",
				Request: httpapi.Ref("OpenAPIImport"),
				Responses: map[int]httpapi.Resp{
					http.StatusCreated:   {Description: "the tools made and the operations skipped", Schema: httpapi.Ref("OpenAPIImportResult")},
					http.StatusConflict:  {Description: "a tool of one of the names, or a metadata x-api_call-setup entry for it, exists already: nothing was made"},
					http.StatusForbidden: {Description: "base_url is refused by the network guard"},
				}}})
	}
}

type importer struct {
	d     Deps
	owner func(*httpapi.Request) store.Owner
}

func (h importer) create(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	req, err := DecodeRequest(r.Body())
	if err != nil {
		return nil, err
	}
	res, err := Build(req, Options{Guard: h.d.Guard})
	if err != nil {
		return nil, err
	}
	tools, err := h.d.Store.CreateTools(ctx, r.DeveloperID, h.owner(r), res.Tools, res.Setup)
	if err != nil {
		return nil, err
	}
	return httpapi.JSON(http.StatusCreated, Answer{Tools: tools, Skipped: res.Skipped}), nil
}

func requestSchema() map[string]any {
	str := func(d string) map[string]any { return map[string]any{"type": "string", "description": d} }
	cred := map[string]any{"type": "object", "additionalProperties": false, "minProperties": 1, "maxProperties": 1,
		"description": "a developer secret's name, or the value itself (sealed in the owner's metadata). For HTTP basic the value is user:password, and a secret holds its base64",
		"properties":  map[string]any{"secret": str("a developer secret's name (PUT /secrets/{name})"), "value": str("the credential; never answered again")}}
	return map[string]any{"type": "object", "additionalProperties": false, "required": []any{"document"},
		"properties": map[string]any{
			"document":   map[string]any{"description": "an OpenAPI 3.0 or 3.1 document: a JSON object, or its JSON or YAML text (at most 4 MiB); it must be self-contained (no $ref to other files or URLs)", "type": []any{"object", "string"}},
			"base_url":   str("replaces the document's servers: the API's absolute URL (needed when the document's servers are relative or absent)"),
			"prefix":     str("starts every tool's name: ^[A-Za-z_][A-Za-z0-9_]{0,23}$"),
			"operations": map[string]any{"type": "array", "items": str("an operationId, or METHOD /path"), "description": "only these operations (default: all)"},
			"security":   map[string]any{"type": "object", "additionalProperties": cred, "description": "credentials by security scheme name (apiKey, HTTP bearer or basic)"},
		}}
}

func answerSchema() map[string]any {
	return map[string]any{"type": "object", "required": []any{"tools", "skipped"}, "properties": map[string]any{
		"tools": map[string]any{"type": "array", "items": httpapi.Ref("Tool")},
		"skipped": map[string]any{"type": "array", "items": map[string]any{"type": "object", "required": []any{"operation", "reason"},
			"properties": map[string]any{"operation": map[string]any{"type": "string", "description": "the operationId, or METHOD /path"},
				"reason": map[string]any{"type": "string"}}}},
	}}
}
