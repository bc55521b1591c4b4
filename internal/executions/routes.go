// Package executions is the HTTP side of the tool-call workflow.
//
// It covers starting tool calls, reading executions and pending calls, answering and heartbeating
// function calls, Julep's PUT /executions/{id} (resume or cancel), and stored payloads. Register
// adds the routes to the api function's router; the domain logic is package workflow's.
package executions

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"sinew/internal/fault"
	"sinew/internal/httpapi"
	"sinew/internal/jsonv"
	"sinew/internal/julep/taskexec"
	"sinew/internal/store"
	"sinew/internal/workflow"
)

// Deps are the routes' dependencies.
type Deps struct {
	Workflow *workflow.Service // needs Store, SFN, ToolCallARN and AgentLoopARN
	// Liveness settles, as they are read, the records of executions that never started or that
	// Step Functions ended without their status change reaching settle (nil: none is checked).
	Liveness *workflow.Liveness
	// Tasks answers the executions of Julep tasks in Julep's shape (nil: as any other).
	Tasks *taskexec.Service
}

const tag = "executions"

// Register adds the routes to rt.
func Register(rt *httpapi.Router, d Deps) {
	h := &handlers{w: d.Workflow, live: d.Liveness, tasks: d.Tasks}
	registerSchemas(rt)
	rt.Handle(httpapi.Route{Method: http.MethodPost, Path: "/tool-calls", Handler: h.startToolCall, Op: httpapi.Operation{
		Summary: "Call a tool by name",
		Description: "Runs the tool: it is found among the task's tools (and, with inherit_tools, the agent's) or the agent's, and run through the executor of its type. " +
			"A server-side call (integration, api_call, system; an api_call bounded to at most 120 s) runs on the tool_call_express state machine and is answered 200 with the ended execution, its result in output, when it ends within 25 s; " +
			"otherwise, and for a function tool (which pauses until the call is answered), the answer is 202 with the execution to poll at GET /executions/{execution_id}. " +
			"Prefer: respond-async always answers 202 (on tool_call). With Idempotency-Key, a repeat answers the same execution, and the tool runs once.",
		Tags: []string{tag}, Params: []httpapi.Param{httpapi.IdempotencyParam(), preferParam},
		Request: httpapi.Ref("ToolCallRequest"),
		Responses: map[int]httpapi.Resp{200: {Description: "the call ended: its execution, with the result object in output (an error result: status failed)", Schema: httpapi.Ref("Execution")},
			202: {Description: "started: poll the execution", Schema: httpapi.Ref("ExecutionStarted")},
			400: {Description: "a broken rule"}, 413: {Description: "the call is over Step Functions' 256 KiB input limit"},
			503: {Description: "Step Functions was unavailable; try again, with the same Idempotency-Key so the call cannot start twice"}},
	}})
	rt.Handle(httpapi.Route{Method: http.MethodGet, Path: "/executions", Handler: h.listExecutions, Op: httpapi.Operation{
		Summary: "List executions", Description: "The caller's executions, newest first. pending_calls are given by GET /executions/{execution_id}.",
		Tags: []string{tag}, Params: httpapi.PageParams(),
		Responses: map[int]httpapi.Resp{200: {Description: "a page", Schema: httpapi.ListOf(httpapi.Ref("Execution"))}},
	}})
	rt.Handle(httpapi.Route{Method: http.MethodGet, Path: "/executions/{execution_id}", Handler: h.getExecution, Op: httpapi.Operation{
		Summary: "Get an execution", Description: "Its status and, while it waits, its pending function calls with their task tokens.",
		Tags:      []string{tag},
		Responses: map[int]httpapi.Resp{200: {Description: "the execution", Schema: httpapi.Ref("Execution")}, 404: {Description: "unknown or not yours"}},
	}})
	rt.Handle(httpapi.Route{Method: http.MethodPut, Path: "/executions/{execution_id}", Handler: h.updateExecution, Op: httpapi.Operation{
		Summary:     "Resume or cancel an execution (Julep's route)",
		Description: `{"status": "running", "input": X} answers the execution's one pending call with X (422 if it has none or several): a task's execution without one of its own answers the one its running step's child waits for (a function tool inherited from the agent), as POST /executions/{child}/calls/{call_id}/result would; {"status": "cancelled", "reason"?} stops it.`,
		Tags:        []string{tag}, Request: httpapi.Ref("UpdateExecutionRequest"),
		Responses: map[int]httpapi.Resp{200: {Description: "resumed: the answered call; cancelled: the execution"},
			404: {Description: "unknown or not yours"}, 409: {Description: "the call was already answered"}, 410: {Description: "the call expired"},
			422: {Description: "no single pending call, or the execution has ended"}},
	}})
	rt.Handle(httpapi.Route{Method: http.MethodPost, Path: "/executions/{execution_id}/calls/{call_id}/result", Handler: h.answer, Op: httpapi.Operation{
		Summary:     "Answer a pending function call",
		Description: `{"output": X} completes the call with X as the tool's result (SendTaskSuccess); {"error": {"type", "message"}} fails it, reported as Client.<type> (SendTaskFailure).`,
		Tags:        []string{tag}, Request: httpapi.Ref("CallAnswer"),
		Responses: map[int]httpapi.Resp{200: {Description: "answered", Schema: httpapi.Ref("PendingCall")},
			404: {Description: "unknown or not yours"}, 409: {Description: "already answered"}, 410: {Description: "the call expired"},
			503: {Description: "Step Functions was unavailable; the call can be answered again"}},
	}})
	rt.Handle(httpapi.Route{Method: http.MethodPost, Path: "/executions/{execution_id}/calls/{call_id}/heartbeat", Handler: h.heartbeat, Op: httpapi.Operation{
		Summary: "Heartbeat a pending function call", Description: "SendTaskHeartbeat: the client is still working on the call.",
		Tags: []string{tag},
		Responses: map[int]httpapi.Resp{204: {Description: "sent"}, 404: {Description: "unknown or not yours"},
			409: {Description: "already answered"}, 410: {Description: "the call expired"}},
	}})
	rt.Handle(httpapi.Route{Method: http.MethodGet, Path: "/calls", Handler: h.listCalls, Op: httpapi.Operation{
		Summary: "List function calls by status", Description: "The caller's function calls across executions, oldest first; ?status= defaults to pending.",
		Tags: []string{tag},
		Params: append(httpapi.PageParams(), httpapi.Param{Name: "status", In: "query", Description: "pending (default), answered, failed or expired",
			Schema: map[string]any{"type": "string", "enum": []any{"pending", "answered", "failed", "expired"}, "default": "pending"}}),
		Responses: map[int]httpapi.Resp{200: {Description: "a page", Schema: httpapi.ListOf(httpapi.Ref("PendingCall"))}},
	}})
	rt.Handle(httpapi.Route{Method: http.MethodGet, Path: "/payloads/{ref}", Handler: h.getPayload, Op: httpapi.Operation{
		Summary: "Get a stored value", Description: `A value that an answer gave as {"sinew:ref": ref, "bytes": N}.`,
		Tags:      []string{tag},
		Responses: map[int]httpapi.Resp{200: {Description: "the value", Schema: map[string]any{}}, 404: {Description: "unknown or not yours"}},
	}})
}

