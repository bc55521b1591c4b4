// Package deploy is the one description of sinew's functions and state machines: their
// names, purposes, sizes, time limits, environment, abstract permissions and the state machines'
// definition substitutions. infra/cdk turns it into AWS resources and IAM policies; infra/local wires
// the same functions and definitions on one machine, so what runs locally is what is deployed.
// It is plain data: no AWS types, nothing that knows how either side builds it.
package deploy

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"time"

	"sinew/internal/config"
)

// Every function is a Go binary named bootstrap on the provided.al2023 runtime, built for arm64
// (`make build`); local mode builds for the host when it runs them under the Runtime Interface
// Emulator.
const (
	Runtime      = "provided.al2023"
	Handler      = "bootstrap"
	Architecture = "arm64"
)

// MaxHTTPTimeout is API Gateway HTTP API's integration timeout: a function behind it that runs longer
// is cut off anyway.
const MaxHTTPTimeout = 30 * time.Second

// MaxInvokerTimeout is the longest timeout of a function that may invoke another (an InvokeFunction
// permission): a function that invokes another synchronously holds its concurrency slot and is
// billed while the other runs, so a long wait on another function belongs to a state machine.
const MaxInvokerTimeout = 60 * time.Second

// ItemKind names a kind of record in the one table (package store). Permissions name item kinds so a
// reader sees what each function touches; the CDK grants on the table (DynamoDB's IAM cannot tell
// kinds of items apart by sort key), and a test keeps each function's list honest against its needs.
type ItemKind string

const (
	ItemAgents       ItemKind = "agents"     // with their metadata
	ItemTools        ItemKind = "tools"      // per agent or task
	ItemTasks        ItemKind = "tasks"      //
	ItemUsers        ItemKind = "users"      //
	ItemDocs         ItemKind = "docs"       //
	ItemSessions     ItemKind = "sessions"   // with their metadata
	ItemMessages     ItemKind = "messages"   // a session's history
	ItemSecrets      ItemKind = "secrets"    // developer-level named secrets (sealed)
	ItemSetup        ItemKind = "setup"      // metadata setup and tools' integration.setup (sealed)
	ItemFlags        ItemKind = "flags"      //
	ItemExecutions   ItemKind = "executions" //
	ItemPendingCalls ItemKind = "pending_calls"
	ItemIdempotency  ItemKind = "idempotency" // Idempotency-Key records and executors' results by call id
	ItemPayloads     ItemKind = "payloads"    // stored values that travel as sinew:ref
)

// Action is an abstract permission.
type Action string

const (
	TableRead          Action = "table:read"          // Items: the item kinds read
	TableWrite         Action = "table:write"         // Items: the item kinds written (put, update, delete)
	InvokeFunction     Action = "lambda:invoke"       // Target: a function's name
	InvokeToolFunction Action = "lambda:invoke-tools" // the developers' functions the operator named (SINEW_AWS_LAMBDA_FUNCTIONS), for aws_lambda tools
	StartExecution     Action = "states:start"        // Target: a state machine's name
	StartSyncExecution Action = "states:start-sync"   // Target: an Express state machine; start and wait for its end
	ManageExecution    Action = "states:manage"       // Target: a state machine; stop its executions
	DescribeExecution  Action = "states:describe"     // Target: a state machine; whether an execution exists
	SendTaskResult     Action = "states:task-result"  // Target: a state machine; SendTaskSuccess/Failure/Heartbeat
	AnswerOwnTask      Action = "states:task-answer"  // Target: a state machine; SendTaskSuccess/Failure (an executor's own token)
	SecretsKeyEncrypt  Action = "kms:encrypt"         // generate data keys with the secrets key (seal)
	SecretsKeyDecrypt  Action = "kms:decrypt"         // decrypt with the secrets key (unseal); only executors
	PutEvents          Action = "events:put"          // publish to the event bus (SINEW_EVENT_BUS)
	BedrockInvoke      Action = "bedrock:invoke"      // Converse with the configured models
	ReadModelKeySecret Action = "secretsmanager:read" // read SINEW_OPENAI_KEY_SECRET
	// ManageTaskMachines: create, update, delete and describe Julep tasks' state machines
	// (TaskMachines), pass them their role, start their executions and read their histories.
	ManageTaskMachines Action = "states:task-machines"
)

