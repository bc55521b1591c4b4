// Package agentloop is the model step of the agent_loop state machine.
//
// Each invocation of the model Lambda feeds the previous turn's results (gathered by the Map) into
// the loop's state, prompts the model once, and answers the calls the Map must run next, or the
// loop's output once it is done. The loop's state (messages included) travels as a stored value
// (`sinew:ref` once over 32 KiB), so long conversations never reach the 256 KiB state limit.
package agentloop

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/llm"
	"sinew/internal/loop"
	"sinew/internal/loop/toolfmt"
	"sinew/internal/store"
	"sinew/internal/tool"
	"sinew/internal/toolsearch"
	"sinew/internal/workflow"
)

// FlagAutoRun gives auto_run_tools's default in agent_loop (Julep's name).
const FlagAutoRun = "auto_tool_calls_prompt_step"

// Input is the agent_loop execution's input, every key present.
type Input struct {
	DeveloperID string  `json:"developer_id"`
	AgentID     string  `json:"agent_id"`
	TaskID      *string `json:"task_id"`
	SessionID   *string `json:"session_id"`
	Messages    any     `json:"messages"` // a list of messages or a sinew:ref to one
	Tools       any     `json:"tools"`    // a list of tools, a sinew:ref, or null for the stored ones
	// ToolNames, when not null, offers the stored tools of these names (a task's prompt step's
	// references) beside the listed ones.
	ToolNames     []string       `json:"tool_names,omitempty"`
	ToolChoice    any            `json:"tool_choice"`
	Model         *string        `json:"model"`
	Settings      map[string]any `json:"settings"`
	AutoRunTools  *bool          `json:"auto_run_tools"`
	MaxIterations *int           `json:"max_iterations"`
	Depth         int            `json:"depth"`
	// TurnID is the chat turn this loop continues (a chat's hand-off) or was started from (a
	// system tool's task.execution.create): its calls draw on that turn's budget. Absent, the
	// execution is a turn of its own.
	TurnID string `json:"turn_id,omitempty"`
	// Turn is null, or the calls (envelopes, or a sinew:ref to them) of a turn the chat began and
	// handed off when its time budget ran out while tools ran: they answer the last message's
	// unanswered tool calls, and the first step runs them under the same call ids (loop.Adopt).
	Turn any `json:"turn"`
	// Unsaved counts the last messages of Messages that are not in the session's history yet (a
	// chat's hand-off): the first step appends them, once, so a hand-off that never starts leaves
	// none of them behind.
	Unsaved int `json:"unsaved,omitempty"`
}

// Event is the model Lambda's input: the execution's input, its name, the state so far (null on
// the first step) and the Map's results of the previous turn (null on the first step).
type Event struct {
	Input       Input        `json:"input"`
	ExecutionID string       `json:"execution_id"`
	State       any          `json:"state"`
	Results     []ItemResult `json:"results"`
}

// ItemResult is one Map iteration's outcome: the call and its Task's result or caught error.
type ItemResult struct {
	Call   tool.Call             `json:"call"`
	Result *TaskResult           `json:"result"`
	Error  *workflow.StatesError `json:"error"`
}

// TaskResult is a Task's result as the Map keeps it: {object}, the result object a server-side
// executor answers (the tool's output, or its failure as the error), or {output}, a function
// call's answer (and an executor's output under agent_loop's definitions before error results,
// where a tool's failure was the Task's caught error).
type TaskResult struct {
	Output any          `json:"output"`
	Object *tool.Result `json:"object,omitempty"`
}

// Item is one call for the Map: what the per-type Tasks take, with the wait of a function call and
// the result and error keys the Catch and ResultPath fill (present, so JSONPath finds them).
type Item struct {
	Call    tool.Call        `json:"call"`
	Tool    *tool.Tool       `json:"tool"`
	Context workflow.Context `json:"context"`
	Wait    workflow.Wait    `json:"wait"`
	Result  any              `json:"result"`
	Error   any              `json:"error"`
}

// Output is the model Lambda's answer.
type Output struct {
	State  any     `json:"state"`
	Calls  []Item  `json:"calls"`
	Done   bool    `json:"done"`
	Output *Result `json:"output"`
}

