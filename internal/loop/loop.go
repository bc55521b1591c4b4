// Package loop is the model-tool loop that the chat route and the
// agent_loop state machine share: prompt the model with the formatted tools, run the calls it asks
// for, feed the results back, until it answers without calls or the iteration cap is reached.
//
// The model-tool machinery has three places: the model adapters (package llm and below it), the
// loop with its turns and hand-off (this package, with loop/toolfmt presenting tools to the model
// and loop/agentloop running one iteration per model Lambda invocation and starting agent_loop
// executions), and the chat HTTP service (package chat).
//
// The loop's whole memory is State, a plain JSON value, so agent_loop can run one iteration per
// Lambda invocation with the messages stored by reference. An iteration has three parts, exposed
// separately for that reason:
//   - Prompt calls the model once and plans the turn's calls into State.Turn, each with a sinew
//     envelope (tool.NewCallID, ModelCallID = the model's id) and a disposition: run by sinew,
//     pending (handed to the caller), or rejected (an unknown tool or arguments that are not a
//     JSON object: an error result the model sees, as Julep's "Tool 'x' not found");
//   - Execute runs the calls to run, concurrently with a bound, through a Runner (the chat path's
//     dispatcher); agent_loop runs them in its Map instead;
//   - Feed takes the results, appends one tool message per answered call in the model's order,
//     and decides whether the loop is done.
//
// Step is the three together, and Run steps until done. Choices:
//   - auto_run_tools false: every call the model makes goes back to the caller unexecuted (all
//     pending), OpenAI-style; the tools are still shown to the model.
//   - function calls: on the chat path they are pending: the loop runs the turn's other calls,
//     then stops with finish_reason tool_calls and hands them back; the caller answers them with
//     tool messages in its next request. With Config.RunFunctions (agent_loop, where a function
//     call is a task-token wait inside the Map) they are run like the others.
//   - an executor's error is a tool message {"error": message, "type": kind} the model sees; it
//     never fails the loop. A model error does fail the step (typed by the adapter), leaving the
//     state as it was before the step, so the caller may retry it.
//   - one reply's calls are bounded (Config.MaxCallsPerReply, 32 by default), and so are the calls
//     of a whole chat turn, shared with the chats it starts through session.chat
//     (Config.Budget): calls past either are answered to the model as Sinew.TooLarge errors and
//     never run, so one reply asking for 1,500 calls, or nested chats fanning out, cannot
//     multiply the work a single request starts.
//   - the cap counts model calls. The calls of the last allowed turn are still run, so the
//     conversation stays whole (every tool call answered) and a later request can continue it;
//     then the loop ends with finish_reason iteration_cap.
//   - usage is summed over every model call of the loop.
//   - a forced tool_choice (required, or a named tool) holds for the loop's first model call only;
//     later calls are auto, or the model could never give its answer.
package loop

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/llm"
	"sinew/internal/loop/toolfmt"
	"sinew/internal/store"
	"sinew/internal/tool"
)

// Defaults of a Config.
const (
	DefaultMaxIterations = 10
	MaxIterations        = 100 // the largest cap a caller may ask for
	DefaultConcurrency   = 8
	// DefaultMaxCallsPerReply bounds the calls of one model reply (SINEW_MAX_CALLS_PER_REPLY).
	DefaultMaxCallsPerReply = 32
	// DefaultMaxCallsPerTurn bounds the calls of one chat turn with the chats it starts
	// (SINEW_MAX_CALLS_PER_TURN).
	DefaultMaxCallsPerTurn = 128
	// BudgetTTL is how long a turn's count is kept: as long as a function call's default wait, so
	// an agent_loop that takes the turn over keeps counting on it.
	BudgetTTL = 31 * 24 * time.Hour
)

// StoreBudget is a turn's CallBudget counted in the table under the turn's id (store.TakeCalls),
// so every process that runs part of the turn draws on the one count.
type StoreBudget struct {
	Store       *store.Store
	DeveloperID string
	TurnID      string
	Max         int // DefaultMaxCallsPerTurn when 0
}

// Take implements CallBudget.
func (b StoreBudget) Take(ctx context.Context, n int) (int, error) {
	before, err := b.Store.TakeCalls(ctx, b.DeveloperID, b.TurnID, n, BudgetTTL)
	if err != nil {
		return 0, err
	}
	return min(max(b.Limit()-before, 0), n), nil
}

