package console_test

import (
	"net/http"
	"testing"
)

// The console's JSON routes answer bad input as the API does: a 4xx with sinew's error body.
func TestConsoleRoutesRefuseBadInput(t *testing.T) {
	h := local(t)
	const devA, devB = "routes-a", "routes-b"
	agent := h.agent(t, devA, nil)
	id := h.toolCall(t, devA, agent, "echo", map[string]any{"text": "x"})
	h.waitExecution(t, devA, id, "succeeded")
	for _, tc := range []struct {
		name, dev, path string
		status          int
		typ, field      string
	}{
		{"no token", "", "/console/api/machines", 401, "Sinew.Unauthorized", ""},
		{"unknown status", devA, "/console/api/executions?status=BOGUS", 400, "Sinew.InvalidInput", "status"},
		{"limit too large", devA, "/console/api/executions?limit=1000", 400, "Sinew.InvalidInput", "limit"},
		{"limit not a number", devA, "/console/api/executions?limit=ten", 400, "Sinew.InvalidInput", "limit"},
		{"unknown query parameter", devA, "/console/api/machines?x=1", 400, "Sinew.InvalidInput", "x"},
		{"unknown machine filter", devA, "/console/api/executions?machine=nope", 404, "Sinew.NotFound", ""},
		{"unknown machine", devA, "/console/api/machines/nope", 404, "Sinew.NotFound", ""},
		{"unknown execution", devA, "/console/api/executions/tool_call/nope", 404, "Sinew.NotFound", ""},
		{"another developer's execution", devB, "/console/api/executions/tool_call/" + id, 404, "Sinew.NotFound", ""},
		{"no such route", devA, "/console/api/nothing", 404, "Sinew.NotFound", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := h.call(t, tc.dev, http.MethodGet, tc.path, nil)
			if status != tc.status {
				t.Fatalf("%s: %d %v, want %d", tc.path, status, body, tc.status)
			}
			if tc.typ == "" {
				return
			}
			e, _ := body["error"].(map[string]any)
			if e["type"] != tc.typ || e["message"] == "" || (tc.field != "" && e["field"] != tc.field) {
				t.Errorf("%s: error %v, want type %s field %q and a message", tc.path, e, tc.typ, tc.field)
			}
		})
	}
	// A call answered in the request ran on tool_call_express, of which Step Functions keeps
	// nothing: the console shows it from sinew's record.
	status, x := h.call(t, devA, http.MethodPost, "/tool-calls", map[string]any{"agent_id": agent, "tool": "echo", "arguments": map[string]any{"text": "now"}})
	if status != http.StatusOK {
		t.Fatalf("POST /tool-calls: %d %v, want 200 with the result", status, x)
	}
	status, view := h.call(t, devA, http.MethodGet, "/console/api/executions/tool_call/"+x["execution_id"].(string), nil)
	if status != http.StatusOK || view["status"] != "UNKNOWN" || view["outcome"] != "succeeded" || view["record"] == nil {
		t.Errorf("the console's view of a call on tool_call_express: %d %v, want its record", status, view)
	}
	if logs, _ := view["logs"].([]any); len(logs) != 1 || logs[0].(map[string]any)["status"] != "SUCCEEDED" {
		t.Errorf("the console's view of a call on tool_call_express: logs %v, want its one end line", view["logs"])
	}
	if status, view := h.call(t, devB, http.MethodGet, "/console/api/executions/tool_call/"+x["execution_id"].(string), nil); status != http.StatusNotFound {
		t.Errorf("another developer's view of it: %d %v, want 404", status, view)
	}
	status, _ = h.call(t, devA, http.MethodPost, "/console/api/machines", map[string]any{})
	if status != http.StatusMethodNotAllowed {
		t.Errorf("POST /console/api/machines: %d, want 405", status)
	}
	// A page of another site reaching local mode through a name of its own is refused.
	req, _ := http.NewRequest(http.MethodGet, h.Endpoints["http"]+"/console/", nil)
	req.Host = "attacker.example:80"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("the console under another host name: %d, want 403", resp.StatusCode)
	}
}
