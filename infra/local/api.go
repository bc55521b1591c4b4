package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"sinew/internal/lambdaboundary"
)

type (
	httpapiEvent    = events.APIGatewayV2HTTPRequest
	httpapiResponse = events.APIGatewayV2HTTPResponse
)

// serveAPI delivers an HTTP API event to the api function through the registry, as API Gateway
// invokes the deployed function.
func serveAPI(ctx context.Context, fns *functions, ev httpapiEvent) (httpapiResponse, error) {
	// As the stack's routes do: chat has a Lambda of its own, everything else goes to api.
	name := "api"
	if isChat(ev.RequestContext.HTTP.Method, ev.RawPath) {
		name = "chat"
	}
	fns.mu.RLock()
	inv := fns.m[name]
	fns.mu.RUnlock()
	if inv == nil {
		return httpapiResponse{StatusCode: 503, Body: `{"message":"the ` + name + ` function has no handler"}`}, nil
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		return httpapiResponse{}, err
	}
	if len(payload) > lambdaboundary.MaxEvent {
		// As API Gateway answers an event over Lambda's 6 MB limit: the function never runs.
		return httpapiResponse{StatusCode: 413, Headers: map[string]string{"content-type": "application/json"},
			Body: fmt.Sprintf(`{"error":{"type":"Sinew.TooLarge","message":"the request is %d bytes as a Lambda event; at most %d fit"}}`, len(payload), lambdaboundary.MaxEvent)}, nil
	}
	out, ferr, err := inv.Invoke(ctx, payload)
	if err != nil {
		return httpapiResponse{}, err
	}
	if ferr != nil {
		// API Gateway answers a failed integration with 500 and this body.
		return httpapiResponse{StatusCode: 500, Body: `{"message":"Internal Server Error"}`}, nil
	}
	var resp httpapiResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		return httpapiResponse{}, fmt.Errorf("the api function's answer is not an HTTP API response: %w", err)
	}
	return resp, nil
}

// isChat reports whether a request is POST /sessions/{session_id}/chat.
func isChat(method, path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	return method == "POST" && len(parts) == 3 && parts[0] == "sessions" && parts[2] == "chat"
}