// Result is the agent_loop execution's output.
type Result struct {
	Messages     any              `json:"messages"`
	LastMessage  llm.Message      `json:"last_message"`
	Usage        llm.Usage        `json:"usage"`
	Iterations   int              `json:"iterations"`
	FinishReason llm.FinishReason `json:"finish_reason"`
	ToolResults  []tool.Result    `json:"tool_results"`
}

// Deps are the step's dependencies.
type Deps struct {
	Store        *store.Store
	Model        llm.Model
	Formatter    *toolfmt.Formatter
	FlagDefaults map[string]bool
	Log          *slog.Logger
	// MaxCallsPerReply and MaxCallsPerTurn bound the tool calls the model starts (package loop),
	// their defaults when 0.
	MaxCallsPerReply int
	MaxCallsPerTurn  int
	// ToolSearchThreshold: an agent with more tools is shown sinew_search_tools and the tools most
	// relevant to the turn, this many in all (toolsearch.DefaultThreshold when 0), as in a chat.
	ToolSearchThreshold int
}

// Stepper runs model steps.
type Stepper struct{ d Deps }

// New makes a Stepper.
func New(d Deps) *Stepper {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Formatter == nil {
		d.Formatter = &toolfmt.Formatter{}
	}
	return &Stepper{d: d}
}

// saved is what travels between steps.
type saved struct {
	Loop    *loop.State `json:"loop"`
	AutoRun bool        `json:"auto_run"`
	// Base counts the messages the loop started with; those after it are the loop's own, appended
	// to the session's history when the loop runs for a session (the chat's hand-off).
	Base int `json:"base"`
	// Steps counts the model steps done: the next step's record key (stepKey).
	Steps int `json:"steps"`
}

// stepTTL keeps a step's record for its retries, which come within minutes.
const stepTTL = 24 * time.Hour

// stepKey names the record of an execution's nth model step.
func stepKey(execID string, n int) string {
	return "agent_loop/" + execID + "/step/" + strconv.Itoa(n)
}

// Step runs one model step.
func (s *Stepper) Step(ctx context.Context, ev Event) (*Output, error) {
	in := ev.Input
	dev := in.DeveloperID
	if dev == "" || in.AgentID == "" || ev.ExecutionID == "" {
		return nil, fault.Invalid("input", "input.developer_id, input.agent_id and execution_id are required")
	}
	if in.TaskID != nil && in.SessionID != nil {
		return nil, fault.Invalid("input.session_id", "an agent_loop names at most one of task_id and session_id")
	}
	turn := in.TurnID
	if turn == "" {
		turn = ev.ExecutionID
	}
	cc := workflow.Context{DeveloperID: dev, AgentID: in.AgentID, TaskID: deref(in.TaskID), SessionID: deref(in.SessionID),
		ExecutionID: ev.ExecutionID, Depth: in.Depth, TurnID: turn}
	agent, err := s.d.Store.GetAgent(ctx, dev, in.AgentID)
	if err != nil {
		return nil, err
	}
	cfg, search, err := s.loopConfig(ctx, in, agent, cc)
	if err != nil {
		return nil, err
	}
	sv, err := s.loadState(ctx, ev, agent)
	if err != nil {
		return nil, err
	}
	cfg.AutoRun = sv.AutoRun
	lp, err := loop.New(cfg)
	if err != nil {
		return nil, err
	}

	// The step's outcome is recorded before anything acts on it: an invocation Step Functions
	// retries after its answer was lost finds it and answers the same, without asking the model
	// again (whose second answer could differ, under new call ids) or appending the history twice.
	key := stepKey(ev.ExecutionID, sv.Steps)
	next, ref, err := s.recorded(ctx, dev, key)
	if err != nil {
		return nil, err
	}
	if next == nil {
		if ev.State == nil {
			if err := s.begin(ctx, ev, lp, sv.Loop); err != nil {
				return nil, err
			}
		}
		if err := s.advance(ctx, cc, lp, search, sv.Loop, ev); err != nil {
			return nil, err
		}
		sv.Steps++
		if next, ref, err = s.record(ctx, dev, key, sv); err != nil {
			return nil, err
		}
	}
	return s.output(ctx, cc, lp, next, ref)
}