// TaskMachines is the pattern of Julep tasks' state machine names (package julep/taskmachine names
// each task-<task id>), which the grants of ManageTaskMachines and the task role name.
const TaskMachines = "task-*"

// Permission is one abstract grant.
type Permission struct {
	Action Action
	Items  []ItemKind // for TableRead and TableWrite
	Target string     // for InvokeFunction (a function) and the states:* actions (a state machine)
}

// ValueKind says where a variable's or placeholder's value comes from.
type ValueKind string

const (
	TableName       ValueKind = "table-name"        // the table's name
	FunctionName    ValueKind = "function-name"     // Target's deployed name
	FunctionARN     ValueKind = "function-arn"      // Target's ARN
	StateMachineARN ValueKind = "state-machine-arn" // Target's ARN
	SecretsKeyID    ValueKind = "secrets-key"       // the secrets KMS key's ARN
	EventBusName    ValueKind = "event-bus"         // the event bus's name
	TaskRoleARN     ValueKind = "task-role-arn"     // the role Julep tasks' state machines run as
	OperatorSetting ValueKind = "setting"           // the operator's setting (a CDK context value, local mode's environment), else the default
)

// Value says where a value comes from: Kind, and for functions and state machines which one.
type Value struct {
	Kind   ValueKind
	Target string
}

// Trigger is what invokes a function besides other functions and state machines.
type Trigger string

const (
	TriggerHTTP             Trigger = "http"              // API Gateway HTTP API routes (payload 2.0)
	TriggerHTTPChat         Trigger = "http-chat"         // the chat route alone: POST /sessions/{session_id}/chat
	TriggerExecutionChanged Trigger = "execution-changed" // Step Functions "Execution Status Change" events of sinew's state machines
	// TriggerSweep is a schedule's "Scheduled Event" (an EventBridge rule's rate, or EventBridge
	// Scheduler's, every SweepPeriod): the sweep of the records whose status change was lost.
	TriggerSweep Trigger = "sweep"
)

// SweepPeriod is how often the sweep runs: a lost status change delays a record by about this
// (a read of the record settles it at once).
const SweepPeriod = 5 * time.Minute

// Function describes one Lambda: Name is its folder under functions/.
type Function struct {
	Name        string
	Purpose     string
	MemoryMB    int
	Timeout     time.Duration
	Env         []string // the config variables it gets (config.Env*, config.FunctionEnv, config.ProviderEnv)
	Permissions []Permission
	Triggers    []Trigger
}

// Substitution is one ${Placeholder} of a state machine definition and the value put in its place.
type Substitution struct {
	Placeholder string // without ${ }
	Value       Value
}

// StateMachine describes one Step Functions state machine.
type StateMachine struct {
	Name          string
	File          string // relative to the module root
	Type          string // STANDARD or EXPRESS
	Purpose       string
	Substitutions []Substitution
}

// State machine names.
const (
	ToolCall  = "tool_call"
	AgentLoop = "agent_loop"
)

// The item kinds a caller's own resources span: what the api and system functions manage.
var resourceItems = []ItemKind{ItemAgents, ItemTools, ItemTasks, ItemUsers, ItemDocs, ItemSessions, ItemMessages, ItemFlags}

// common environment: every function reads the table and logs with the request's developer.
var base = []string{config.EnvTable}

func env(extra ...string) []string { return append(slices.Clone(base), extra...) }

func invokes(names ...string) []Permission {
	var ps []Permission
	for _, n := range names {
		ps = append(ps, Permission{Action: InvokeFunction, Target: n})
	}
	return ps
}

// modelEnv is what a function that prompts a model needs, the bounds on the calls it starts included.
var modelEnv = []string{config.EnvModel, config.EnvOpenAIBaseURL, config.EnvOpenAIKey, config.EnvMaxCallsPerReply, config.EnvMaxCallsPerTurn, config.EnvToolSearchThreshold}

