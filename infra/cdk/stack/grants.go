package stack

import "sinew/internal/store"

// tableAccess is what one function does with the table: the DynamoDB actions its code calls
// (a transaction's items count as the item actions they hold, which is how DynamoDB authorizes
// TransactWriteItems) and whether it queries the index. The abstract permissions of internal/deploy
// say which kinds of items a function touches; DynamoDB's IAM cannot tell item kinds apart, so the
// grant is these actions on the table. TestGrantsMatchCode derives the same from the code and fails
// on any difference, both ways.
type tableAccess struct {
	actions []string
	indexes []string // Query on these: store.GSI1 lists a developer's executions and calls, store.GSI2 the open records
}

// The actions each function's code calls, as TestGrantsMatchCode derives them (a transaction's
// items counted as their item actions); each comment says what the code does with them.
var tableAccessOf = map[string]tableAccess{
	// Every resource route (reads, writes, cascading deletes with ConditionChecks on the owner),
	// executions and calls, listed through the index.
	"api": {actions: []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:ConditionCheckItem",
		"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"}, indexes: []string{store.GSI1}},
	// Claims the turn on the session's item, reads what the turn needs by key in one BatchGetItem
	// (agent, flags, hand-off mark, Idempotency-Key record) and the tools and history by Query,
	// writes the turn's messages once, records an execution's status and stores large payloads. It
	// merges no setup: the executors do.
	"chat": {actions: []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:ConditionCheckItem",
		"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"}},
	// Finds the call's tool in one BatchGetItem and records the execution's status (its Event
	// invocations of the executors, for earlier definitions' executions, are granted on the
	// functions, its answer to Dispatch's token on tool_call).
	"prepare": {actions: []string{"dynamodb:BatchGetItem", "dynamodb:UpdateItem"}},
	// Marks the execution awaiting_input and puts the pending call (two plain writes).
	"function": {actions: []string{"dynamodb:PutItem", "dynamodb:UpdateItem"}},
	// The executors: the merge's BatchGetItem (unless the call's context carries what its
	// preparation read), the call's claim (on its execution's record, or an idempotency record for
	// the chat path), the record's output when a repeat finds the call done, and a large output
	// stored as a payload.
	"integration": {actions: executorActions},
	"apicall":     {actions: executorActions},
	// The system tools are the resource routes run as a tool; it lists nothing through the index.
	"system": {actions: []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:ConditionCheckItem",
		"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"}},
	// One step of the agent loop: reads the agent and its tools, appends the turn's messages,
	// claims the step, stores payloads and records the execution's status. It deletes nothing.
	"model": {actions: []string{"dynamodb:GetItem", "dynamodb:Query", "dynamodb:ConditionCheckItem",
		"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:BatchWriteItem"}},
	// Settles calls and executions (a success with its call in two updates), lists
	// an execution's calls, stores its output as a payload, and finds the tool again (one
	// BatchGetItem) to build the call of a failed request that named only the tool; on a schedule,
	// sweeps the open records through GSI2.
	"settle": {actions: []string{"dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:BatchWriteItem"},
		indexes: []string{store.GSI2}},
}

// executorActions are the integration and apicall executors': they read setup only in the merge's
// BatchGetItem, read items by key, and never query or delete.
var executorActions = []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:BatchWriteItem"}

// writes reports whether actions change items, so need the table key's write side through DynamoDB.
func writes(actions []string) bool {
	for _, a := range actions {
		switch a {
		case "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem":
			return true
		}
	}
	return false
}