// loopConfig is the loop's configuration for in: the tools formatted for the model (with the
// metadata's integration arguments), the model, the iteration cap, tool_choice and the settings
// (the agent's defaults under the input's).
func (s *Stepper) loopConfig(ctx context.Context, in Input, agent *store.Agent, cc workflow.Context) (loop.Config, *toolsearch.Selector, error) {
	dev := in.DeveloperID
	tools, err := s.tools(ctx, in)
	if err != nil {
		return loop.Config{}, nil, err
	}
	scopeMeta, err := s.scopeMetadata(ctx, cc)
	if err != nil {
		return loop.Config{}, nil, err
	}
	formatted, err := s.d.Formatter.FormatAll(tools, IntegrationArgs(agent.Metadata, scopeMeta))
	if err != nil {
		return loop.Config{}, nil, err
	}
	var offer func(*loop.State) []llm.Function
	search := toolsearch.NewSelector(formatted, s.d.ToolSearchThreshold)
	if search != nil {
		formatted, offer = search.WithSearch(formatted), search.Offer
	}
	cfg := loop.Config{Model: s.d.Model, Tools: formatted, RunFunctions: true, Log: s.d.Log, ModelID: agent.Model, Offer: offer,
		MaxCallsPerReply: s.d.MaxCallsPerReply,
		Budget:           loop.StoreBudget{Store: s.d.Store, DeveloperID: dev, TurnID: cc.TurnID, Max: s.d.MaxCallsPerTurn},
		Resolve:          func(ctx context.Context, v any) (any, error) { return s.d.Store.LoadValue(ctx, dev, v) }}
	if in.Model != nil {
		cfg.ModelID = *in.Model
	}
	if in.MaxIterations != nil {
		cfg.MaxIterations = *in.MaxIterations
	}
	if in.ToolChoice != nil {
		if cfg.ToolChoice, err = llm.ParseToolChoice("tool_choice", in.ToolChoice); err != nil {
			return loop.Config{}, nil, err
		}
	}
	settings := map[string]any{}
	for k, v := range agent.DefaultSettings {
		settings[k] = v
	}
	for k, v := range in.Settings {
		settings[k] = v
	}
	if cfg.Settings, err = llm.ParseSettings("settings", settings); err != nil {
		return loop.Config{}, nil, err
	}
	return cfg, search, nil
}

// loadState is the loop's state: a new one on the first step, else the one the previous step
// saved.
func (s *Stepper) loadState(ctx context.Context, ev Event, agent *store.Agent) (saved, error) {
	if ev.State == nil {
		return s.start(ctx, ev, agent)
	}
	var sv saved
	v, err := s.d.Store.LoadValue(ctx, ev.Input.DeveloperID, ev.State)
	if err != nil {
		return sv, fmt.Errorf("agent_loop: the loop's state: %w", err)
	}
	if err := jsonv.Convert(v, &sv); err != nil || sv.Loop == nil {
		return sv, fault.Invalid("state", "state is not the loop's state")
	}
	return sv, nil
}

// begin is the first step's own work: adopting the turn a chat handed off, and recording the
// execution once the input has passed its checks (a refused input leaves nothing). A record the
// chat made before starting the execution is kept, marked as started.
func (s *Stepper) begin(ctx context.Context, ev Event, lp *loop.Loop, st *loop.State) error {
	in := ev.Input
	dev := in.DeveloperID
	if in.Turn != nil {
		if err := s.adopt(ctx, dev, lp, st, in.Turn); err != nil {
			return err
		}
	}
	if _, err := s.d.Store.EnsureExecution(ctx, dev, store.Execution{ExecutionID: ev.ExecutionID, Workflow: workflow.AgentLoop,
		AgentID: in.AgentID, TaskID: deref(in.TaskID), SessionID: deref(in.SessionID)}); err != nil {
		return fmt.Errorf("agent_loop: recording the execution: %w", err)
	}
	return s.saveHandedOver(ctx, ev, st)
}

