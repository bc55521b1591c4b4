package taskflow

import (
	"strconv"
	"strings"
)

// Retry of a child execution's start: Step Functions' own throttling and service errors.
var startRetry = []any{map[string]any{
	"ErrorEquals":     []any{"StepFunctions.ExecutionLimitExceededException", "StepFunctions.SdkClientException", "States.Timeout"},
	"IntervalSeconds": 2, "BackoffRate": 2, "MaxAttempts": 4, "JitterStrategy": "FULL",
}}

// child is a Task that starts an execution of arn with input (a JSONata expression) and waits for
// it (.sync:2: its output parsed), the step's output made of it by out. The child's name is
// derived from seed (see compiler.seed): a Task run again after a crash of the engine (at least once)
// starts the same child, which Step Functions answers with the running one, instead of a second.
func (c *compiler) child(sc scope, s *Step, arn, prefix, seed, input, out string) {
	args := map[string]any{"StateMachineArn": arn, "Input": "{% " + input + " %}",
		"Name": "{% '" + prefix + "' & $substring($hash(" + seed + ", 'SHA-256'), 24, 40) %}"}
	st := map[string]any{"Type": "Task", "Comment": label(s), "Resource": "arn:aws:states:::states:startExecution.sync:2",
		"Arguments": args, "Retry": startRetry}
	c.put(sc, sc.name, finish(sc, st, out))
}

// seed is what names a step's child execution and its call: the execution, the step's state, the
// index of each Map iteration it runs in (outermost first) and what it is given, so that it is the
// same whenever the Task runs again for the same work, and differs between iterations.
func (c *compiler) seed(sc scope, args string) string {
	idx := "''"
	for _, m := range sc.maps {
		m.used = true
		idx += " & '/' & $string($" + m.v + ")"
	}
	return "($states.context.Execution.Name & '|' & $states.context.State.Name & '|' & " + idx + " & '|' & $string(" + args + "))"
}

const ids = "'developer_id': $ctx.developer_id, 'agent_id': $ctx.agent_id, 'task_id': $ctx.task_id"

// callID is the step's sinew call id (call_ and 24 URL-safe characters), from its seed.
func callID(seed string) string { return "'call_' & $substring($hash(" + seed + ", 'SHA-256'), 0, 24)" }

// maxWait is how long a wait_for_input waits: a year, Step Functions' bound of an execution.
const maxWait = 365 * 86400

// toolCall compiles a tool_call (and wait_for_input) step into a tool_call execution.
func (c *compiler) toolCall(sc scope, s *Step) error {
	n := names("$states.input")
	var name, args string
	var timeout int64
	if s.Kind == KindWaitForInput {
		m, ok := s.Fields["wait_for_input"].(map[string]any)
		if !ok {
			return errAt(sc.path+".wait_for_input", "wait_for_input is {info: {...}}")
		}
		e, err := c.expr(sc.path+".wait_for_input.info", orEmpty(m["info"]), n)
		if err != nil {
			return err
		}
		name, args, timeout = "wait_for_input", e, maxWait
	} else {
		t, ok := s.Fields["tool"].(string)
		if !ok || t == "" {
			return errAt(sc.path+".tool", "tool is the name of one of the task's or the agent's tools")
		}
		name = t
		switch a := s.Fields["arguments"]; a {
		case nil:
			args = "{}"
		case "_":
			args = "$states.input"
		default:
			e, err := c.expr(sc.path+".arguments", a, n)
			if err != nil {
				return err
			}
			args = e
		}
		timeout = c.o.FunctionTools[t]
	}
	if timeout == 0 {
		// A tool found when the call runs: the tool_call machine's Prepare finds it, its executor
		// runs it, and a function tool waits in that execution.
		in := "{" + ids + ", 'session_id': null, 'tool': " + quote(name) + ", 'arguments': " + args + "}"
		out := "($r := $states.result.Output; $exists($r.error) and $r.error != null ? $error(" + quote(StepErrorName+": ") +
			" & $string($r.error.type) & ': ' & $string($r.error.message)) : $r.output)"
		c.child(sc, s, c.o.ToolCallARN, "tc-", c.seed(sc, args), in, out)
		return nil
	}
	seed := c.seed(sc, args)
	c.child(sc, s, c.o.ToolCallARN, "tc-", seed, functionCall(name, args, seed, timeout), "$states.result.Output")
	c.mark(sc)
	return nil
}

// WaitMark ends the Comment of a step's state that waits for an answer PUT /executions/{id} gives
// (a wait_for_input, a function tool of the task): the transitions show its wait and resume.
const WaitMark = "[waits for input]"

