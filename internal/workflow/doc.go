// Package workflow is the domain logic of the tool_call workflow: StartToolCall (POST
// /tool-calls) finds the tool, starts the execution with the call prepared and records it;
// Prepare turns a request that names only the tool into a call envelope; CallRecords keeps a
// call's claim and outcome on its execution's record for the executors; the function executor
// records a pending call and announces it; Settle records a failure's outcome, and SettleEvent
// brings an execution to its final state from Step Functions' "Execution Status Change" events;
// the resume logic answers pending calls for the HTTP routes. It knows nothing of Lambda or API
// Gateway: AWS services are reached through narrow ports (SFN, Events).
//
// # The path of a call
//
// statemachines/tool_call.asl.json (Standard) starts with Route, a Choice on the call's type.
// POST /tool-calls gives the call prepared ({call, definition, context, wait, result}), so Route
// sends it straight to its Task: Execute, whose FunctionName is chosen from the type (JSONata),
// for integration, api_call and system; Function (or FunctionWithHeartbeat) for a function call.
// A request naming only the tool (a user's own state machine) goes to Prepare first, which records
// the execution, finds the tool (with a task, the task's tools first and, with inherit_tools, the
// agent's after them) and builds the envelope; then Dispatch, one lambda:invoke.waitForTaskToken
// Task for every type, invokes the function its Output chose: the function Lambda, as on the
// Function path, or the executor of a server-side type, which runs the call as Execute would and
// answers its own token (handler.Tokens: SendTaskSuccess with the output, SendTaskFailure with the
// Sinew.* name Retry and Catch match).
//
// The executor claims the call on the execution's record (POST /tool-calls wrote the claim for
// the first attempt with the record, so that attempt only renews it), runs it once, and records
// the outcome, the execution's success, there too (CallRecords, dispatch.Guard); the Task's output
// is the result object. A function call's Task uses lambda:invoke.waitForTaskToken: RecordPending
// stores the pending call (a retry issues a new token and overwrites it) and publishes
// ToolCallPending, and the execution waits up to the tool's timeout_seconds for SendTaskSuccess /
// SendTaskFailure (or the HTTP route that wraps them); the answer is placed untouched in the
// result object (numbers stay exact), and the SUCCEEDED event's SettleEvent records it with the
// call in one transaction. A failure (a permanent error, retries exhausted, a client's error, the
// wait's end) goes to Settle, which records it and ends SUCCEEDED with the error result; the
// execution fails only on a fault of the workflow itself, and SettleEvent then brings the records
// to their final state. Requests naming the tool carry every key (null where unused): Prepare's
// JSONPath-era contract. The chat path reaches the same executors through the dispatcher
// instead, with its claims in idempotency records.
//
// Executions started on the previous definitions finish on this code (both kept in testdata):
// v1 (Prepare, a Task per type, Settle; TestUpgradeFromPreviousDefinition), whose envelope without
// "record" keeps its claim in an idempotency record, and v2 (Prepare's Next was Route, then Execute
// or Function; TestUpgradeFromLeanDefinition): Prepare and Settle keep their entry points, and an
// envelope without a task token is answered as the Task's result.
//
// # What one call costs
//
// Measured by TestRequestBudget (go test -run TestRequestBudget -v ./internal/workflow) on
// DynamoDB Local with a request counter in front of the client, from the start to the recorded
// outcome, the status-change event included:
//
//	through POST /tool-calls   transitions   Lambdas inside   DynamoDB requests
//	integration, api_call      2: Route,     1: the executor  4: BatchGetItem 2 (the route finds the tool; the
//	                           Execute                           merge), UpdateItem 2 (the route's record with the
//	                                                             claim; the executor's outcome)
//	system                     2             1                the same, + the operation's own
//	function (answered         2: Route,     1: function      5: BatchGetItem 1, UpdateItem 1 (the route's record),
//	over HTTP)                 Function                          TransactWriteItems 1 (pending call + awaiting_input),
//	                                                             GetItem 1 (the answer reads the call's token),
//	                                                             TransactWriteItems 1 (the event: outcome + call)
//
// A bare StartExecution naming the tool runs Route, Prepare and Dispatch (3 transitions, 2 Lambdas)
// and makes 5 requests (Prepare's record and find, the executor's claim, merge and outcome). The
// SUCCEEDED event of a server-side call makes no request. A repeat of an Idempotency-Key costs the
// tool's BatchGetItem and, for an ended execution, the record's Query. Each Retry attempt is one
// more transition (Step Functions bills it) and, for executors, one more claim.
package workflow
