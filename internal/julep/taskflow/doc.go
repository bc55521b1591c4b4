// Package taskflow compiles a Julep task into one Amazon States Language definition (JSONata).
//
// The task is its named workflows of steps; Step Functions then runs it as Julep's Temporal
// workflow would.
//
// # The compiled machine
//
// The execution's input is {developer_id, agent_id, task_id, workflow, input}. Start routes to the
// first step of the named workflow ("main" unless told) and assigns the variables every step
// reads: $input0 (the workflow's input), $outputs (each step's output, in order), $state (what
// set steps stored) and $ctx (the ids). Step n of workflow w is the state "w.n"; a step that needs
// more than one state names the others "w.n.<part>", and "w.n" is always where it begins. A step's
// output is the next step's input: Julep's `_`.
//
// Expressions ("$ python", "{{ template }}", or literals) are compiled to JSONata by the Expr the
// caller gives (package pyexpr), with Julep's names bound to what holds them here:
//
//	_        $states.input (in a Map's iteration, the item)
//	outputs  $outputs            inputs  [$input0] and $outputs after it
//	steps    [{input, output}]   state   $state
//
// An expression Expr does not compile but the Evaluator can run (pyexpr's Eval) is evaluated in a
// Lambda: a Task "w.n.eval" before the step sends that step's such expressions, with the names they
// read, to the evaluator function, assigns the answer to a variable of its own and passes the input
// on; a Choice after it fails the step (Julep.StepError) when an expression raised. Every
// transition into the step is redirected to the Task, so "w.n" stays the step's own state. A step
// whose expressions all compile invokes nothing.
//
// Steps and what they become:
//
//	evaluate, set, get, log, return   a Pass (no Lambda): the values computed in JSONata
//	if/then/else, switch              a Choice, the branch's step, and a Pass that records the output
//	foreach, map (+reduce)            a Map whose iteration is the step (foreach one at a time;
//	                                  map with parallelism), reduce a JSONata $reduce over the results
//	parallel                          a Parallel with a branch per step
//	sleep                             a Wait
//	error                             a Fail (Julep.StepError, the message as cause)
//	tool_call                         a tool_call execution (.sync:2) with the call named: the same
//	                                  Prepare, executors, merge, secrets and records as every call. A
//	                                  function tool of the task waits in that child on a call
//	                                  recorded on this execution, so PUT /executions/{id} answers it
//	wait_for_input                    the same, with a call named wait_for_input whose arguments are
//	                                  the info: the execution is awaiting_input until resumed
//	prompt                            an agent_loop execution (.sync:2) over the step's messages and
//	                                  the task's tools, or those its list names (by id or name) or
//	                                  defines
//	workflow                          an execution of this same machine (.sync:2) on the named workflow
//
// A child execution's name is a hash of the execution, the step's state, the index of every Map
// iteration it runs in and its input: the same whenever the engine runs the Task again, different
// for each iteration.
//
// A failing step fails the execution (Julep's "error" transition), with the step's error.
package taskflow
