package loop

import (
	"context"
	"fmt"

	"sinew/internal/fault"
	"sinew/internal/llm"
	"sinew/internal/tool"
)

// bound applies the limits to a planned turn, in the model's order: past MaxCallsPerReply calls
// run or handed back, and past what the turn's Budget grants of the calls to run, a call is
// rejected with an error the model sees (it is never run). Calls already rejected count for
// neither.
func (l *Loop) bound(ctx context.Context, turn []Planned) error {
	asked, n := 0, 0
	for _, p := range turn {
		if p.Disposition != DispositionRejected {
			asked++
		}
	}
	var run []int
	for i, p := range turn {
		if p.Disposition == DispositionRejected {
			continue
		}
		if n++; n > l.cfg.MaxCallsPerReply {
			turn[i] = refused(p, fmt.Sprintf("not run: this reply asked for %d tool calls, and sinew runs at most %d per model reply (SINEW_MAX_CALLS_PER_REPLY); ask for fewer at a time", asked, l.cfg.MaxCallsPerReply))
			continue
		}
		if p.Disposition == DispositionRun {
			run = append(run, i)
		}
	}
	if l.cfg.Budget == nil || len(run) == 0 {
		return nil
	}
	granted, err := l.cfg.Budget.Take(ctx, len(run))
	if err != nil {
		return fmt.Errorf("the chat turn's budget of tool calls: %w", err)
	}
	for _, i := range run[min(max(granted, 0), len(run)):] {
		turn[i] = refused(turn[i], fmt.Sprintf("not run: the limit of %d tool calls per chat turn (SINEW_MAX_CALLS_PER_TURN), shared with the chats the turn started, is spent; answer with what you have", l.cfg.Budget.Limit()))
	}
	return nil
}

// refused is p rejected with msg, keeping its envelope (so the model sees the error's type).
func refused(p Planned, msg string) Planned {
	p.Disposition = DispositionRejected
	p.Error = &tool.ResultError{Type: string(fault.TooLarge), Message: msg}
	if p.Call == nil {
		p.Call = &tool.Call{ID: tool.NewCallID(), ModelCallID: p.ModelCallID}
	}
	return p
}

// choiceAt is the tool_choice of the loop's iteration (counted from 1). A forced choice holds for
// the first model call only: forced on every turn, the model could never answer, and every loop
// would end at the cap.
func (l *Loop) choiceAt(iteration int) llm.ToolChoice {
	choice := l.cfg.ToolChoice
	if iteration > 1 && (choice.Mode == llm.ChoiceRequired || choice.Mode == llm.ChoiceNamed) {
		choice = llm.ToolChoice{Mode: llm.ChoiceAuto}
	}
	return choice
}

// newCallID names the call of modelCallID in iteration (see Config.CallID).
func (l *Loop) newCallID(iteration int, modelCallID string) string {
	if l.cfg.CallID == nil {
		return tool.NewCallID()
	}
	return l.cfg.CallID(iteration, modelCallID)
}

// plan decides a call's disposition. choice is the tool_choice of the model call that asked for it:
// a tool it did not offer (none offers no tool, a named choice only that tool) is rejected, never
// run, whatever the model answered. iteration names the call (newCallID).
func (l *Loop) plan(c llm.ToolCall, choice llm.ToolChoice, iteration int) Planned {
	p := Planned{ModelCallID: c.ID, Name: c.Name}
	f, known := l.byName[c.Name]
	args, argErr := llm.ParseArguments(c.Arguments)
	if !l.cfg.AutoRun {
		p.Disposition = DispositionPending
		if argErr != nil {
			p.RawArguments = c.Arguments
			args = nil
		}
		if known {
			call := tool.NewCall(f.Tool, l.newCallID(iteration, c.ID), args)
			call.ModelCallID = c.ID
			p.Call = &call
		} else {
			// Not a tool the loop knows: the caller gets the model's call as it is.
			p.Call = &tool.Call{ID: l.newCallID(iteration, c.ID), ModelCallID: c.ID}
			p.RawArguments = c.Arguments
		}
		return p
	}
	switch {
	case !known:
		p.Disposition = DispositionRejected
		p.Error = &tool.ResultError{Type: string(fault.NotFound), Message: fmt.Sprintf("Tool '%s' not found", c.Name)}
		return p
	case choice.Mode == llm.ChoiceNone || (choice.Mode == llm.ChoiceNamed && choice.Name != c.Name):
		p.Disposition = DispositionRejected
		p.Error = &tool.ResultError{Type: string(fault.Forbidden), Message: fmt.Sprintf("Tool '%s' was not offered for this reply (%s): it was not run", c.Name, offeredText(choice))}
		return p
	case argErr != nil:
		p.Disposition = DispositionRejected
		p.Error = &tool.ResultError{Type: string(fault.InvalidInput), Message: fmt.Sprintf("Tool '%s': %v", c.Name, argErr)}
		return p
	}
	call := tool.NewCall(f.Tool, l.newCallID(iteration, c.ID), args)
	call.ModelCallID = c.ID
	p.Call = &call
	if f.Tool.Type == tool.TypeFunction && !l.cfg.RunFunctions {
		p.Disposition = DispositionPending
	} else {
		p.Disposition = DispositionRun
	}
	return p
}

func offeredText(choice llm.ToolChoice) string {
	if choice.Mode == llm.ChoiceNamed {
		return fmt.Sprintf("only '%s' was", choice.Name)
	}
	return "tool_choice is none"
}

func pendingOf(turn []Planned) []Pending {
	out := []Pending{}
	for _, p := range turn {
		if p.Disposition != DispositionPending {
			continue
		}
		pc := Pending{CallID: p.Call.ID, ModelCallID: p.ModelCallID, Tool: p.Name, Type: p.Call.Type}
		switch {
		case p.RawArguments != "":
			pc.Arguments = p.RawArguments
			if args, err := llm.ParseArguments(p.RawArguments); err == nil {
				pc.Arguments = args
			}
		case p.Call.Arguments() != nil:
			pc.Arguments = p.Call.Arguments()
		default:
			pc.Arguments = map[string]any{}
		}
		out = append(out, pc)
	}
	return out
}

// Replan plans again the unanswered tool calls of the last assistant message, as Prompt planned
// them in the current iteration (under the same call ids when Config.CallID derives them), without
// asking the model: a turn taken over after the process running it stopped.
func (l *Loop) Replan(st *State) {
	open := map[string]bool{}
	for _, id := range Unanswered(st.Messages) {
		open[id] = true
	}
	var turn []Planned
	for _, c := range st.Last().ToolCalls {
		if open[c.ID] {
			turn = append(turn, l.plan(c, l.choiceAt(st.Iterations), st.Iterations))
		}
	}
	st.Turn = turn
}