// saveHandedOver appends to the session's history the messages the chat handed over unsaved
// (Input.Unsaved), keyed by the execution so a retried step appends them once.
func (s *Stepper) saveHandedOver(ctx context.Context, ev Event, st *loop.State) error {
	in := ev.Input
	n := in.Unsaved
	if n == 0 {
		return nil
	}
	if in.SessionID == nil || n < 0 || n > len(st.Messages) {
		return fault.Invalid("input.unsaved", "unsaved counts the last messages a session's chat handed over: at most the messages given, with a session_id")
	}
	msgs := st.Messages[len(st.Messages)-n:]
	return AppendHistory(ctx, s.d.Store, in.DeveloperID, *in.SessionID, "agent_loop/"+ev.ExecutionID+"/handed-over", msgs)
}

// output is the step's answer from the recorded state next (stored as ref): the calls the Map
// runs next, each with its tool's definition (setup left out) and wait, or the loop's output.
func (s *Stepper) output(ctx context.Context, cc workflow.Context, lp *loop.Loop, next *saved, ref any) (*Output, error) {
	st := next.Loop
	out := &Output{Calls: []Item{}, State: ref}
	if st.Done {
		res, err := s.finish(ctx, cc, st, next.Base)
		if err != nil {
			return nil, err
		}
		out.Done, out.Output = true, res
		return out, nil
	}
	calls, defs := lp.ToRun(st)
	for i, c := range calls {
		snap := *defs[i]
		if snap.Integration != nil {
			in := *snap.Integration
			in.Setup = nil
			snap.Integration = &in
		}
		w, err := workflow.WaitOf(&snap)
		if err != nil {
			return nil, err
		}
		out.Calls = append(out.Calls, Item{Call: *c, Tool: &snap, Context: cc, Wait: w})
	}
	return out, nil
}

// advance is the step's work on the loop: feed the previous turn's results, then prompt the model
// unless the loop is done or has a turn to run already (one adopted from the chat).
func (s *Stepper) advance(ctx context.Context, cc workflow.Context, lp *loop.Loop, search *toolsearch.Selector, st *loop.State, ev Event) error {
	if len(st.Turn) > 0 && ev.State != nil {
		if err := lp.Feed(ctx, st, s.results(ctx, cc, st, ev.Results)); err != nil {
			return err
		}
	}
	if !st.Done && len(st.Turn) == 0 {
		if err := lp.Prompt(ctx, st); err != nil {
			return err
		}
		if err := answerSearches(ctx, lp, search, st); err != nil {
			return err
		}
	}
	if !st.Done {
		if calls, _ := lp.ToRun(st); len(calls) == 0 {
			// Every call of the turn was rejected: feed the rejections and ask again next step.
			return lp.Feed(ctx, st, nil)
		}
	}
	return nil
}

// answerSearches answers the turn's calls of the search tool in the step (it has no executor for
// the Map to call), so the Map runs only the others.
func answerSearches(ctx context.Context, lp *loop.Loop, search *toolsearch.Selector, st *loop.State) error {
	if search == nil || st.Done {
		return nil
	}
	var results []tool.Result
	calls, defs := lp.ToRun(st)
	for i, c := range calls {
		if search.Owns(defs[i]) {
			results = append(results, search.Answer(c))
		}
	}
	if len(results) == 0 {
		return nil
	}
	return lp.FeedPartial(ctx, st, results)
}

// adopt takes over the turn the chat handed off (Input.Turn).
func (s *Stepper) adopt(ctx context.Context, dev string, lp *loop.Loop, st *loop.State, turn any) error {
	raw, err := s.d.Store.LoadValue(ctx, dev, turn)
	if err != nil {
		return fmt.Errorf("agent_loop: the turn: %w", err)
	}
	var calls []tool.Call
	if err := jsonv.Convert(raw, &calls); err != nil || len(calls) == 0 {
		return fault.Invalid("turn", "turn must be null or a non-empty list of call envelopes {id, type, <type>: {...}, model_call_id}")
	}
	return lp.Adopt(st, calls)
}

// recorded gives the state a step's record holds (nil when the step has not run) and its value
// as it travels (the state, or its reference).
func (s *Stepper) recorded(ctx context.Context, dev, key string) (*saved, any, error) {
	rec, err := s.d.Store.GetIdempotency(ctx, dev, key)
	if fault.Is(err, fault.NotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("agent_loop: the step's record: %w", err)
	}
	m, _ := rec.Value.(map[string]any)
	return s.loadSaved(ctx, dev, m["state"])
}

