package mcpserver

import (
	"context"
	"net"
	"net/http"
	"strings"

	"sinew/internal/httpapi"
)

// MetadataPath is where OAuth 2.0 protected-resource metadata (RFC 9728) is found: MCP clients
// look there, for the resource's own path below it first, when a 401 names no metadata URL.
const MetadataPath = "/.well-known/oauth-protected-resource"

// registerMetadata serves the metadata for the API as a whole and for each MCP route's path.
func registerMetadata(rt *httpapi.Router, issuer string) {
	h := func(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
		return httpapi.OK(metadata(r, issuer)), nil
	}
	for _, p := range []string{"", "/agents/{agent_id}/mcp", "/sessions/{session_id}/mcp"} {
		rt.Handle(httpapi.Route{Method: http.MethodGet, Path: MetadataPath + p, Public: true, Handler: h, Op: httpapi.Operation{
			Summary:     "OAuth protected-resource metadata (RFC 9728)",
			Description: "What protects the API, for MCP clients: a bearer token in the Authorization header, from the issuer named when one is configured (SINEW_JWT_ISSUER).",
			Tags:        []string{tag},
			Responses:   map[int]httpapi.Resp{200: {Description: "the metadata", Schema: map[string]any{"type": "object"}}},
		}})
	}
}

// metadata is the document for the resource the request's path names below MetadataPath.
func metadata(r *httpapi.Request, issuer string) map[string]any {
	m := map[string]any{
		"resource":                 baseURL(r) + strings.TrimPrefix(r.Path, MetadataPath),
		"resource_name":            "sinew",
		"bearer_methods_supported": []string{"header"},
	}
	if issuer != "" {
		m["authorization_servers"] = []string{issuer}
	}
	return m
}

// baseURL is the scheme and host the caller reached: https behind API Gateway, http on loopback
// (local mode), as X-Forwarded-Proto says when it is set.
func baseURL(r *httpapi.Request) string {
	host := r.Header("Host")
	if host == "" {
		host = r.Event.RequestContext.DomainName
	}
	scheme := r.Header("X-Forwarded-Proto")
	if scheme == "" {
		scheme = "https"
		h, _, err := net.SplitHostPort(host)
		if err != nil {
			h = host
		}
		if ip := net.ParseIP(strings.Trim(h, "[]")); h == "localhost" || (ip != nil && ip.IsLoopback()) {
			scheme = "http"
		}
	}
	return scheme + "://" + host
}
