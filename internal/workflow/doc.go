// Package workflow is the domain logic of the tool_call workflow: Prepare turns a
// request into a call envelope and records the execution; the function executor records a pending
// call and announces it; Settle brings the execution record and its calls to their final state,
// from the state machine's outcome or from Step Functions' "Execution Status Change" events; and the
// resume logic answers pending calls for the HTTP routes (claim, SendTask*, settle). It knows
// nothing of Lambda or API Gateway: AWS services are reached through narrow ports (SFN, Events).
//
// # The path of a call
//
// statemachines/tool_call.asl.json (Standard) runs Prepare (records the execution from
// $$.Execution.Name, finds the tool by name: with a task, the task's tools first and, with
// inherit_tools, the agent's after them; builds the envelope), a Choice on the call's type, one Task
// per type with its own Retry and Catch, and Settle. A function call's Task uses
// lambda:invoke.waitForTaskToken: RecordPending stores the pending call (a retry issues a new token
// and overwrites it) and publishes a ToolCallPending event, and the execution waits up to the tool's
// timeout_seconds for SendTaskSuccess / SendTaskFailure (or the HTTP route that wraps them). The
// execution ends SUCCEEDED with the result, or with the error result when the tool failed; it fails
// only on a fault of the workflow itself, and SettleEvent then brings the records to their final
// state. Inputs carry every key (null where unused): under AWS's JSONPath rules a missing key is a
// States.Runtime failure. The chat path reaches the same executors through the
// dispatcher instead of the state machine.
//
// # What one call costs
//
// Measured by TestRequestBudget (go test -run TestRequestBudget -v ./internal/workflow), per
// tool_call execution, on DynamoDB Local with a request counter in front of the client:
//
//	type         state transitions                                   DynamoDB requests
//	integration  4: Prepare, RouteByType, Integration, Settle       7: BatchGetItem 2 (find the tool; the merge),
//	api_call     4: Prepare, RouteByType, ApiCall, Settle              PutItem 2 (call claim, call result),
//	                                                                   GetItem 1 (read before the result's write),
//	                                                                   UpdateItem 2 (execution recorded, final status)
//	function     5: Prepare, RouteByType, FunctionWaitMode,          5: BatchGetItem 1, UpdateItem 1 (execution recorded),
//	                Function, Settle                                   TransactWriteItems 1 (pending call + awaiting_input),
//	                                                                   UpdateItem 2 (call settled, final status)
//	system       4: Prepare, RouteByType, System, Settle             3 + the system handler's own
//
// Started by POST /tool-calls rather than StartExecution, a call costs 1 PutItem more: the route
// records the execution before it starts it, so GET finds it at once, and Prepare's write (still
// one request) then only marks that the execution did start (TestPostToolCallsRequests). A
// repeat of an Idempotency-Key costs 1 PutItem (a failed condition that answers the record).
// Answering a function call over HTTP adds 2 UpdateItems (claim, settle the claim); PUT
// /executions/{id} adds the Query that finds the pending call. Step Functions' status-change event
// then costs the settle Lambda 1 UpdateItem (a failed condition) for a SUCCEEDED execution, and
// 1 UpdateItem, 1 Query and 1 UpdateItem per call still pending for one stopped, timed out or
// failed. BenchmarkToolCall measures the same counts (7 per integration call, 7 per function call
// answered over HTTP). Each Retry attempt is one more
// transition (Step Functions bills it) and, for executors, the call's record read again.
package workflow