func (c *compiler) mark(sc scope) {
	st := c.states
	if sc.states != nil {
		st = sc.states
	}
	m := st[sc.name].(map[string]any)
	m["Comment"] = m["Comment"].(string) + " " + WaitMark
}

// functionCall is the tool_call input of a function call made here, recorded on this execution
// (context.execution_id) so that PUT /executions/{id} answers it: the answer is the step's output.
func functionCall(name, args, seed string, timeout int64) string {
	t := strconv.FormatInt(timeout, 10)
	q := quote(name)
	return strings.Join([]string{
		"($a := " + args + "; $id := " + callID(seed) + "; {" + ids + ", 'session_id': null, 'tool': " + q + ", 'arguments': $a,",
		"'call': {'id': $id, 'type': 'function', 'function': {'name': " + q + ", 'arguments': $a}},",
		"'definition': {'name': " + q + ", 'type': 'function', 'function': {'timeout_seconds': " + t + "}},",
		"'context': {" + ids + ", 'session_id': null, 'execution_id': $states.context.Execution.Name, 'depth': 0},",
		"'wait': {'timeout_seconds': " + t + ", 'heartbeat_seconds': null},",
		"'result': {'id': $id, 'type': 'function', 'name': " + q + "}, 'held': false})",
	}, " ")
}

func orEmpty(v any) any {
	if v == nil {
		return map[string]any{}
	}
	return v
}

// prompt compiles a prompt step into an agent_loop execution over its messages with the task's
// tools (and, with inherit_tools, the agent's).
func (c *compiler) prompt(sc scope, s *Step) error {
	n := names("$states.input")
	var msgs string
	switch p := s.Fields["prompt"].(type) {
	case string:
		e, err := c.expr(sc.path+".prompt", p, n)
		if err != nil {
			return err
		}
		msgs = "[{'role': 'user', 'content': " + e + "}]"
	case []any:
		e, err := c.expr(sc.path+".prompt", p, n)
		if err != nil {
			return err
		}
		msgs = e
	default:
		return errAt(sc.path+".prompt", "prompt is a string or a list of messages {role, content}")
	}
	tools, err := c.promptTools(sc.path+".tools", s.Fields["tools"])
	if err != nil {
		return err
	}
	settings, autoRun, choice := "null", "false", "null"
	if v, ok := s.Fields["settings"]; ok && v != nil {
		if settings, err = c.expr(sc.path+".settings", v, n); err != nil {
			return err
		}
	}
	if v, ok := s.Fields["auto_run_tools"].(bool); ok && v {
		autoRun = "true"
	}
	if v, ok := s.Fields["tool_choice"]; ok && v != nil {
		if choice, err = c.expr(sc.path+".tool_choice", v, n); err != nil {
			return err
		}
	}
	in := "{" + ids + ", 'session_id': null, 'messages': " + msgs + ", " + tools + ", 'tool_choice': " + choice +
		", 'model': null, 'settings': " + settings + ", 'auto_run_tools': " + autoRun + ", 'max_iterations': null, 'depth': 0, 'turn': null}"
	out := "($o := $states.result.Output; {'choices': [{'index': 0, 'finish_reason': $o.finish_reason, 'message': $o.last_message}], 'usage': $o.usage})"
	if u, _ := s.Fields["unwrap"].(bool); u {
		out = "$states.result.Output.last_message.content"
	}
	c.child(sc, s, c.o.AgentLoopARN, "pr-", c.seed(sc, msgs), in, out)
	return nil
}

// yield compiles a workflow step: an execution of this machine on the named workflow.
func (c *compiler) yield(sc scope, s *Step) error {
	wf, ok := s.Fields["workflow"].(string)
	if !ok {
		return errAt(sc.path+".workflow", "workflow is the name of one of the task's workflows")
	}
	if _, ok := c.wfs[wf]; !ok {
		return errAt(sc.path+".workflow", "the task has no workflow %q", wf)
	}
	args := "$states.input"
	if a, ok := s.Fields["arguments"]; ok && a != nil && a != "_" {
		e, err := c.expr(sc.path+".arguments", a, names("$states.input"))
		if err != nil {
			return err
		}
		args = e
	}
	in := "{" + ids + ", 'workflow': " + quote(wf) + ", 'input': " + args + "}"
	c.child(sc, s, c.o.SelfARN, "sub-", c.seed(sc, args), in, "$states.result.Output")
	return nil
}
