package loop

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/llm"
	"sinew/internal/loop/toolfmt"
	"sinew/internal/store"
	"sinew/internal/tool"
)

// Feed records the results of the current turn's run calls (matched by sinew call id; a result
// for another call is refused), appends the tool messages the model sees, and decides whether the
// loop is done: pending calls stop it (finish_reason tool_calls), so does the cap. Outputs stored
// by reference are read back first (Config.Resolve); if one cannot be, st is left as it was.
func (l *Loop) Feed(ctx context.Context, st *State, results []tool.Result) error {
	byID := make(map[string]tool.Result, len(results))
	for _, r := range results {
		byID[r.ID] = r
	}
	for _, p := range st.Turn {
		if p.Disposition == DispositionRun {
			if _, ok := byID[p.Call.ID]; !ok {
				return fault.New(fault.Internal, "loop: no result for call %s (%s)", p.Call.ID, p.Name)
			}
			delete(byID, p.Call.ID)
		}
	}
	for id := range byID {
		return fault.New(fault.Internal, "loop: a result for call %s, which the turn did not plan", id)
	}
	msgs, err := l.messages(ctx, st.Turn, results)
	if err != nil {
		return err
	}
	l.apply(st, st.Turn, results, msgs)
	st.Pending = pendingOf(st.Turn)
	st.Turn = nil
	switch {
	case len(st.Pending) > 0:
		st.Done, st.FinishReason = true, llm.FinishToolCalls
	case st.Iterations >= l.cfg.MaxIterations:
		st.Done, st.FinishReason = true, FinishIterationCap
	}
	return nil
}

// FeedPartial records what a turn cut short has: the results given (of calls that finished) and
// the rejected calls get their tool messages, and st.Turn keeps only the calls still unanswered
// (to run, or pending), for agent_loop to take over (Adopt). The loop is not done.
func (l *Loop) FeedPartial(ctx context.Context, st *State, results []tool.Result) error {
	planned := map[string]bool{}
	for _, p := range st.Turn {
		if p.Disposition == DispositionRun {
			planned[p.Call.ID] = true
		}
	}
	for _, r := range results {
		if !planned[r.ID] {
			return fault.New(fault.Internal, "loop: a result for call %s, which the turn did not plan to run", r.ID)
		}
	}
	msgs, err := l.messages(ctx, st.Turn, results)
	if err != nil {
		return err
	}
	done := make(map[string]bool, len(results))
	for _, r := range results {
		done[r.ID] = true
	}
	l.apply(st, st.Turn, results, msgs)
	var rest []Planned
	for _, p := range st.Turn {
		if p.Disposition == DispositionRejected || (p.Disposition == DispositionRun && done[p.Call.ID]) {
			continue
		}
		rest = append(rest, p)
	}
	st.Turn, st.Pending = rest, []Pending{}
	return nil
}

// Adopt takes over a turn another runner began (the chat handing off to agent_loop when its time
// budget ran out while tools ran): calls are the envelopes, under sinew's call ids and the model's
// ids, of every tool call of the last assistant message that no tool message answers yet. Each
// becomes a call to run with the same id, so an executor that did finish it answers its recorded
// result instead of running it again; a call of a tool the loop no longer has is
// rejected as the model would see it. The turn's model call counts as an iteration.
func (l *Loop) Adopt(st *State, calls []tool.Call) error {
	if len(st.Turn) > 0 || st.Done {
		return fault.New(fault.Internal, "loop: a turn can be adopted only by a loop between turns")
	}
	open := Unanswered(st.Messages)
	if len(open) == 0 {
		return fault.Invalid("turn", "turn carries calls, but the last assistant message has no unanswered tool call")
	}
	want := make(map[string]bool, len(open))
	for _, id := range open {
		want[id] = true
	}
	names := map[string]string{}
	for _, c := range st.Last().ToolCalls {
		names[c.ID] = c.Name
	}
	turn := make([]Planned, 0, len(calls))
	for i := range calls {
		c := calls[i]
		field := fmt.Sprintf("turn[%d]", i)
		if err := c.Validate(); err != nil {
			return fault.Wrap(fault.InvalidInput, err, "%s: %v", field, err)
		}
		if !want[c.ModelCallID] {
			return fault.Invalid(field+".model_call_id", "%s answers %q, which is not an unanswered tool call of the last assistant message (%s)", field, c.ModelCallID, strings.Join(open, ", "))
		}
		delete(want, c.ModelCallID)
		name := c.Name()
		if name == "" {
			name = names[c.ModelCallID]
		}
		p := Planned{ModelCallID: c.ModelCallID, Name: name}
		f, known := l.byName[name]
		switch {
		case !known:
			p.Disposition = DispositionRejected
			p.Error = &tool.ResultError{Type: string(fault.NotFound), Message: fmt.Sprintf("Tool '%s' not found", name)}
		case f.Tool.Type != c.Type:
			p.Disposition, p.Call = DispositionRejected, &c
			p.Error = &tool.ResultError{Type: string(fault.InvalidInput), Message: fmt.Sprintf("Tool '%s' is now of type %s, not %s", name, f.Tool.Type, c.Type)}
		case c.Type == tool.TypeFunction && !l.cfg.RunFunctions:
			p.Disposition, p.Call = DispositionPending, &c
		default:
			p.Disposition, p.Call = DispositionRun, &c
		}
		turn = append(turn, p)
	}
	if len(want) > 0 {
		var missing []string
		for _, id := range open {
			if want[id] {
				missing = append(missing, id)
			}
		}
		return fault.Invalid("turn", "turn carries no call for the unanswered tool calls %s", strings.Join(missing, ", "))
	}
	st.Turn = turn
	st.Iterations++
	return nil
}