// Limit implements CallBudget.
func (b StoreBudget) Limit() int {
	if b.Max <= 0 {
		return DefaultMaxCallsPerTurn
	}
	return b.Max
}

// CallBudget is what the calls of one chat turn may still spend: one count shared by the turn's
// replies, the chats it starts through session.chat, and the agent_loop that may take it over,
// whatever process runs them.
type CallBudget interface {
	// Take asks for n calls and answers how many of them may run (0 to n), in order.
	Take(ctx context.Context, n int) (int, error)
	// Limit is the turn's whole budget, for the model's error message.
	Limit() int
}

// FinishIterationCap is the finish reason of a loop stopped by its cap.
const FinishIterationCap llm.FinishReason = "iteration_cap"

// Runner runs one call and gives its result; a failure is an error result, never a panic or an
// error value (dispatch.Dispatcher on the chat path). def is the tool's definition without setup.
type Runner interface {
	Run(ctx context.Context, call *tool.Call, def *tool.Tool) tool.Result
}

// RunnerFunc adapts a func to Runner.
type RunnerFunc func(ctx context.Context, call *tool.Call, def *tool.Tool) tool.Result

// Run implements Runner.
func (f RunnerFunc) Run(ctx context.Context, call *tool.Call, def *tool.Tool) tool.Result {
	return f(ctx, call, def)
}

// Config is what a loop needs besides its State: rebuilt for every invocation from the request or
// the state machine's input.
type Config struct {
	Model  llm.Model
	Runner Runner // may be nil when nothing is run (auto_run_tools false, or agent_loop's Prompt/Feed)
	Tools  []toolfmt.Formatted
	// ModelID overrides the adapter's model for this loop ("" keeps it).
	ModelID    string
	ToolChoice llm.ToolChoice
	Settings   llm.Settings
	// AutoRun is auto_run_tools.
	AutoRun bool
	// RunFunctions runs function calls through the Runner instead of handing them back.
	RunFunctions  bool
	MaxIterations int // DefaultMaxIterations when 0
	Concurrency   int // DefaultConcurrency when 0
	// MaxCallsPerReply bounds the calls sinew runs or hands back from one model reply
	// (DefaultMaxCallsPerReply when 0); the calls past it are answered to the model as errors.
	MaxCallsPerReply int
	// Budget, when set, bounds the calls sinew runs over the whole chat turn; the calls past it
	// are answered to the model as errors.
	Budget CallBudget
	// Resolve reads back a tool output stored by reference ({"sinew:ref", "bytes"}),
	// so the model sees the value and not the reference. Nil: outputs are shown as they are.
	Resolve func(ctx context.Context, v any) (any, error)
	// CallID, when set, names the sinew call of the model's call modelCallID in the loop's
	// iteration (counted from 1): a name derived from the turn lets a turn run again after a
	// crash reach the executors under the same ids, which answer what already ran instead of
	// running it twice. Nil: a random id (tool.NewCallID).
	CallID func(iteration int, modelCallID string) string
	Log    *slog.Logger
}

// MaxToolContent bounds the text of one tool message, in bytes. An executor may return up to
// 2 MB, but a session's history keeps each message in one DynamoDB item (400 KB) and
// a model's context window is finite, so a longer result is cut, with a marker saying so and where
// the whole value is.
const MaxToolContent = 128 << 10

// Loop runs the model-tool loop of one Config.
type Loop struct {
	cfg       Config
	functions []llm.Function
	byName    map[string]*toolfmt.Formatted
}

