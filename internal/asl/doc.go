// Package asl is sinew's embedded Step Functions engine: it parses and validates Amazon States
// Language definitions as CreateStateMachine does, and runs executions the way AWS does, down to
// the history events (types, detail shapes, ids and previousEventId links) recorded from real AWS
// executions (internal/asl/conformance replays them from its testdata/localstack-sfn).
//
// Layout:
//
//	definition.go, choice.go, template.go, jsonata.go  the definition model: Parse, validation with
//	                                                   AWS's diagnostics, compiled paths/templates
//	paths.go                                           the seam onto internal/asl/jsonpath and intrinsic
//	engine.go                                          Engine, Execution, Start/Stop/Describe/History
//	interp.go, flow.go                                 the interpreter: states, data flow, Retry/Catch,
//	                                                   Parallel and inline Map
//	maprun.go                                          distributed Map: a Map Run of child executions
//	                                                   (inline items, ItemBatcher; no S3)
//	task.go, resource.go, lambda.go, startexec.go      Task resources: the Integration registry
//	                                                   ("service:api"), lambda:invoke and the legacy
//	                                                   Lambda ARN, states:startExecution(.sync/:2)
//	tokens.go                                          task tokens: SendTaskSuccess/Failure/Heartbeat
//	history.go, encode.go                              history events and their JSON
//	clock.go, scope.go, snapshot.go                    injectable time, variables, persistence
//
// Concurrency: each execution runs on its own goroutine, Parallel branches and Map iterations on
// theirs. A task of the execution's top level that waits on a token, and a Wait state of the top
// level, park instead: the goroutine returns, and the outcome (SendTask*, a timer, StopExecution,
// the execution's timeout) resumes the execution on a new one, so 100,000 waiting executions are
// data (about 7 KB each), not goroutines. Snapshot/Restore carry a parked execution across a
// restart (snapshot.go lists what is not covered yet).
//
// Time: all waits, back-offs and timeouts go through Config.Clock; VirtualClock runs them instantly
// in tests. Jitter draws from Config.Rand.
//
// JSONata: the engine uses JSONata through the JSONataCompiler interface; internal/asl/jsonata
// implements it over the evaluator internal/jsonata. Without one, definitions that use JSONata are
// refused at Parse.
package asl