// executors are the functions that run a tool call of each automatic type.
var executors = []string{"integration", "apicall", "system"}

// Functions describes every function, in config.Functions order.
func Functions() []Function {
	return []Function{
		{
			Name:     "api",
			Purpose:  "every HTTP route but chat: resources, secrets, flags, tool calls, executions, payloads, the catalogue",
			MemoryMB: 512,
			Timeout:  29 * time.Second,
			Env: env(config.EnvJWTClaim, config.EnvFlagDefaults, config.EnvToolCallARN, config.EnvToolCallExpressARN, config.EnvAgentLoopARN,
				config.EnvSecretsKey, config.EnvMCPWait, config.EnvJWTIssuer, config.EnvTaskRoleARN, config.EnvToolSearchThreshold, config.FunctionEnv("integration"),
				// Task machines invoke prepare to evaluate expressions that do not compile to JSONata.
				config.FunctionEnv("prepare")),
			Permissions: []Permission{
				// POST .../tools/mcp lists a remote server's tools through the integration function,
				// which opens the setup's secrets; the api function never unseals.
				{Action: InvokeFunction, Target: "integration"},
				{Action: TableRead, Items: append(slices.Clone(resourceItems), ItemSecrets, ItemSetup, ItemExecutions, ItemPendingCalls, ItemIdempotency, ItemPayloads)},
				{Action: TableWrite, Items: append(slices.Clone(resourceItems), ItemSecrets, ItemSetup, ItemExecutions, ItemPendingCalls, ItemIdempotency, ItemPayloads)},
				{Action: SecretsKeyEncrypt}, // seals setup and secrets as they are written; never unseals
				{Action: StartExecution, Target: ToolCall},
				{Action: StartSyncExecution, Target: ToolCallExpress},
				{Action: StartExecution, Target: AgentLoop},
				{Action: ManageExecution, Target: ToolCall},
				{Action: ManageExecution, Target: AgentLoop},
				{Action: DescribeExecution, Target: ToolCall},
				{Action: DescribeExecution, Target: AgentLoop},
				{Action: SendTaskResult, Target: ToolCall},
				{Action: SendTaskResult, Target: AgentLoop},
				{Action: ManageTaskMachines},
			},
			Triggers: []Trigger{TriggerHTTP},
		},
		{
			Name:     "chat",
			Purpose:  "POST /sessions/{session_id}/chat: the model-tool loop within the request's time budget, else agent_loop",
			MemoryMB: 1024,
			Timeout:  MaxHTTPTimeout,
			Env: env(append(slices.Clone(modelEnv), config.EnvJWTClaim, config.EnvFlagDefaults, config.EnvChatBudget,
				config.EnvAgentLoopARN, config.FunctionEnv("integration"), config.FunctionEnv("apicall"),
				config.FunctionEnv("system"))...),
			Permissions: append([]Permission{
				{Action: TableRead, Items: []ItemKind{ItemAgents, ItemTools, ItemTasks, ItemSessions, ItemMessages, ItemFlags, ItemIdempotency, ItemPayloads}},
				{Action: TableWrite, Items: []ItemKind{ItemSessions, ItemMessages, ItemExecutions, ItemPendingCalls, ItemIdempotency, ItemPayloads}},
				{Action: StartExecution, Target: AgentLoop},
				{Action: DescribeExecution, Target: AgentLoop},
				{Action: BedrockInvoke},
				{Action: ReadModelKeySecret},
			}, invokes(executors...)...),
			Triggers: []Trigger{TriggerHTTPChat},
		},
		{
			Name: "prepare",
			Purpose: "tool_call's Prepare for a request that names only the tool: records the execution, finds the tool, builds the call " +
				"envelope for the state machine to invoke its function; Dispatch's token it answers with Sinew.Prepare",
			MemoryMB: 256,
			// A few DynamoDB requests and one answer to a token: it waits on no other function (the
			// Event invocations below are queued, not waited for).
			Timeout: 30 * time.Second,
			Env:     env(config.FunctionEnv("integration"), config.FunctionEnv("apicall"), config.FunctionEnv("system")),
			Permissions: append([]Permission{
				{Action: TableRead, Items: []ItemKind{ItemAgents, ItemTools, ItemTasks, ItemSessions, ItemExecutions}},
				{Action: TableWrite, Items: []ItemKind{ItemExecutions}},
				{Action: AnswerOwnTask, Target: ToolCall}, // answers Dispatch's token with Sinew.Prepare
				// Event invocations that hand a call of tool_call v4 and v5's executions, whose Dispatch gave
				// prepare the request with its token, to its executor; not needed once none runs.
			}, invokes(executors...)...),
		},
		{
			Name:     "function",
			Purpose:  "a client-side call: records the pending call and its task token, publishes ToolCallPending",
			MemoryMB: 256,
			Timeout:  30 * time.Second,
			Env:      env(config.EnvEventBus, config.EnvPendingEvents),
			Permissions: []Permission{
				{Action: TableRead, Items: []ItemKind{ItemExecutions, ItemPendingCalls}},
				{Action: TableWrite, Items: []ItemKind{ItemExecutions, ItemPendingCalls}},
				{Action: PutEvents},
			},
		},
		{
			Name: "integration",
			Purpose: "an integration call: merges setup and arguments, runs the provider through the guarded dialer, " +
				"records the result by call id",
			MemoryMB: 1536, // ffmpeg and the remote browser work on media and pages in memory
			Timeout:  300 * time.Second,
			Env:      env(append([]string{config.EnvSecretsKey, config.EnvAPICallAllow, config.EnvLambdaTools}, config.ProviderEnvs()...)...),
			Permissions: []Permission{
				// A tool_call's claim and outcome are on its execution's record; the chat path's claims
				// are idempotency records.
				{Action: TableRead, Items: []ItemKind{ItemAgents, ItemTasks, ItemSessions, ItemSetup, ItemSecrets, ItemIdempotency, ItemPayloads, ItemExecutions}},
				{Action: TableWrite, Items: []ItemKind{ItemIdempotency, ItemPayloads, ItemExecutions}},
				{Action: SecretsKeyDecrypt},
				{Action: AnswerOwnTask, Target: ToolCall}, // answers tool_call's Dispatch token
				{Action: InvokeToolFunction},              // aws_lambda tools: only the functions the operator named
			},
		},
		{
			Name:     "apicall",
			Purpose:  "an api_call: merges the request parts, sends them through the guarded dialer, records the result by call id",
			MemoryMB: 512,
			Timeout:  630 * time.Second, // api_call.timeout is at most 600 s; the rest stores the result
			Env:      env(config.EnvSecretsKey, config.EnvAPICallAllow),
			Permissions: []Permission{
				// A tool_call's claim and outcome are on its execution's record; the chat path's claims
				// are idempotency records.
				{Action: TableRead, Items: []ItemKind{ItemAgents, ItemTasks, ItemSessions, ItemSetup, ItemSecrets, ItemIdempotency, ItemPayloads, ItemExecutions}},
				{Action: TableWrite, Items: []ItemKind{ItemIdempotency, ItemPayloads, ItemExecutions}},
				{Action: SecretsKeyDecrypt},
				{Action: AnswerOwnTask, Target: ToolCall}, // answers tool_call's Dispatch token
			},
		},
		{
			Name:     "system",
			Purpose:  "a system call: an operation on the caller's own resources, session.chat bounded in depth",
			MemoryMB: 512,
			// Its operations are the api function's routes (under 30 s) and a chat, which runs up to
			// SINEW_CHAT_BUDGET_S (under 30 s) before agent_loop takes over. A chat invokes the
			// executors and waits for them, so the timeout stays short: a longer wait belongs to a
			// state machine.
			Timeout: 60 * time.Second,
			// What chat reads too: session.chat and task.execution.create run the chat service here.
			Env: env(append(slices.Clone(modelEnv), config.EnvFlagDefaults, config.EnvChatBudget, config.EnvAgentLoopARN,
				config.FunctionEnv("integration"), config.FunctionEnv("apicall"), config.FunctionEnv("system"))...),
			Permissions: append([]Permission{
				{Action: TableRead, Items: append(slices.Clone(resourceItems), ItemIdempotency, ItemPayloads, ItemExecutions)},
				{Action: TableWrite, Items: append(slices.Clone(resourceItems), ItemIdempotency, ItemPayloads, ItemExecutions)},
				{Action: AnswerOwnTask, Target: ToolCall}, // answers tool_call's Dispatch token
				{Action: BedrockInvoke},
				{Action: ReadModelKeySecret},
			}, invokes(executors...)...),
		},
		{
			Name:     "model",
			Purpose:  "agent_loop's model step: prompts the model with the formatted tools, returns its message and call envelopes",
			MemoryMB: 512,
			Timeout:  300 * time.Second,
			Env:      env(modelEnv...),
			Permissions: []Permission{
				// The model step records the agent_loop execution and its outcome, settles function calls
				// whose wait ran out, reads the auto_tool_calls_prompt_step flag, and appends a
				// session's history when it continues a chat.
				{Action: TableRead, Items: []ItemKind{ItemAgents, ItemTools, ItemTasks, ItemSessions, ItemMessages, ItemPayloads, ItemFlags, ItemExecutions, ItemPendingCalls}},
				{Action: TableWrite, Items: []ItemKind{ItemMessages, ItemPayloads, ItemExecutions, ItemPendingCalls}},
				{Action: BedrockInvoke},
				{Action: ReadModelKeySecret},
			},
		},
		{
			Name: "settle",
			Purpose: "brings execution records and pending calls to their final state, from the state machines, from Execution Status Change " +
				"events, and on a schedule from DescribeExecution for the open records whose event was lost",
			MemoryMB: 256,
			Timeout:  30 * time.Second,
			// The sweep names the executions of open records by their state machines' ARNs.
			Env: env(config.EnvToolCallARN, config.EnvAgentLoopARN),
			Permissions: []Permission{
				// The tool's owners, to build a failed call again when the request named only the tool.
				{Action: TableRead, Items: []ItemKind{ItemAgents, ItemTools, ItemTasks, ItemSessions, ItemExecutions, ItemPendingCalls, ItemPayloads}},
				{Action: TableWrite, Items: []ItemKind{ItemExecutions, ItemPendingCalls, ItemPayloads}},
				{Action: DescribeExecution, Target: ToolCall},
				{Action: DescribeExecution, Target: AgentLoop},
			},
			Triggers: []Trigger{TriggerExecutionChanged, TriggerSweep},
		},
	}
}