type handlers struct {
	w     *workflow.Service
	live  *workflow.Liveness
	tasks *taskexec.Service
}

func (h *handlers) startToolCall(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	key, err := r.IdempotencyKey()
	if err != nil {
		return nil, err
	}
	var req workflow.ToolCallRequest
	if err := r.Decode(&req); err != nil {
		return nil, err
	}
	async, err := respondAsync(r.Header("Prefer"))
	if err != nil {
		return nil, err
	}
	st, err := h.w.CallTool(ctx, r.DeveloperID, req, workflow.StartOptions{IdempotencyKey: key, Async: async})
	if err != nil {
		return nil, err
	}
	if x := st.Ended; x != nil {
		// A result stored by reference is answered as its value up to the inline limit, as GET
		// /executions/{execution_id} answers it.
		if x.Output, err = h.w.Store.InlineRefs(ctx, r.DeveloperID, x.Output, store.AnswerInlineLimit); err != nil {
			return nil, err
		}
		return httpapi.OK(x), nil
	}
	return httpapi.JSON(http.StatusAccepted, st), nil
}

// preferParam is RFC 7240's Prefer header as POST /tool-calls reads it.
var preferParam = httpapi.Param{Name: "Prefer", In: "header",
	Description: "respond-async: answer 202 with the execution to poll, never wait for the result (RFC 7240)",
	Schema:      map[string]any{"type": "string", "example": "respond-async"}}

// respondAsync reads a Prefer header (RFC 7240): comma-separated preferences, each a token with
// optional parameters; preferences it does not know are ignored, as the RFC asks.
func respondAsync(prefer string) (bool, error) {
	if len(prefer) > 1024 {
		return false, fault.Invalid("Prefer", "the Prefer header is %d bytes; at most 1024", len(prefer))
	}
	for _, p := range strings.Split(prefer, ",") {
		tok, _, _ := strings.Cut(p, ";")
		if strings.EqualFold(strings.TrimSpace(tok), "respond-async") {
			return true, nil
		}
	}
	return false, nil
}

func (h *handlers) listExecutions(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	p, err := r.Page()
	if err != nil {
		return nil, err
	}
	l, err := h.w.Store.ListExecutions(ctx, r.DeveloperID, store.Page{Limit: p.Limit, Cursor: p.Cursor})
	if err != nil {
		return nil, err
	}
	if err := h.live.CheckAll(ctx, r.DeveloperID, l.Items); err != nil {
		return nil, err
	}
	return httpapi.OK(list(l)), nil
}

func list[T any](l *store.List[T]) httpapi.List[T] {
	next := ""
	if l.NextCursor != nil {
		next = *l.NextCursor
	}
	return httpapi.NewList(l.Items, next)
}

