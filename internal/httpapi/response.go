package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"syscall"

	"github.com/aws/aws-lambda-go/events"

	"sinew/internal/fault"
)

// Response is a handler's answer: Body is marshalled as JSON; a nil Body has no content.
type Response struct {
	Status  int
	Body    any
	Headers map[string]string
}

// JSON answers status with v as the JSON body.
func JSON(status int, v any) *Response { return &Response{Status: status, Body: v} }

// OK answers 200 with v.
func OK(v any) *Response { return JSON(http.StatusOK, v) }

// NoContent answers 204.
func NoContent() *Response { return &Response{Status: http.StatusNoContent} }

// Error types of the HTTP layer's own failures. A wrong method has no fault Kind: it never leaves
// the HTTP layer.
const (
	TypeUnauthorized     = string(fault.Unauthorized)
	TypeMethodNotAllowed = "Sinew.MethodNotAllowed"
)

// ErrorBody is the error answer: {"error": {"type", "message", "field"?}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the inside of ErrorBody. Type is the fault Kind (Sinew.NotFound, ...).
type ErrorDetail struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

var errorSchema = map[string]any{
	"type":     "object",
	"required": []any{"error"},
	"properties": map[string]any{
		"error": map[string]any{
			"type":     "object",
			"required": []any{"type", "message"},
			"properties": map[string]any{
				"type":    map[string]any{"type": "string", "description": "the error's kind, like Sinew.NotFound"},
				"message": map[string]any{"type": "string", "description": "what went wrong and what to do about it"},
				"field":   map[string]any{"type": "string", "description": "the field at fault, when one is"},
			},
		},
	},
}

// StatusOf is the HTTP status of a fault Kind.
func StatusOf(k fault.Kind) int {
	switch k {
	case fault.InvalidInput:
		return http.StatusBadRequest
	case fault.Unauthorized:
		return http.StatusUnauthorized
	case fault.Forbidden:
		return http.StatusForbidden
	case fault.NotFound:
		return http.StatusNotFound
	case fault.Conflict:
		return http.StatusConflict
	case fault.Gone:
		return http.StatusGone
	case fault.TooLarge:
		return http.StatusRequestEntityTooLarge
	case fault.Unprocessable:
		return http.StatusUnprocessableEntity
	case fault.Transient:
		return http.StatusServiceUnavailable
	case fault.Timeout:
		return http.StatusGatewayTimeout
	case fault.Provider:
		// A provider's permanent refusal, reached through sinew: the upstream failed, not the request.
		return http.StatusBadGateway
	}
	return http.StatusInternalServerError
}

// httpError is a failure of the HTTP layer itself, with its own status, type and headers.
type httpError struct {
	status  int
	typ     string
	msg     string
	headers map[string]string
}

func (e *httpError) Error() string { return e.msg }

// ErrorResponse is the answer for err: the status of its Kind and the error body. An Internal error
// (and any untyped one) gets a generic message: its text may carry internals.
func ErrorResponse(err error) (status int, body ErrorBody, headers map[string]string) {
	var he *httpError
	if errors.As(err, &he) {
		return he.status, ErrorBody{ErrorDetail{Type: he.typ, Message: he.msg}}, he.headers
	}
	kind := fault.KindOf(err)
	if kind != fault.Transient && storageFull(err) {
		// Nothing was written, and a retry may find room: a 503 to retry, not a 500.
		err = fault.Wrap(fault.Transient, err, "sinew's storage is full; try again later")
		kind = fault.Transient
	}
	status = StatusOf(kind)
	d := ErrorDetail{Type: string(kind), Message: fault.Message(err), Field: fault.FieldOf(err)}
	if status == http.StatusInternalServerError {
		d = ErrorDetail{Type: string(fault.Internal), Message: "internal error"}
	}
	switch kind {
	case fault.Transient:
		headers = map[string]string{"retry-after": "1"}
	case fault.Unauthorized:
		headers = map[string]string{"www-authenticate": "Bearer"}
	}
	return status, ErrorBody{d}, headers
}

// storageFull reports an error of a disk or quota that is full, however it was wrapped.
func storageFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// render turns a handler's outcome into the API Gateway answer.
func (rt *Router) render(ctx context.Context, req *Request, resp *Response, err error) events.APIGatewayV2HTTPResponse {
	if err == nil && resp == nil {
		resp = NoContent()
	}
	var extra map[string]string
	if err != nil {
		status, body, headers := ErrorResponse(err)
		resp, extra = &Response{Status: status, Body: body}, headers
	}
	out := events.APIGatewayV2HTTPResponse{StatusCode: resp.Status, Headers: map[string]string{}}
	if out.StatusCode == 0 {
		out.StatusCode = http.StatusOK
	}
	for k, v := range resp.Headers {
		out.Headers[k] = v
	}
	for k, v := range extra {
		out.Headers[k] = v
	}
	if resp.Body != nil {
		b, merr := json.Marshal(resp.Body)
		if merr != nil {
			rt.opts.Logger.ErrorContext(ctx, "answer does not marshal", "route", req.Route, "error", merr.Error())
			_, body, _ := ErrorResponse(merr)
			b, _ = json.Marshal(body)
			out.StatusCode = http.StatusInternalServerError
		}
		out.Headers["content-type"] = "application/json"
		out.Body = string(b)
	}
	return out
}