// fnArn is the substitution of the ARN of function name, as ${<Name>FunctionArn}.
func fnArn(name string) Substitution {
	return Substitution{Placeholder: capitalize(name) + "FunctionArn", Value: Value{Kind: FunctionARN, Target: name}}
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// StateMachines describes every state machine.
func StateMachines() []StateMachine {
	return []StateMachine{
		{
			Name:    ToolCall,
			File:    "statemachines/tool_call.asl.json",
			Type:    "STANDARD",
			Purpose: "one tool call in one Task that waits for its token (Dispatch), invoking the function of the call's type; a request naming only the tool goes Prepare, Prepared, then Dispatch (a function call Function); settle only after a failure",
			Substitutions: []Substitution{
				fnArn("prepare"), fnArn("function"), fnArn("integration"), fnArn("apicall"), fnArn("system"), fnArn("settle"),
			},
		},
		{
			Name: ToolCallExpress,
			File: ExpressFile,
			Type: "EXPRESS",
			Purpose: "tool_call's states for a server-side call that fits in five minutes, started synchronously so POST /tool-calls " +
				"answers with the result: Dispatch invokes the executor request-response; derived from tool_call's definition",
			Substitutions: []Substitution{
				fnArn("prepare"), fnArn("integration"), fnArn("apicall"), fnArn("system"), fnArn("settle"),
			},
		},
		{
			Name:    AgentLoop,
			File:    "statemachines/agent_loop.asl.json",
			Type:    "STANDARD",
			Purpose: "the model-tool loop: the model step, a Map of the calls through the per-type Tasks, until an answer or the cap",
			Substitutions: []Substitution{
				fnArn("model"), fnArn("function"), fnArn("integration"), fnArn("apicall"), fnArn("system"),
			},
		},
	}
}

// FunctionByName gives the description of the function in folder name.
func FunctionByName(name string) (Function, bool) {
	for _, f := range Functions() {
		if f.Name == name {
			return f, true
		}
	}
	return Function{}, false
}

// StateMachineByName gives the description of a state machine.
func StateMachineByName(name string) (StateMachine, bool) {
	for _, m := range StateMachines() {
		if m.Name == name {
			return m, true
		}
	}
	return StateMachine{}, false
}

// ValueOf says where the value of config variable name comes from when the system is stood up: the
// table, another function's deployed name, a state machine's ARN, the secrets key, the event bus, or
// the operator's own setting (with config's default when unset).
func ValueOf(name string) Value {
	switch name {
	case config.EnvTable:
		return Value{Kind: TableName}
	case config.EnvToolCallARN:
		return Value{Kind: StateMachineARN, Target: ToolCall}
	case config.EnvToolCallExpressARN:
		return Value{Kind: StateMachineARN, Target: ToolCallExpress}
	case config.EnvAgentLoopARN:
		return Value{Kind: StateMachineARN, Target: AgentLoop}
	case config.EnvSecretsKey:
		return Value{Kind: SecretsKeyID}
	case config.EnvEventBus:
		return Value{Kind: EventBusName}
	case config.EnvTaskRoleARN:
		return Value{Kind: TaskRoleARN}
	}
	for _, f := range config.Functions {
		if name == config.FunctionEnv(f) {
			return Value{Kind: FunctionName, Target: f}
		}
	}
	return Value{Kind: OperatorSetting}
}

// Allows reports whether f holds a permission with action on target (target "" for untargeted
// actions).
func (f Function) Allows(action Action, target string) bool {
	for _, p := range f.Permissions {
		if p.Action == action && p.Target == target {
			return true
		}
	}
	return false
}

var placeholderRE = regexp.MustCompile(`\$\{([^}]*)\}`)

// CheckPlaceholders reports, as one error, the placeholders def uses that m does not define and
// those m defines that def never uses.
func (m StateMachine) CheckPlaceholders(def []byte) error {
	used := map[string]bool{}
	for _, sm := range placeholderRE.FindAllSubmatch(def, -1) {
		used[string(sm[1])] = true
	}
	defined := map[string]bool{}
	for _, s := range m.Substitutions {
		defined[s.Placeholder] = true
	}
	var errs []error
	for _, p := range slices.Sorted(maps.Keys(used)) {
		if !defined[p] {
			errs = append(errs, fmt.Errorf("%s uses ${%s}, which the description of %s does not define", m.File, p, m.Name))
		}
	}
	for _, s := range m.Substitutions {
		if !used[s.Placeholder] {
			errs = append(errs, fmt.Errorf("the description of %s defines ${%s}, which %s never uses", m.Name, s.Placeholder, m.File))
		}
	}
	return errors.Join(errs...)
}

// Render puts each substitution's value, given by resolve, in place of its placeholder in def, as
// CloudFormation's DefinitionSubstitutions do; local mode runs the result. Values are JSON-escaped,
// since placeholders stand inside JSON strings.
func (m StateMachine) Render(def []byte, resolve func(Value) (string, error)) ([]byte, error) {
	if err := m.CheckPlaceholders(def); err != nil {
		return nil, err
	}
	values := map[string]string{}
	for _, s := range m.Substitutions {
		v, err := resolve(s.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: ${%s}: %w", m.Name, s.Placeholder, err)
		}
		q, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%s: ${%s}: %w", m.Name, s.Placeholder, err)
		}
		values[s.Placeholder] = string(q[1 : len(q)-1])
	}
	return placeholderRE.ReplaceAllFunc(def, func(p []byte) []byte {
		return []byte(values[string(p[2:len(p)-1])])
	}), nil
}