func (h *handlers) getExecution(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	x, err := h.w.Store.GetExecution(ctx, r.DeveloperID, r.Param("execution_id"))
	if err != nil {
		return nil, err
	}
	if x.Workflow == workflow.Task && h.tasks != nil {
		return ok(h.tasks.Get(ctx, r.DeveloperID, x))
	}
	if x, err = h.live.Check(ctx, r.DeveloperID, x); err != nil {
		return nil, err
	}
	// A result stored by reference is answered as its value up to the inline limit (store.AnswerInlineLimit).
	if x.Output, err = h.w.Store.InlineRefs(ctx, r.DeveloperID, x.Output, store.AnswerInlineLimit); err != nil {
		return nil, err
	}
	return httpapi.OK(x), nil
}

func (h *handlers) updateExecution(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	var body map[string]any
	if err := r.Decode(&body); err != nil {
		return nil, err
	}
	id := r.Param("execution_id")
	switch body["status"] {
	case "running":
		if err := onlyKeys(body, "status", "input"); err != nil {
			return nil, err
		}
		return ok(h.resume(ctx, r.DeveloperID, id, body["input"]))
	case "cancelled":
		if err := onlyKeys(body, "status", "reason"); err != nil {
			return nil, err
		}
		reason, ok := body["reason"].(string)
		if !ok && body["reason"] != nil {
			return nil, fault.Invalid("reason", "reason must be a string")
		}
		x, err := h.w.Cancel(ctx, r.DeveloperID, id, reason)
		if err != nil {
			return nil, err
		}
		return httpapi.OK(x), nil
	}
	return nil, fault.Invalid("status", `status must be "running" (resume with input) or "cancelled"`)
}

func onlyKeys(body map[string]any, keys ...string) error {
	for k := range body {
		if !slices.Contains(keys, k) {
			return fault.Invalid(k, "unknown field %q; allowed here: %v", k, keys)
		}
	}
	return nil
}

func (h *handlers) answer(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	var body map[string]any
	if err := r.Decode(&body); err != nil {
		return nil, err
	}
	out, hasOut := body["output"]
	errV, hasErr := body["error"]
	if err := onlyKeys(body, "output", "error"); err != nil {
		return nil, err
	}
	var a workflow.Answer
	switch {
	case hasOut == hasErr:
		return nil, fault.Invalid("output", `give exactly one of "output" (the tool's result) and "error"`)
	case hasOut:
		a.Output = out
	default:
		e, ok := errV.(map[string]any)
		if !ok {
			return nil, fault.Invalid("error", `error must be an object {"type", "message"}`)
		}
		if err := onlyKeys(e, "type", "message"); err != nil {
			return nil, fault.Invalid("error."+fault.FieldOf(err), "%s", fault.Message(err))
		}
		typ, ok := e["type"].(string)
		if !ok || typ == "" {
			return nil, fault.Invalid("error.type", "error.type must be a non-empty string")
		}
		msg, ok := e["message"].(string)
		if !ok && e["message"] != nil {
			return nil, fault.Invalid("error.message", "error.message must be a string")
		}
		a = workflow.Answer{HasError: true, Type: typ, Message: msg}
	}
	c, err := h.w.AnswerCall(ctx, r.DeveloperID, r.Param("execution_id"), r.Param("call_id"), a)
	if err != nil {
		return nil, err
	}
	return httpapi.OK(c), nil
}

func (h *handlers) heartbeat(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	return nil, h.w.Heartbeat(ctx, r.DeveloperID, r.Param("execution_id"), r.Param("call_id"))
}

func (h *handlers) listCalls(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	p, err := r.Page()
	if err != nil {
		return nil, err
	}
	st := store.CallPending
	if s := r.Query().Get("status"); s != "" {
		st = store.CallStatus(s)
	}
	l, err := h.w.Store.ListCalls(ctx, r.DeveloperID, st, store.Page{Limit: p.Limit, Cursor: p.Cursor})
	if err != nil {
		return nil, err
	}
	// A pending call of an execution that ended without its status change reaching settle would
	// be listed for good: its execution is settled (which settles the call), and the page read again.
	if changed, err := h.live.CheckCalls(ctx, r.DeveloperID, l.Items); err != nil {
		return nil, err
	} else if changed {
		if l, err = h.w.Store.ListCalls(ctx, r.DeveloperID, st, store.Page{Limit: p.Limit, Cursor: p.Cursor}); err != nil {
			return nil, err
		}
	}
	return httpapi.OK(list(l)), nil
}

func (h *handlers) getPayload(ctx context.Context, r *httpapi.Request) (*httpapi.Response, error) {
	b, err := h.w.Store.GetPayload(ctx, r.DeveloperID, r.Param("ref"))
	if err != nil {
		return nil, err
	}
	v, err := jsonv.Decode(b)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "stored payload is not JSON")
	}
	return httpapi.OK(v), nil
}
