// Package loop is the model-tool loop that the chat route and the agent_loop state machine share.
//
// It prompts the model with the formatted tools, run the calls it asks for, feed the results back,
// until it answers without calls or the iteration cap is reached.
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

	"sinew/internal/fault"
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
	// Offer, when set, chooses the functions each model call is shown from the state (an agent
	// with many tools is shown a search tool and the most relevant ones); every tool of Tools
	// can still be called. Nil: all of Tools.
	Offer func(st *State) []llm.Function
	Log   *slog.Logger
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
	offered := l.functions
	if l.cfg.Offer != nil {
		offered = l.cfg.Offer(st)
	}
	res, err := l.cfg.Model.Converse(ctx, llm.Request{
		Model: l.cfg.ModelID, Messages: st.Messages, Tools: offered,
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