// record stores the state after a step and records it under key; when another invocation of the
// same step recorded first, its state wins, so every invocation answers the same.
func (s *Stepper) record(ctx context.Context, dev, key string, sv saved) (*saved, any, error) {
	ref, err := s.d.Store.StoreValue(ctx, dev, sv, workflow.PayloadTTL)
	if err != nil {
		return nil, nil, fmt.Errorf("agent_loop: storing the loop's state: %w", err)
	}
	rec, created, err := s.d.Store.PutIdempotency(ctx, dev, key, map[string]any{"state": ref}, stepTTL)
	if err != nil {
		return nil, nil, fmt.Errorf("agent_loop: recording the step: %w", err)
	}
	if created {
		return &sv, ref, nil
	}
	m, _ := rec.Value.(map[string]any)
	return s.loadSaved(ctx, dev, m["state"])
}

func (s *Stepper) loadSaved(ctx context.Context, dev string, ref any) (*saved, any, error) {
	v, err := s.d.Store.LoadValue(ctx, dev, ref)
	if err != nil {
		return nil, nil, fmt.Errorf("agent_loop: the recorded state: %w", err)
	}
	var sv saved
	if err := jsonv.Convert(v, &sv); err != nil || sv.Loop == nil {
		return nil, nil, fault.New(fault.Internal, "agent_loop: a step's record does not hold the loop's state")
	}
	return &sv, ref, nil
}

// start builds the first state from the input.
func (s *Stepper) start(ctx context.Context, ev Event, agent *store.Agent) (saved, error) {
	in := ev.Input
	dev := in.DeveloperID
	raw, err := s.d.Store.LoadValue(ctx, dev, in.Messages)
	if err != nil {
		return saved{}, fmt.Errorf("agent_loop: the messages: %w", err)
	}
	var msgs []llm.Message
	if err := jsonv.Convert(raw, &msgs); err != nil || len(msgs) == 0 {
		return saved{}, fault.Invalid("messages", "messages must be a non-empty list of {role, content, ...}")
	}
	auto := in.AutoRunTools
	if auto == nil {
		flags, err := s.d.Store.Flags(ctx, dev, s.d.FlagDefaults)
		if err != nil {
			return saved{}, fmt.Errorf("agent_loop: flags: %w", err)
		}
		v := flags[FlagAutoRun]
		auto = &v
	}
	all := append(Instructions(agent.Instructions), msgs...)
	return saved{Loop: loop.NewState(all), AutoRun: *auto, Base: len(all)}, nil
}

// tools are the input's inline tools, else the task's (with inherit_tools, the agent's too) or the
// agent's; with tool_names, the inline ones and the stored ones of those names.
func (s *Stepper) tools(ctx context.Context, in Input) ([]*tool.Tool, error) {
	var out []*tool.Tool
	if in.Tools != nil {
		inline, err := s.inlineTools(ctx, in)
		if err != nil || in.ToolNames == nil {
			return inline, err
		}
		out = inline
	}
	stored, err := s.d.Store.ToolsFor(ctx, in.DeveloperID, in.AgentID, deref(in.TaskID))
	if err != nil {
		return nil, fmt.Errorf("agent_loop: the stored tools: %w", err)
	}
	for i := range stored {
		if in.ToolNames == nil || slices.Contains(in.ToolNames, stored[i].Name) {
			out = append(out, &stored[i])
		}
	}
	return out, nil
}

// inlineTools are the tools the input lists.
func (s *Stepper) inlineTools(ctx context.Context, in Input) ([]*tool.Tool, error) {
	raw, err := s.d.Store.LoadValue(ctx, in.DeveloperID, in.Tools)
	if err != nil {
		return nil, fmt.Errorf("agent_loop: the tools: %w", err)
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fault.Invalid("tools", "tools must be a list of tools or null")
	}
	out := make([]*tool.Tool, 0, len(list))
	for i, v := range list {
		b, _ := json.Marshal(v)
		t, err := tool.Decode(b)
		if err != nil {
			return nil, fault.Wrap(fault.InvalidInput, err, "tools[%d]: %v", i, err)
		}
		if t.Integration != nil && len(t.Integration.Setup) > 0 {
			return nil, fault.Invalid(fmt.Sprintf("tools[%d].integration.setup", i), "tools[%d]: an inline tool may not carry setup", i)
		}
		out = append(out, t)
	}
	return out, nil
}

