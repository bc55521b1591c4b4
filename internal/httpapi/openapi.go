package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Operation documents a route in the OpenAPI document. Schemas are JSON Schema (2020-12, as OpenAPI
// 3.1 uses) as Go values: map[string]any, or Ref of a registered schema.
type Operation struct {
	ID          string // operationId; made from the method and path when empty
	Summary     string
	Description string
	Tags        []string
	// Params are the query and header parameters, and descriptions of path parameters (a path
	// parameter not listed here is documented as a required string).
	Params []Param
	// Request is the JSON body's schema; nil for a route without a body.
	Request any
	// Responses by status. For a status of 400 or more the schema is always the error body; for
	// others a nil Schema means no content.
	Responses map[int]Resp
}

// Param is one parameter; In is "query", "header" or "path".
type Param struct {
	Name        string
	In          string
	Description string
	Required    bool
	Schema      any // {"type": "string"} when nil
}

// Resp is one documented response.
type Resp struct {
	Description string
	Schema      any
}

// Ref is a reference to the schema registered under name.
func Ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

// ListOf is the schema of a list answer of items.
func ListOf(items any) map[string]any {
	return map[string]any{
		"type":     "object",
		"required": []any{"items", "next_cursor"},
		"properties": map[string]any{
			"items":       map[string]any{"type": "array", "items": items},
			"next_cursor": map[string]any{"type": []any{"string", "null"}, "description": "pass as ?cursor= for the next page; null on the last page"},
		},
	}
}

// PageParams are the parameters of a list route.
func PageParams() []Param {
	return []Param{
		{Name: "limit", In: "query", Description: fmt.Sprintf("items per page, 1 to %d (default %d)", MaxLimit, DefaultLimit),
			Schema: map[string]any{"type": "integer", "minimum": 1, "maximum": MaxLimit, "default": DefaultLimit}},
		{Name: "cursor", In: "query", Description: "the next_cursor of the previous page"},
	}
}

// IdempotencyParam documents the Idempotency-Key header.
func IdempotencyParam() Param {
	return Param{Name: "Idempotency-Key", In: "header",
		Description: "repeats with the same key return the first answer instead of acting again",
		Schema:      map[string]any{"type": "string", "maxLength": MaxIdempotencyKey}}
}

// Schema registers a named schema under components.schemas, for Ref. Registering a name twice with
// different schemas is a programming error.
func (rt *Router) Schema(name string, schema any) {
	if old, ok := rt.schemas[name]; ok && fmt.Sprint(old) != fmt.Sprint(schema) {
		panic(fmt.Sprintf("httpapi: schema %q registered twice", name))
	}
	rt.schemas[name] = schema
}

// Document lists other's routes (and their schemas) in rt's OpenAPI document without serving them:
// a route another function answers (API Gateway sends POST /sessions/{session_id}/chat to the chat
// function) still belongs in the one document of the HTTP API. Routes rt serves itself win.
func (rt *Router) Document(other *Router) {
	for name, schema := range other.schemas {
		rt.Schema(name, schema)
	}
	for _, r := range other.routes {
		if !slices.ContainsFunc(rt.routes, func(o *route) bool { return o.Method == r.Method && o.Path == r.Path }) {
			rt.documented = append(rt.documented, r)
		}
	}
}

// OpenAPI builds the OpenAPI 3.1 document of the registered routes and the documented ones.
func (rt *Router) OpenAPI() map[string]any {
	paths := map[string]any{}
	for _, r := range slices.Concat(rt.routes, rt.documented) {
		item, _ := paths[r.Path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[r.Path] = item
		}
		item[strings.ToLower(r.Method)] = rt.operation(r)
	}
	schemas := map[string]any{}
	for k, v := range rt.schemas {
		schemas[k] = v
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":   rt.opts.Title,
			"version": rt.opts.Version,
			"description": "sinew: Julep's tool layer on AWS serverless. Every route but GET /openapi.json and GET /healthz " +
				"needs a bearer JWT whose " + strconv.Quote(rt.opts.JWTClaim) + " claim names the developer.",
		},
		"paths": paths,
		"components": map[string]any{
			"schemas": schemas,
			"securitySchemes": map[string]any{
				"jwt": map[string]any{"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
			},
		},
		"security": []any{map[string]any{"jwt": []any{}}},
	}
}

func (rt *Router) operation(r *route) map[string]any {
	op := r.Op
	id := op.ID
	if id == "" {
		id = operationID(r.Method, r.Path)
	}
	out := map[string]any{"operationId": id}
	if op.Summary != "" {
		out["summary"] = op.Summary
	}
	if op.Description != "" {
		out["description"] = op.Description
	}
	if len(op.Tags) > 0 {
		out["tags"] = op.Tags
	}
	if r.Public {
		out["security"] = []any{}
	}

	var params []any
	described := map[string]Param{}
	for _, p := range op.Params {
		if p.In == "path" {
			described[p.Name] = p
		}
	}
	for _, s := range r.segs {
		if s.param == "" {
			continue
		}
		p := described[s.param]
		p.Name, p.In, p.Required = s.param, "path", true
		params = append(params, paramObject(p))
	}
	for _, p := range op.Params {
		if p.In != "path" {
			params = append(params, paramObject(p))
		}
	}
	if len(params) > 0 {
		out["parameters"] = params
	}

	if op.Request != nil {
		limit := r.MaxBody
		if limit <= 0 {
			limit = rt.opts.MaxBody
		}
		out["requestBody"] = map[string]any{
			"required":    true,
			"description": fmt.Sprintf("at most %d bytes", limit),
			"content":     map[string]any{"application/json": map[string]any{"schema": op.Request}},
		}
	}

	responses := map[string]any{}
	for status, resp := range op.Responses {
		responses[strconv.Itoa(status)] = responseObject(status, resp)
	}
	// The failures every route of its shape can answer, unless the operation describes them itself.
	add := func(status int, why string) {
		if _, ok := op.Responses[status]; !ok {
			responses[strconv.Itoa(status)] = responseObject(status, Resp{Description: why})
		}
	}
	if !r.Public {
		add(http.StatusUnauthorized, "no bearer token, or one without the developer claim")
	}
	if op.Request != nil || len(params) > 0 {
		add(http.StatusBadRequest, "the request breaks a rule; the error names the field")
	}
	if op.Request != nil {
		add(http.StatusRequestEntityTooLarge, "the body is over the route's limit")
	}
	if slices.ContainsFunc(r.segs, func(s segment) bool { return s.param != "" }) {
		add(http.StatusNotFound, "unknown, or not the caller's")
	}
	responses["default"] = responseObject(http.StatusInternalServerError, Resp{Description: "a failure; the error body says which"})
	out["responses"] = responses
	return out
}

func paramObject(p Param) map[string]any {
	schema := p.Schema
	if schema == nil {
		schema = map[string]any{"type": "string"}
	}
	o := map[string]any{"name": p.Name, "in": p.In, "schema": schema}
	if p.Required {
		o["required"] = true
	}
	if p.Description != "" {
		o["description"] = p.Description
	}
	return o
}

func responseObject(status int, r Resp) map[string]any {
	desc := r.Description
	if desc == "" {
		desc = http.StatusText(status)
	}
	o := map[string]any{"description": desc}
	schema := r.Schema
	if status >= 400 {
		schema = Ref("Error")
	}
	if schema != nil {
		o["content"] = map[string]any{"application/json": map[string]any{"schema": schema}}
	}
	return o
}

// operationID makes an id from the method and path: GET /agents/{agent_id}/tools → getAgentsByAgentIdTools.
func operationID(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	for _, s := range strings.Split(strings.Trim(path, "/"), "/") {
		if strings.HasPrefix(s, "{") {
			b.WriteString("By")
			s = strings.Trim(s, "{}")
		}
		for _, w := range strings.FieldsFunc(s, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

func (rt *Router) registerBuiltins() {
	rt.Schema("Health", map[string]any{
		"type": "object", "required": []any{"status"},
		"properties": map[string]any{"status": map[string]any{"const": "ok"}},
	})
	rt.Handle(Route{
		Method: http.MethodGet, Path: "/healthz", Public: true,
		Op: Operation{ID: "getHealth", Summary: "Liveness", Tags: []string{"meta"},
			Responses: map[int]Resp{http.StatusOK: {Description: "the function answers", Schema: Ref("Health")}}},
		Handler: health,
	})
	rt.Handle(Route{
		Method: http.MethodGet, Path: "/openapi.json", Public: true,
		Op: Operation{ID: "getOpenAPI", Summary: "This API's OpenAPI 3.1 document", Tags: []string{"meta"},
			Responses: map[int]Resp{http.StatusOK: {Description: "the document", Schema: map[string]any{"type": "object"}}}},
		Handler: rt.serveOpenAPI,
	})
}

func health(context.Context, *Request) (*Response, error) {
	return OK(map[string]string{"status": "ok"}), nil
}

func (rt *Router) serveOpenAPI(context.Context, *Request) (*Response, error) {
	return OK(rt.OpenAPI()), nil
}
