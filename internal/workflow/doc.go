// Package workflow is the domain logic of the tool_call workflow.
//
// StartToolCall (POST /tool-calls) finds the tool, starts the execution with the call prepared and
// records it; Prepare turns a request that names only the tool into a call; Settle records a
// failure's outcome, and SettleEvent brings an execution to its final state from Step Functions'
// "Execution Status Change" events; the resume logic answers pending calls for the HTTP routes. The
// executors that run the calls, and keep a call's claim and outcome on its execution's record, are
// package executor's. It knows nothing of Lambda or API Gateway: AWS services are reached through
// narrow ports (SFN).
//
// # Which machine
//
// A server-side call through POST /tool-calls (CallTool), whose bound fits in five minutes, runs
// on tool_call_express, Express, started with StartSyncExecution: the route answers its ended
// record (200) when it ends within the wait (DefaultSyncWait), else the execution to poll (202).
// Its definition is tool_call's, derived (deploy.ExpressToolCall): Dispatch invokes the executor
// request-response with record set, so the executor keeps the claim and outcome on the execution's
// record as it does with a token, and answers the result object. Function calls, calls bounded
// past ExpressMaxSeconds and those asked for with Prefer: respond-async run on tool_call. Express
// executions send no status change events: the route settles one that ended as a workflow
// failure itself (SettleEvent on its answer).
//
// # The path of a call
//
// statemachines/tool_call.asl.json (Standard) starts with Dispatch, one
// lambda:invoke.waitForTaskToken Task (JSONata) that is, on the common paths, the only state a call
// enters. POST /tool-calls gives the call prepared ({call, definition, context, wait, result}), and
// Dispatch's FunctionName is chosen from call.type: the function Lambda, which records the pending
// call with the token, or the executor of a server-side type, which runs the call and answers its
// own token (executor.Tokens: SendTaskSuccess with the result object, SendTaskFailure with the
// Sinew.* name Retry and Catch match). Whichever function it invokes, Dispatch sends one envelope
// (executor.Envelope): {call, tool, context, task_token, held}, the call's three null when there is
// only the request. Its TimeoutSeconds and
// HeartbeatSeconds come from wait for a function call (without heartbeat_seconds the heartbeat is
// the timeout and the Task's own timeout one second more, so the wait ends at timeout_seconds with
// States.Timeout); a server-side call is bounded by its executor's Lambda timeout.
//
// A request naming only the tool (a user's own state machine) has no call.type: Dispatch invokes
// prepare with the token, which answers it at once with Sinew.Prepare (SendTaskFailure, so the
// invocation itself succeeds), and Dispatch's Catch sends the execution to the Prepare state.
// Prepare records the execution, finds the tool (with a task, the task's tools first and, with
// inherit_tools, the agent's after them) and answers the call (Prepared), or, for a request at fault
// (an unknown tool, bad arguments), {error}, so that a caller's mistake is no Lambda error. The
// Prepared Choice then sends a server-side call back to Dispatch, which invokes its executor as it
// does POST /tool-calls' call; a function call to Function, the JSONPath Task that waits with the
// tool's timeout and places the client's answer in the result object itself; a request at fault to
// PrepareFailed, which fails the execution with its error. Four states, and every function is
// invoked by the state machine: no Lambda waits on another, which would hold two concurrency slots,
// and be billed twice, for one call. (Until v5, prepare invoked the executor synchronously from
// inside Dispatch and waited for its run; executions of those definitions that still reach it get
// their call handed on as an Event invocation, which prepare does not wait for.)
//
// The executor claims the call on the execution's record (POST /tool-calls wrote the claim for
// the first attempt with the record, so that attempt only renews it), runs it once, and records
// the outcome, the execution's success, there too (executor.CallRecords, package guard);
// Dispatch's output, the execution's, is the result object. A function call: executor.Function
// stores the pending call (a retry issues a new token and overwrites it) and publishes
// ToolCallPending, and the execution
// waits up to the tool's timeout_seconds for SendTaskSuccess / SendTaskFailure (or the HTTP route
// that wraps them). Dispatch has no Output, since JSONata holds numbers as doubles (2^53+1 would
// not survive): the execution ends with the client's answer as it came, and the SUCCEEDED event's
// SettleEvent puts it in the result object (the input's result less its output) and records it with
// the call (two updates, the call's first). On the bare path Function's JSONPath places the answer in the result
// object itself. A failure (a tool's permanent error, retries exhausted, a client's error, the
// wait's end) goes to Settle, which records it and ends SUCCEEDED with the error result; a bare
// start's failure in its first Dispatch carries no call, so Settle builds it again from the request
// (or fails the execution with the request's own error, as the PrepareFailed state does). The
// execution fails only on a request at fault or a fault of the workflow itself, and SettleEvent
// then brings the records to their final state.
// Requests naming the tool carry every key (null where unused): Prepare's JSONPath-era contract.
// The chat path reaches the same executors through the dispatcher instead, with its claims in
// idempotency records.
//
// Executions started on the previous definitions finish on this code (all kept in testdata):
// v1 (Prepare, a Task per type, Settle; TestUpgradeFromPreviousDefinition), whose envelope without
// a token or "record" keeps its claim in an idempotency record; v2 (Prepare's Next was Route, then
// Execute or Function; TestUpgradeFromLeanDefinition); v3 (Route, a Choice, then Execute or
// Function, or for a bare start Prepare and a JSONPath Dispatch; TestUpgradeFromRouteDefinition);
// v4 (this Dispatch, which sent prepare the bare request with the token beside it and an executor
// record and whole_result with it; TestUpgradeFromDispatchDefinition); and v5 (one envelope, whose
// Dispatch gave prepare the request in it with the token for prepare to hand the call on, a
// function call going Prepare, Function after Sinew.WaitForClient;
// TestUpgradeFromOneEnvelopeDefinition): Prepare takes the bare request, with a token hands the
// call on (an Event invocation) or answers Sinew.WaitForClient, and without one answers the
// envelope and fails on a request at fault; Settle keeps its entry point, an envelope
// without a task token is answered as the Task's result, record without one keeps the claim on the
// execution's record, a token with record but not whole_result is answered with the bare output,
// and the status-change event takes a result object for the call as it is.
//
// # What one call costs
//
// Measured by TestRequestBudget (go test -run TestRequestBudget -v ./internal/workflow) on
// DynamoDB Local with a request counter in front of the client, from the start to the recorded
// outcome, the status-change event included:
//
//	through POST /tool-calls   transitions   Lambdas inside   DynamoDB requests
//	integration, api_call      1: Dispatch   1: the executor  4: BatchGetItem 2 (the route finds the tool; the
//	                                                            merge), UpdateItem 2 (the route's record with the
//	                                                            claim; the executor's outcome)
//	system                     1             1                the same, + the operation's own
//	function (answered         1: Dispatch   1: function      7: BatchGetItem 1, UpdateItem 1 (the route's record),
//	over HTTP)                                                   UpdateItem 1 + PutItem 1 (awaiting_input, then the
//	                                                            pending call), GetItem 1 (the answer reads the
//	                                                            call's token), UpdateItem 2 (the event: the call,
//	                                                            then the outcome)
//
// A function call's writes are plain ones, not transactions: DynamoDB bills a transaction's every
// item (and, as DynamoDB Local counts it, index entry) twice, so the two items in two requests cost
// 13 write units where two transactions cost 21. Their order keeps a crash between them safe: the
// execution is marked before its call is recorded (a call never waits under an ended execution
// unnoticed: the end's status change expires it), and the call is answered before the execution is
// (an execution left open is in the open index for the event's retry and the sweep).
//
// A bare StartExecution naming a server-side tool runs Dispatch, Prepare, Prepared and Dispatch (4
// transitions, 3 Lambdas one after another: prepare routing, prepare, the executor) and makes 5
// requests (Prepare's find and record; the executor's claim, merge and outcome; 4 for system, which
// merges nothing); naming a function tool it runs Dispatch, Prepare, Prepared and Function (4
// transitions, 3 Lambdas, 6 requests: the find, the record, the pending call's two and the event's
// two). The SUCCEEDED event of a server-side
// call makes no request. A repeat of an Idempotency-Key costs the tool's BatchGetItem and, for an
// ended execution, the record's Query. Each Retry attempt is one more transition (Step Functions
// bills it) and, for executors, one more claim.
package workflow
