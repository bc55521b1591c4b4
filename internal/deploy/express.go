package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// ToolCallExpress is the Express twin of tool_call: the server-side calls that fit in five minutes
// run on it, started synchronously, so POST /tool-calls answers with the result. Its definition is
// derived from tool_call's (ExpressToolCall), never written by hand: the two share their states.
const ToolCallExpress = "tool_call_express"

// ExpressFile is where ExpressToolCall's output is kept, beside the definition it is derived from
// (the CDK and local mode read definitions from files).
const ExpressFile = "statemachines/tool_call_express.asl.json"

const expressComment = "sinew tool_call_express: generated from tool_call.asl.json by deploy.ExpressToolCall (do not edit). " +
	"The same states as tool_call, for a server-side call (integration, api_call, system) that fits in an Express execution's five minutes, started synchronously by POST /tool-calls so the caller gets the result in the same request. " +
	"Express workflows only request-response: Dispatch invokes the executor and takes its answer (the result object), the executor keeping the call's claim and outcome on the execution's record as with a token. " +
	"It starts at Prepared, so a request naming only the tool goes to Prepare first; a function call, which waits for its client up to a year, cannot run here: Function records it failed through Settle."

// ExpressToolCall derives tool_call_express's definition from tool_call's: Dispatch invokes its
// function request-response (no token, no heartbeat) with record set, so the executor keeps the
// claim on the execution's record and answers the result object; the execution starts at
// Prepared, whose default is Prepare; Function, which would wait for a token, becomes a Pass to
// Settle with Sinew.InvalidInput. Every other state is tool_call's own.
func ExpressToolCall(standard []byte) ([]byte, error) {
	var def map[string]any
	dec := json.NewDecoder(bytes.NewReader(standard))
	dec.UseNumber()
	if err := dec.Decode(&def); err != nil {
		return nil, fmt.Errorf("tool_call's definition: %w", err)
	}
	states, _ := def["States"].(map[string]any)
	dispatch, _ := states["Dispatch"].(map[string]any)
	prepared, _ := states["Prepared"].(map[string]any)
	if dispatch == nil || prepared == nil || states["Function"] == nil || states["Prepare"] == nil || states["Settle"] == nil {
		return nil, fmt.Errorf("tool_call's definition lacks one of Dispatch, Prepare, Prepared, Function, Settle")
	}
	if err := expressDispatch(dispatch); err != nil {
		return nil, err
	}
	prepared["Choices"] = append(prepared["Choices"].([]any), map[string]any{
		"Condition": "{% $exists($states.input.error) %}", "Next": "PrepareFailed"})
	prepared["Default"] = "Prepare"
	prepared["Comment"] = "The execution's start and where Prepare's answer goes: a server-side call to Dispatch, a request naming only the tool to Prepare, a function call to Function (which cannot wait here), a request Prepare could not make a call of to PrepareFailed."
	states["Function"] = map[string]any{
		"Type": "Pass", "QueryLanguage": "JSONata",
		"Comment": "A function call waits for its client, up to a year, which an Express execution cannot: it is settled failed.",
		// As a Lambda function error is caught ({Error, Cause: {errorType, errorMessage}}), so
		// Settle keeps its name rather than taking it for the client's.
		"Output": "{% $merge([$states.input, {'error': {'Error': 'Sinew.InvalidInput', 'Cause': $string({'errorType': 'Sinew.InvalidInput', " +
			"'errorMessage': 'a function tool waits for its client, which only the tool_call (Standard) state machine can: start it there'})}}]) %}",
		"Next": "Settle",
	}
	def["Comment"] = expressComment
	def["StartAt"] = "Prepared"
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(def); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// expressDispatch makes Dispatch request-response: a server-side executor's answer is the result
// object itself.
func expressDispatch(d map[string]any) error {
	if d["Resource"] != "arn:aws:states:::lambda:invoke.waitForTaskToken" {
		return fmt.Errorf("tool_call's Dispatch waits for a token no longer (%v): ExpressToolCall needs updating", d["Resource"])
	}
	d["Resource"] = "arn:aws:states:::lambda:invoke"
	args, _ := d["Arguments"].(map[string]any)
	payload, _ := args["Payload"].(map[string]any)
	fn, _ := args["FunctionName"].(string)
	const function = "'function': '${FunctionFunctionArn}', "
	if payload == nil || !strings.Contains(fn, function) || payload["task_token"] == nil || payload["held"] == nil {
		return fmt.Errorf("tool_call's Dispatch has changed shape (FunctionName, Payload.task_token, Payload.held): ExpressToolCall needs updating")
	}
	args["FunctionName"] = strings.Replace(fn, function, "", 1)
	delete(payload, "task_token")
	payload["record"] = true
	// An Express execution is never redriven; its context has no RedriveCount to read.
	payload["held"] = "{% $states.input.held = true and $states.context.State.RetryCount = 0 %}"
	delete(d, "TimeoutSeconds")
	delete(d, "HeartbeatSeconds")
	d["Output"] = "{% $states.result.Payload %}"
	d["Comment"] = "The call's state: invokes the executor of the call's type, which keeps the call's claim and outcome on the execution's record (record) and answers the result object, the Task's output. held: the call's name is new and this is its first attempt, so the executor writes no claim and its outcome makes the record (POST /tool-calls records the claim only if its wait runs out). Bounded by the executor's Lambda timeout and the execution's five minutes."
	return nil
}