// results turns the Map's outcomes into result objects; a function call whose wait ran out is
// marked expired (an answered one was settled by the answer route).
func (s *Stepper) results(ctx context.Context, cc workflow.Context, st *loop.State, items []ItemResult) []tool.Result {
	out := make([]tool.Result, 0, len(items))
	for _, it := range items {
		c := it.Call
		switch {
		case it.Error != nil:
			typ, msg := workflow.ErrorOf(c.Type, *it.Error)
			out = append(out, tool.ErrorResult(&c, typ, msg))
			if c.Type == tool.TypeFunction {
				status := store.CallFailed
				if typ == string(fault.Timeout) {
					status = store.CallExpired
				}
				if _, err := s.d.Store.SettleCall(ctx, cc.DeveloperID, cc.ExecutionID, c.ID, status); err != nil && !fault.Is(err, fault.NotFound) && !fault.Is(err, fault.Conflict) {
					s.d.Log.WarnContext(ctx, "agent_loop: settling a function call", "call_id", c.ID, "error", err.Error())
				}
			}
		case it.Result != nil && it.Result.Object != nil && it.Result.Object.Error != nil:
			e := it.Result.Object.Error
			out = append(out, tool.ErrorResult(&c, e.Type, e.Message))
		case it.Result != nil && it.Result.Object != nil:
			out = append(out, tool.ResultOf(&c, it.Result.Object.Output))
		case it.Result != nil:
			out = append(out, tool.ResultOf(&c, it.Result.Output))
		default:
			out = append(out, tool.ErrorResult(&c, string(fault.Internal), "the call ended without a result"))
		}
	}
	return out
}

// finish stores the messages and records the execution's output.
func (s *Stepper) finish(ctx context.Context, cc workflow.Context, st *loop.State, base int) (*Result, error) {
	if cc.SessionID != "" && base <= len(st.Messages) {
		// Keyed by the execution: the step that finishes may run again (a retry), the history
		// takes its messages once.
		if err := AppendHistory(ctx, s.d.Store, cc.DeveloperID, cc.SessionID, "agent_loop/"+cc.ExecutionID, st.Messages[base:]); err != nil {
			return nil, err
		}
	}
	msgs, err := s.d.Store.StoreValue(ctx, cc.DeveloperID, st.Messages, workflow.PayloadTTL)
	if err != nil {
		return nil, fmt.Errorf("agent_loop: storing the messages: %w", err)
	}
	res := &Result{Messages: msgs, LastMessage: st.Last(), Usage: st.Usage, Iterations: st.Iterations, FinishReason: st.FinishReason, ToolResults: st.Results}
	if res.ToolResults == nil {
		res.ToolResults = []tool.Result{}
	}
	var obj any
	if err := jsonv.Convert(res, &obj); err != nil {
		return nil, err
	}
	if _, _, err := s.d.Store.SetExecutionStatus(ctx, cc.DeveloperID, cc.ExecutionID, store.ExecSucceeded, obj, nil); err != nil && !fault.Is(err, fault.NotFound) {
		return nil, fmt.Errorf("agent_loop: recording the output: %w", err)
	}
	return res, nil
}

// scopeMetadata is the task's or the session's metadata (nil for neither).
func (s *Stepper) scopeMetadata(ctx context.Context, cc workflow.Context) (map[string]any, error) {
	switch {
	case cc.TaskID != "":
		t, err := s.d.Store.GetTask(ctx, cc.DeveloperID, cc.TaskID)
		if err != nil {
			return nil, err
		}
		return t.Metadata, nil
	case cc.SessionID != "":
		x, err := s.d.Store.GetSession(ctx, cc.DeveloperID, cc.SessionID)
		if err != nil {
			return nil, err
		}
		return x.Metadata, nil
	}
	return nil, nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
