// Package asl is sinew's embedded Step Functions engine.
//
// It parses and validates Amazon States Language definitions as CreateStateMachine does, and runs
// executions the way AWS does, down to the history events recorded from real AWS executions
// (internal/asl/conformance replays them).
//
// Where each construct lives: a state type's file holds its spec (State.Pass, State.Task, ...), its
// parsing and validation, and its run.
//
//	state.go                  State: the fields every type shares, dispatch by type, the data flow
//	                          (InputPath, Parameters, ResultSelector, ResultPath, OutputPath,
//	                          Arguments, Output, Assign)
//	state_pass.go             Pass
//	state_task.go             Task: attempts, timeouts, heartbeats, waiting on a task token
//	state_choice.go           Choice and its rules
//	state_wait.go             Wait, parked at the top level
//	state_succeed_fail.go     Succeed and Fail
//	state_parallel.go         Parallel
//	state_map.go              Map: parsing and the inline run
//	state_map_distributed.go  distributed Map: a Map Run of child executions (ItemBatcher; no S3)
//	retry.go                  Retry and Catch
//	fields.go                 field kinds several types take: optional paths, numbers by value,
//	                          path or JSONata
//	fanout.go                 Parallel's branches and Map's iterations side by side
//	definition.go             Machine, Parse, diagnostics, transitions and reachability
//	template.go, jsonata.go   payload templates, Assign, JSONata fields
//	paths.go                  the seam onto internal/asl/jsonpath and intrinsic
//	interp.go                 frames and state visits: entered/exited events, errors, $$
//	engine.go                 Engine, Execution, Start/Stop/Describe/History
//	resource.go, lambda.go,   Task resources: the Integration registry ("service:api"),
//	startexec.go              lambda:invoke and the legacy Lambda ARN, states:startExecution
//	tokens.go                 task tokens: SendTaskSuccess/Failure/Heartbeat
//	history.go, encode.go     history events and their JSON
//	clock.go, scope.go,       injectable time, variables, persistence
//	snapshot.go
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
