// Package executor runs tool calls.
//
// It holds one adapter per server-side tool type (Integration, APICall, System) behind the Executor
// interface and one Lambda handler (Handler), and the function executor (Function), which records a
// client's call and announces it instead of running it.
//
// Every executor takes the same Envelope ({call, tool, context}, with the task token and the
// claim's state when tool_call's Dispatch sends it), runs a call once per (developer, call id)
// (package guard; on a tool_call execution's own record, CallRecords), and answers either the
// result object or, given a task token, the token itself (Tokens). The integration and api_call
// adapters share Runner: the merge's sources taken from the call's context when its preparation
// read them and they hold no sealed value, else read in the merge's one BatchGetItem; setup opened
// only inside the run, every value it learns redacted from logs and from the error it fails with, a
// large output stored by reference.
package executor