// messages gives the tool message of each call of turn that results answer or that was rejected,
// by model call id, reading outputs stored by reference back first.
func (l *Loop) messages(ctx context.Context, turn []Planned, results []tool.Result) (map[string]llm.Message, error) {
	resultOf := make(map[string]tool.Result, len(results))
	for _, r := range results {
		resultOf[r.ID] = r
	}
	out := make(map[string]llm.Message, len(turn))
	for _, p := range turn {
		switch {
		case p.Disposition == DispositionRejected:
			out[p.ModelCallID] = toolMessage(p, "", p.Error)
		case p.Disposition == DispositionRun:
			r, ok := resultOf[p.Call.ID]
			if !ok {
				continue
			}
			if r.Error != nil {
				out[p.ModelCallID] = toolMessage(p, "", r.Error)
				continue
			}
			text, err := l.content(ctx, p.Call.Type, r.Output)
			if err != nil {
				return nil, fmt.Errorf("the output of call %s (%s): %w", p.Call.ID, p.Name, err)
			}
			out[p.ModelCallID] = toolMessage(p, text, nil)
		}
	}
	return out, nil
}

// ToolMessage is the tool message Feed gives result r of a call of the current turn to run: for
// a runner that saves each result as it completes, while the turn's other calls still run.
func (l *Loop) ToolMessage(ctx context.Context, st *State, r tool.Result) (llm.Message, error) {
	for _, p := range st.Turn {
		if p.Disposition == DispositionRun && p.Call.ID == r.ID {
			msgs, err := l.messages(ctx, []Planned{p}, []tool.Result{r})
			if err != nil {
				return llm.Message{}, err
			}
			return msgs[p.ModelCallID], nil
		}
	}
	return llm.Message{}, fault.New(fault.Internal, "loop: a result for call %s, which the turn did not plan to run", r.ID)
}

// apply appends the results and the tool messages of turn, in the model's order.
func (l *Loop) apply(st *State, turn []Planned, results []tool.Result, msgs map[string]llm.Message) {
	resultOf := make(map[string]tool.Result, len(results))
	for _, r := range results {
		resultOf[r.ID] = r
	}
	for _, p := range turn {
		m, ok := msgs[p.ModelCallID]
		if !ok {
			continue
		}
		if p.Disposition == DispositionRun {
			r := resultOf[p.Call.ID]
			norm := tool.ResultOf(p.Call, r.Output)
			if r.Error != nil {
				norm = tool.ErrorResult(p.Call, r.Error.Type, r.Error.Message)
			}
			st.Results = append(st.Results, norm)
		}
		st.Messages = append(st.Messages, m)
	}
}

// content is an output as the model sees it: a string as is, any other value as JSON (an
// api_call's compacted, see toolfmt.ModelOutput), a value stored by reference read back first, and
// all of it at most MaxToolContent bytes.
func (l *Loop) content(ctx context.Context, typ tool.Type, output any) (string, error) {
	ref, isRef := store.RefOf(output)
	if isRef && l.cfg.Resolve != nil {
		v, err := l.cfg.Resolve(ctx, output)
		if err != nil {
			return "", err
		}
		output = v
	}
	output = toolfmt.ModelOutput(typ, output)
	text, ok := output.(string)
	if !ok {
		text = jsonv.EncodeString(output)
	}
	if len(text) <= MaxToolContent {
		return text, nil
	}
	cut := MaxToolContent
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	where := ""
	if isRef {
		where = fmt.Sprintf("; the whole output is the stored value %s (GET /payloads/%s)", ref, ref)
	}
	return text[:cut] + fmt.Sprintf("\n[sinew: output truncated: the first %d of %d bytes%s]", cut, len(text), where), nil
}

// toolMessage is what the model sees of a result: its text (see content), or an error as
// {"error": message, "type": kind} (an unknown tool as Julep's {"error": "Tool 'x' not found"}).
func toolMessage(p Planned, text string, e *tool.ResultError) llm.Message {
	m := llm.Message{Role: llm.RoleTool, ToolCallID: p.ModelCallID, Name: p.Name}
	switch {
	case e != nil && e.Type == string(fault.NotFound) && p.Call == nil:
		m.Content = jsonv.EncodeString(map[string]any{"error": e.Message})
	case e != nil:
		m.Content = jsonv.EncodeString(map[string]any{"error": e.Message, "type": e.Type})
	default:
		m.Content = text
	}
	return m
}