// New checks cfg and makes a Loop.
func New(cfg Config) (*Loop, error) {
	if cfg.Model == nil {
		return nil, fault.New(fault.Internal, "loop: no model")
	}
	switch {
	case cfg.MaxIterations == 0:
		cfg.MaxIterations = DefaultMaxIterations
	case cfg.MaxIterations < 0 || cfg.MaxIterations > MaxIterations:
		return nil, fault.Invalid("max_iterations", "max_iterations must be between 1 and %d", MaxIterations)
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.MaxCallsPerReply <= 0 {
		cfg.MaxCallsPerReply = DefaultMaxCallsPerReply
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	l := &Loop{cfg: cfg, byName: make(map[string]*toolfmt.Formatted, len(cfg.Tools))}
	for i := range cfg.Tools {
		f := &cfg.Tools[i]
		if f.Tool == nil || f.Function.Name != f.Tool.Name {
			return nil, fault.New(fault.Internal, "loop: tools[%d] is not a formatted tool", i)
		}
		if _, dup := l.byName[f.Tool.Name]; dup {
			return nil, fault.Invalid(fmt.Sprintf("tools[%d].name", i), "two tools are named %q: a model calls tools by name", f.Tool.Name)
		}
		l.byName[f.Tool.Name] = f
		l.functions = append(l.functions, f.Function)
	}
	if cfg.ToolChoice.Mode == llm.ChoiceNamed {
		if _, ok := l.byName[cfg.ToolChoice.Name]; !ok {
			return nil, fault.Invalid("tool_choice.function.name", "tool_choice names %q, which is not among the tools", cfg.ToolChoice.Name)
		}
	}
	return l, nil
}

// Disposition is what happens to a planned call.
type Disposition string

const (
	DispositionRun      Disposition = "run"      // sinew runs it
	DispositionPending  Disposition = "pending"  // handed back to the caller
	DispositionRejected Disposition = "rejected" // an error result the model sees
)

// Planned is one call of the current turn.
type Planned struct {
	ModelCallID string      `json:"model_call_id"`
	Name        string      `json:"name"`
	Disposition Disposition `json:"disposition"`
	// Call is the sinew envelope; for a rejected call it is nil.
	Call *tool.Call `json:"call,omitempty"`
	// Error is what the model is told about a rejected call.
	Error *tool.ResultError `json:"error,omitempty"`
	// RawArguments are the model's arguments when they are not a JSON object (pending calls
	// with auto_run_tools false keep them for the caller).
	RawArguments string `json:"raw_arguments,omitempty"`
}

// Pending is a call handed back to the caller (pending_calls).
type Pending struct {
	CallID      string    `json:"call_id"`
	ModelCallID string    `json:"model_call_id"`
	Tool        string    `json:"tool"`
	Type        tool.Type `json:"type,omitempty"` // "" for a tool the loop does not know
	Arguments   any       `json:"arguments"`      // the object, or the model's text when it is not one
}

// State is the loop's memory between iterations; it is plain JSON.
type State struct {
	// Messages is the whole conversation: the caller's messages and every message the loop added.
	Messages   []llm.Message `json:"messages"`
	Iterations int           `json:"iterations"`
	Usage      llm.Usage     `json:"usage"`
	// Turn holds the current turn's calls between Prompt and Feed.
	Turn []Planned `json:"turn,omitempty"`
	// Results are the result objects of the calls sinew ran, over the whole loop.
	Results []tool.Result `json:"tool_results"`
	// Pending are the calls handed back when the loop stopped for them.
	Pending      []Pending        `json:"pending_calls"`
	Done         bool             `json:"done"`
	FinishReason llm.FinishReason `json:"finish_reason,omitempty"`
	Model        string           `json:"model,omitempty"`
	Scripted     bool             `json:"scripted,omitempty"`
}

// NewState starts a loop over messages.
func NewState(messages []llm.Message) *State {
	return &State{Messages: messages, Results: []tool.Result{}, Pending: []Pending{}}
}

// Last gives the last assistant message, or the zero message.
func (s *State) Last() llm.Message {
	for i := len(s.Messages) - 1; i >= 0; i-- {
		if s.Messages[i].Role == llm.RoleAssistant {
			return s.Messages[i]
		}
	}
	return llm.Message{}
}

// Unanswered gives the ids of the last assistant message's tool calls that no later tool message
// answers. A request that leaves one unanswered is refused (422).
func Unanswered(messages []llm.Message) []string {
	last := -1
	for i := len(messages) - 1; i >= 0; i-- {
		if messages[i].Role == llm.RoleAssistant {
			last = i
			break
		}
	}
	if last < 0 {
		return nil
	}
	answered := map[string]bool{}
	for _, m := range messages[last+1:] {
		if m.Role == llm.RoleTool {
			answered[m.ToolCallID] = true
		}
	}
	var out []string
	for _, c := range messages[last].ToolCalls {
		if !answered[c.ID] {
			out = append(out, c.ID)
		}
	}
	return out
}

// Run steps until the loop is done. On an error it gives the state as the last whole step left it.
func (l *Loop) Run(ctx context.Context, st *State) (*State, error) {
	for !st.Done {
		if err := l.Step(ctx, st); err != nil {
			return st, err
		}
	}
	return st, nil
}

// Step runs one iteration: Prompt, Execute, Feed. It reports the loop done through st.Done. On a
// model error st is unchanged.
func (l *Loop) Step(ctx context.Context, st *State) error {
	if err := l.Prompt(ctx, st); err != nil || st.Done {
		return err
	}
	return l.Feed(ctx, st, l.Execute(ctx, st))
}

// Prompt calls the model and plans the turn into st.Turn. When the model asks for no tool, or the
// calls all go back to the caller (auto_run_tools false), the loop is done.
func (l *Loop) Prompt(ctx context.Context, st *State) error {
	if st.Done {
		return nil
	}
	if len(st.Turn) > 0 {
		return fault.New(fault.Internal, "loop: the previous turn's calls have not been fed back")
	}
	if ids := Unanswered(st.Messages); len(ids) > 0 {
		return fault.New(fault.Unprocessable, "the last assistant message's tool calls %s have no tool message answering them: answer each with {\"role\": \"tool\", \"tool_call_id\": <id>, \"content\": ...}", strings.Join(ids, ", "))
	}
	if st.Iterations >= l.cfg.MaxIterations {
		st.Done, st.FinishReason = true, FinishIterationCap
		return nil
	}
	choice := l.choiceAt(st.Iterations + 1)
	res, err := l.cfg.Model.Converse(ctx, llm.Request{
		Model: l.cfg.ModelID, Messages: st.Messages, Tools: l.functions,
		ToolChoice: choice, Settings: l.cfg.Settings,
	})
	if err != nil {
		return err
	}
	turn := make([]Planned, 0, len(res.Message.ToolCalls))
	for _, c := range res.Message.ToolCalls {
		turn = append(turn, l.plan(c, choice, st.Iterations+1))
	}
	if l.cfg.AutoRun {
		// Before st changes: a budget that cannot be read fails the step like a model error.
		if err := l.bound(ctx, turn); err != nil {
			return err
		}
	}
	st.Iterations++
	st.Usage = st.Usage.Add(res.Usage)
	st.Model, st.Scripted = res.Model, res.Scripted
	res.Message.Role = llm.RoleAssistant
	st.Messages = append(st.Messages, res.Message)
	st.Pending = []Pending{}
	l.cfg.Log.DebugContext(ctx, "model turn", "iteration", st.Iterations, "tool_calls", len(res.Message.ToolCalls), "finish_reason", res.FinishReason)
	if len(res.Message.ToolCalls) == 0 {
		st.Done, st.FinishReason = true, res.FinishReason
		return nil
	}
	st.Turn = turn
	if !l.cfg.AutoRun {
		st.Pending = pendingOf(st.Turn)
		st.Turn = nil
		st.Done, st.FinishReason = true, llm.FinishToolCalls
	}
	return nil
}

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

// ToRun gives the envelopes of the current turn's calls that sinew runs, with their definitions:
// what agent_loop's Map receives.
func (l *Loop) ToRun(st *State) (calls []*tool.Call, defs []*tool.Tool) {
	for _, p := range st.Turn {
		if p.Disposition == DispositionRun {
			calls = append(calls, p.Call)
			defs = append(defs, l.byName[p.Name].Tool)
		}
	}
	return calls, defs
}

// Execute runs the current turn's calls to run, at most Config.Concurrency at a time, and gives
// their results in the turn's order.
func (l *Loop) Execute(ctx context.Context, st *State) []tool.Result {
	calls, defs := l.ToRun(st)
	results := make([]tool.Result, len(calls))
	if len(calls) == 0 {
		return results
	}
	if l.cfg.Runner == nil {
		for i, c := range calls {
			results[i] = tool.ErrorResult(c, string(fault.Internal), "no runner is configured to run tools")
		}
		return results
	}
	sem := make(chan struct{}, l.cfg.Concurrency)
	var wg sync.WaitGroup
	for i := range calls {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			results[i] = l.runOne(ctx, calls[i], defs[i])
		})
	}
	wg.Wait()
	return results
}

func (l *Loop) runOne(ctx context.Context, c *tool.Call, def *tool.Tool) (res tool.Result) {
	defer func() {
		if r := recover(); r != nil {
			l.cfg.Log.ErrorContext(ctx, "tool runner panicked", "call_id", c.ID, "tool", def.Name, "panic", fmt.Sprint(r))
			res = tool.ErrorResult(c, string(fault.Internal), "the tool failed unexpectedly")
		}
	}()
	return l.cfg.Runner.Run(ctx, c, def)
}

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
