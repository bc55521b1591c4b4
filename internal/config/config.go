// Package config is sinew's configuration.
//
// It holds every environment variable with its default, parsed and validated once at start, so a
// bad setting stops a function at its first cold start with a message naming the variable instead
// of failing a call later.
package config

import (
	"errors"
	"math"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"sinew/internal/fault"
	"sinew/internal/netguard"
	"sinew/internal/tool"
)

// The variables' names. Code that sets them (infra/cdk, infra/local, internal/deploy) uses these
// constants so a rename cannot leave one side behind.
const (
	EnvTable        = "SINEW_TABLE"
	EnvToolCallARN  = "SINEW_TOOL_CALL_ARN"
	EnvAgentLoopARN = "SINEW_AGENT_LOOP_ARN"
	// EnvToolCallExpressARN is tool_call_express's ARN: unset, every call runs on tool_call.
	EnvToolCallExpressARN = "SINEW_TOOL_CALL_EXPRESS_ARN"
	EnvTaskRoleARN        = "SINEW_TASK_ROLE_ARN"
	EnvModel              = "SINEW_MODEL"
	EnvOpenAIBaseURL      = "SINEW_OPENAI_BASE_URL"
	EnvOpenAIKey          = "SINEW_OPENAI_KEY_SECRET"
	EnvOpenAIAPIKey       = "SINEW_OPENAI_API_KEY"
	EnvAPICallAllow       = "SINEW_APICALL_ALLOW"
	// EnvLambdaTools names the developers' Lambda functions aws_lambda tools may invoke (the stack
	// grants lambda:InvokeFunction on exactly these).
	EnvLambdaTools  = "SINEW_AWS_LAMBDA_FUNCTIONS"
	EnvFlagDefaults = "SINEW_FLAG_DEFAULTS"
	EnvJWTClaim     = "SINEW_JWT_CLAIM"
	EnvChatBudget   = "SINEW_CHAT_BUDGET_S"
	EnvMCPWait      = "SINEW_MCP_WAIT_S"
	EnvJWTIssuer    = "SINEW_JWT_ISSUER"
	EnvSecretsKey   = "SINEW_SECRETS_KEY"
	EnvEventBus     = "SINEW_EVENT_BUS"
	// EnvPendingEvents turns the function executor's ToolCallPending events on or off: each is an
	// EventBridge PutEvents, billed per call, and worth it only to a client that subscribes.
	EnvPendingEvents = "SINEW_PENDING_EVENTS"
	// The bounds on the tool calls a model may start (package loop).
	EnvMaxCallsPerReply = "SINEW_MAX_CALLS_PER_REPLY"
	// EnvToolSearchThreshold is how many tools an agent has before a chat and the MCP server offer
	// sinew_search_tools and the most relevant tools instead of all of them.
	EnvToolSearchThreshold = "SINEW_TOOL_SEARCH_THRESHOLD"
	EnvMaxCallsPerTurn     = "SINEW_MAX_CALLS_PER_TURN"
)

// The largest values the call bounds accept: generous, but bounded, so a typo cannot switch the
// bound off. A turn's calls are bounded further by Step Functions' 25,000 history events per
// execution: an agent_loop call costs about 11 events and a model reply 24, so 1,500 calls over
// 100 replies stay near 19,000 (internal/e2e's TestAgentLoopHistoryFitsTheCallBounds measures it).
const (
	MaxCallsPerReplyLimit = 1000
	MaxCallsPerTurnLimit  = 1500
)

// Functions are the folders under functions/, one per Lambda. Each has a
// SINEW_FUNCTION_<NAME> variable holding its deployed name; internal/deploy describes each of them.
var Functions = []string{"api", "chat", "prepare", "function", "integration", "apicall", "system", "model", "settle"}

// FunctionEnv is the variable holding the deployed name of the function in folder name.
func FunctionEnv(name string) string { return "SINEW_FUNCTION_" + strings.ToUpper(name) }

// ProviderEnv is the variable that overrides the base URL of an integration provider.
func ProviderEnv(provider string) string {
	return "SINEW_" + strings.ToUpper(provider) + "_BASE_URL"
}

// Flags known to sinew (Julep's names), and their deploy-time default when
// SINEW_FLAG_DEFAULTS does not set them.
const (
	FlagAutoRunToolsChat        = "auto_run_tools_chat"
	FlagAutoToolCallsPromptStep = "auto_tool_calls_prompt_step"
)

// Flags lists the known flags.
var Flags = []string{FlagAutoRunToolsChat, FlagAutoToolCallsPromptStep}

// MaxChatBudget is API Gateway HTTP API's integration timeout: a chat answered later is lost.
const MaxChatBudget = 30 * time.Second

// Config is the parsed configuration.
type Config struct {
	Table        string
	ToolCallARN  string
	AgentLoopARN string
	// ToolCallExpressARN is tool_call_express's ARN ("" when not deployed: every call on tool_call).
	ToolCallExpressARN string
	// TaskRoleARN is the role Julep tasks' state machines run as (the api function creates them).
	TaskRoleARN string
	// FunctionNames maps a function's folder (config.Functions) to its deployed name.
	FunctionNames map[string]string
	Model         Model
	OpenAIBaseURL string
	OpenAIKey     string // the Secrets Manager secret holding the OpenAI-compatible endpoint's key
	// OpenAIAPIKey is that key itself, from the environment: for local mode, which has no Secrets
	// Manager. A secret value: never logged or printed.
	OpenAIAPIKey string
	APICallAllow netguard.Allowlist // parsed by the guard's own parser, so both read it alike
	FlagDefaults map[string]bool    // every known flag, with its default
	JWTClaim     string
	ChatBudget   time.Duration
	SecretsKey   string // the KMS key of setup secrets
	EventBus     string
	// PendingEvents: the function executor announces each pending call (ToolCallPending).
	PendingEvents bool
	// MaxCallsPerReply bounds the tool calls sinew runs from one model reply; MaxCallsPerTurn the
	// calls of one chat turn with the chats it starts through session.chat.
	MaxCallsPerReply int
	MaxCallsPerTurn  int
	// ProviderBaseURLs maps a provider (tool.Providers) to its base URL override; absent means the
	// provider's public endpoint.
	ProviderBaseURLs map[string]string
	// MCPWait is how long an MCP tools/call waits for its execution before it answers with the
	// execution id instead.
	MCPWait time.Duration
	// ToolSearchThreshold: past this many tools a model (or an MCP client) is shown a search tool
	// and the most relevant tools, at most this many in all.
	ToolSearchThreshold int
	// JWTIssuer is the issuer of the API's bearer tokens, named by the OAuth protected-resource
	// metadata; empty leaves it out (local mode mints its own tokens).
	JWTIssuer string
}

// Model is SINEW_MODEL parsed: Provider is bedrock, openai or scripted; Name the model id, the
// model name or the script file.
type Model struct {
	Provider string
	Name     string
}

func (m Model) String() string { return m.Provider + ":" + m.Name }

// Model providers accepted in SINEW_MODEL.
var modelProviders = []string{"bedrock", "openai", "scripted"}

// Var documents one variable.
type Var struct {
	Name    string
	Default string
	Doc     string
}

// Variables lists every variable sinew reads, with its default and a one-line doc, in a stable
// order (internal/config/README.md prints it).
func Variables() []Var {
	vs := []Var{
		{EnvTable, "sinew", "the DynamoDB table holding every record"},
		{EnvToolCallARN, "", "the ARN of the tool_call state machine (needed by the routes that start it)"},
		{EnvToolCallExpressARN, "", "the ARN of the tool_call_express state machine: server-side calls answered in the request (unset: all on tool_call)"},
		{EnvAgentLoopARN, "", "the ARN of the agent_loop state machine (needed by chat and task executions)"},
		{EnvTaskRoleARN, "", "the ARN of the role Julep tasks' state machines run as (needed to save a task with workflows)"},
	}
	for _, f := range Functions {
		vs = append(vs, Var{FunctionEnv(f), f, "the deployed name of the " + f + " function"})
	}
	vs = append(vs,
		Var{EnvModel, defaultModel, "the default model: bedrock:<model id>, openai:<model> or scripted:<file>"},
		Var{EnvOpenAIBaseURL, "", "the base URL of an OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, LiteLLM)"},
		Var{EnvOpenAIKey, "", "the Secrets Manager secret holding that endpoint's API key"},
		Var{EnvOpenAIAPIKey, "", "that endpoint's API key itself, for local mode (which has no Secrets Manager); never deployed to AWS"},
		Var{EnvAPICallAllow, "", "comma-separated CIDRs and host:port targets the guarded dialer allows although their address is refused"},
		Var{EnvFlagDefaults, "auto_run_tools_chat=false,auto_tool_calls_prompt_step=false", "the developers' flag defaults, name=true|false, comma-separated"},
		Var{EnvJWTClaim, "sub", "the JWT claim that holds the developer id"},
		Var{EnvChatBudget, "25", "seconds a synchronous chat may run before it answers 202 and goes on as agent_loop (under 30)"},
		Var{EnvMCPWait, "25", "seconds an MCP tools/call waits for its execution before it answers with the execution id (under 30)"},
		Var{EnvJWTIssuer, "", "the issuer of the API's bearer tokens, named in /.well-known/oauth-protected-resource"},
		Var{EnvSecretsKey, "", "the KMS key (id, ARN or alias) that encrypts setup secrets"},
		Var{EnvEventBus, "default", "the EventBridge bus that receives ToolCallPending events"},
		Var{EnvPendingEvents, "on", "on: the function executor puts a ToolCallPending event for every pending function call (an EventBridge custom event, $1.00 per million); off: none, clients learn of calls from GET /calls?status=pending"},
		Var{EnvToolSearchThreshold, "30", "past this many tools, a chat shows the model sinew_search_tools and the tools most relevant to the turn, and the MCP server lists the search tool first, this many tools in all (2 to 128)"},
		Var{EnvMaxCallsPerReply, "32", "tool calls sinew runs from one model reply; the rest are answered to the model as errors (at most 1000)"},
		Var{EnvMaxCallsPerTurn, "128", "tool calls one chat turn runs, shared with the chats it starts through session.chat; the rest are answered as errors (at most 1500, which keeps an agent_loop turn under Step Functions' 25,000 history events)"},
	)
	for _, p := range urlProviders() {
		vs = append(vs, Var{ProviderEnv(p), "", "the base URL of the " + p + " provider, instead of its public endpoint"})
	}
	return append(vs, providerSettings...)
}

// providerSettings are the providers' own settings beyond their base URLs (read by the providers
// through integrations.Env, listed here so internal/config/README.md documents them).
var providerSettings = []Var{
	{EnvLambdaTools, "", "the Lambda functions aws_lambda tools may invoke, comma-separated: names, name:qualifier or ARNs, each may end in * for a prefix (deployed, the stack grants lambda:InvokeFunction on exactly these)"},
	{"SINEW_EMAIL_CA_FILE", "", "a PEM file of extra CAs the email provider trusts for STARTTLS (certificates are always verified)"},
	{"SINEW_FFMPEG_PATH", "ffmpeg on PATH (/opt/bin in the layer)", "the ffmpeg binary the ffmpeg provider runs"},
	{"SINEW_GOOGLE_SHEETS_TOKEN_URL", "the service account's token_uri", "where google_sheets exchanges its service-account JWT for a token"},
	{"SINEW_GOOGLE_SHEETS_SERVICE_ACCOUNT_JSON", "", "the service account google_sheets uses when a tool sets use_julep_service"},
	{"SINEW_CLOUDINARY_DELIVERY_URL", "https://res.cloudinary.com", "where cloudinary's transformed media is downloaded from"},
	{"SINEW_BROWSERBASE_GITHUB_URL", "https://github.com", "where browserbase's install_extension_from_github downloads extensions"},
	{"SINEW_LLAMA_PARSE_POLL_INTERVAL", "1s", "how often llama_parse polls its parsing job within one call"},
}

// urlProviders are the providers that call a service, so have a base URL to override; dummy echoes
// its arguments and calls nothing.
func urlProviders() []string {
	var out []string
	for _, p := range tool.Providers {
		if p != "dummy" && p != "aws_lambda" { // no base URL: they call no web service of their own
			out = append(out, p)
		}
	}
	return out
}

// ProviderEnvs lists the SINEW_<PROVIDER>_BASE_URL variables.
func ProviderEnvs() []string {
	var out []string
	for _, p := range urlProviders() {
		out = append(out, ProviderEnv(p))
	}
	return out
}

// defaultModel is Claude Haiku 4.5 through its US inference profile: Bedrock serves that model only
// through profiles, and a us. profile is called from us-east-1, us-east-2, us-west-1 and us-west-2.
// Other Regions set SINEW_MODEL to their geography's profile (eu., apac., jp., au. or global.); the
// deploy's preflight names it.
const defaultModel = "bedrock:us.anthropic.claude-haiku-4-5-20251001-v1:0"

// LookupFunc reads one variable; os.LookupEnv is one.
type LookupFunc func(name string) (string, bool)

// FromEnv parses the process environment.
func FromEnv() (*Config, error) { return Load(os.LookupEnv) }

// Load parses the configuration through lookup. It reports every invalid variable at once, each as a
// fault.InvalidInput naming the variable.
func Load(lookup LookupFunc) (*Config, error) {
	defaults := map[string]string{}
	for _, v := range Variables() {
		defaults[v.Name] = v.Default
	}
	get := func(name string) string {
		if s, ok := lookup(name); ok && strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
		return defaults[name]
	}

	var errs []error
	c := &Config{
		Table:              get(EnvTable),
		ToolCallARN:        get(EnvToolCallARN),
		ToolCallExpressARN: get(EnvToolCallExpressARN),
		AgentLoopARN:       get(EnvAgentLoopARN),
		TaskRoleARN:        get(EnvTaskRoleARN),
		OpenAIKey:          get(EnvOpenAIKey),
		OpenAIAPIKey:       get(EnvOpenAIAPIKey),
		SecretsKey:         get(EnvSecretsKey),
		EventBus:           get(EnvEventBus),
		FunctionNames:      map[string]string{},
		ProviderBaseURLs:   map[string]string{},
	}
	c.JWTClaim, c.JWTIssuer = get(EnvJWTClaim), get(EnvJWTIssuer)
	for _, f := range Functions {
		c.FunctionNames[f] = get(FunctionEnv(f))
	}

	var err error
	if c.Model, err = ParseModel(get(EnvModel)); err != nil {
		errs = append(errs, err)
	}
	if c.OpenAIBaseURL, err = parseBaseURL(EnvOpenAIBaseURL, get(EnvOpenAIBaseURL)); err != nil {
		errs = append(errs, err)
	}
	if c.OpenAIKey != "" && c.OpenAIAPIKey != "" {
		errs = append(errs, fault.Invalid(EnvOpenAIAPIKey, "%s and %s are both set: give the model endpoint's key one way", EnvOpenAIAPIKey, EnvOpenAIKey))
	}
	if c.APICallAllow, err = netguard.ParseAllowlist(get(EnvAPICallAllow)); err != nil {
		errs = append(errs, fault.Invalid(EnvAPICallAllow, "%s: %v", EnvAPICallAllow, err))
	}
	if c.FlagDefaults, err = ParseFlagDefaults(get(EnvFlagDefaults)); err != nil {
		errs = append(errs, err)
	}
	switch v := get(EnvPendingEvents); v {
	case "on", "off":
		c.PendingEvents = v == "on"
	default:
		errs = append(errs, fault.Invalid(EnvPendingEvents, "%s=%q: want on or off", EnvPendingEvents, v))
	}
	if c.ChatBudget, err = parseBudget(EnvChatBudget, get(EnvChatBudget)); err != nil {
		errs = append(errs, err)
	}
	if c.MCPWait, err = parseBudget(EnvMCPWait, get(EnvMCPWait)); err != nil {
		errs = append(errs, err)
	}
	if c.MaxCallsPerReply, err = parseCount(EnvMaxCallsPerReply, get(EnvMaxCallsPerReply), MaxCallsPerReplyLimit); err != nil {
		errs = append(errs, err)
	}
	if c.MaxCallsPerTurn, err = parseCount(EnvMaxCallsPerTurn, get(EnvMaxCallsPerTurn), MaxCallsPerTurnLimit); err != nil {
		errs = append(errs, err)
	}
	if c.ToolSearchThreshold, err = parseCount(EnvToolSearchThreshold, get(EnvToolSearchThreshold), 128); err == nil && c.ToolSearchThreshold < 2 {
		err = fault.Invalid(EnvToolSearchThreshold, "%s=%d: at least 2 (the search tool and one more)", EnvToolSearchThreshold, c.ToolSearchThreshold)
	}
	if err != nil {
		errs = append(errs, err)
	}
	for _, p := range urlProviders() {
		name := ProviderEnv(p)
		u, err := parseBaseURL(name, get(name))
		if err != nil {
			errs = append(errs, err)
		} else if u != "" {
			c.ProviderBaseURLs[p] = u
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return c, nil
}

// Need reports, as one InvalidInput error, which of the named variables are unset in c: a function
// calls it at start for the variables without a usable default that it cannot run without.
func (c *Config) Need(names ...string) error {
	var missing []string
	for _, n := range names {
		var v string
		switch n {
		case EnvToolCallARN:
			v = c.ToolCallARN
		case EnvAgentLoopARN:
			v = c.AgentLoopARN
		case EnvTaskRoleARN:
			v = c.TaskRoleARN
		case EnvOpenAIBaseURL:
			v = c.OpenAIBaseURL
		case EnvOpenAIKey:
			v = c.OpenAIKey
		case EnvSecretsKey:
			v = c.SecretsKey
		case EnvTable:
			v = c.Table
		case EnvEventBus:
			v = c.EventBus
		default:
			return fault.New(fault.Internal, "config.Need: %s is not a variable that can be missing", n)
		}
		if v == "" {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return fault.Invalid(missing[0], "required configuration is not set: %s", strings.Join(missing, ", "))
	}
	return nil
}

// ParseModel parses SINEW_MODEL: provider:name with a known provider and a non-empty name.
func ParseModel(s string) (Model, error) {
	p, name, ok := strings.Cut(s, ":")
	if !ok || !slices.Contains(modelProviders, p) || strings.TrimSpace(name) == "" {
		return Model{}, fault.Invalid(EnvModel, "%s=%q: want bedrock:<model id>, openai:<model> or scripted:<file>", EnvModel, s)
	}
	return Model{Provider: p, Name: name}, nil
}

// ParseFlagDefaults parses SINEW_FLAG_DEFAULTS (name=true,name=false) over the built-in defaults
// (every flag false, as Julep's): each name must be a known flag, set at most once, to true or false.
func ParseFlagDefaults(s string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, f := range Flags {
		out[f] = false
	}
	seen := map[string]bool{}
	for _, raw := range strings.Split(s, ",") {
		e := strings.TrimSpace(raw)
		if e == "" {
			continue
		}
		name, val, ok := strings.Cut(e, "=")
		name, val = strings.TrimSpace(name), strings.TrimSpace(val)
		if !ok || name == "" {
			return nil, fault.Invalid(EnvFlagDefaults, "%s: %q is not name=true or name=false", EnvFlagDefaults, e)
		}
		if !slices.Contains(Flags, name) {
			return nil, fault.Invalid(EnvFlagDefaults, "%s: unknown flag %q (known: %s)", EnvFlagDefaults, name, strings.Join(Flags, ", "))
		}
		if seen[name] {
			return nil, fault.Invalid(EnvFlagDefaults, "%s: flag %q is set more than once", EnvFlagDefaults, name)
		}
		seen[name] = true
		switch val {
		case "true":
			out[name] = true
		case "false":
			out[name] = false
		default:
			return nil, fault.Invalid(EnvFlagDefaults, "%s: flag %q must be true or false, not %q", EnvFlagDefaults, name, val)
		}
	}
	return out, nil
}

// parseBudget parses a time a request may take, in seconds: under API Gateway's limit.
func parseBudget(name, s string) (time.Duration, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fault.Invalid(name, "%s=%q: want a number of seconds, like 25", name, s)
	}
	d := time.Duration(f * float64(time.Second))
	if d <= 0 || d >= MaxChatBudget {
		return 0, fault.Invalid(name, "%s=%q: want more than 0 and less than %d seconds (API Gateway's limit)", name, s, int(MaxChatBudget/time.Second))
	}
	return d, nil
}

// parseCount reads a whole number from 1 to limit.
func parseCount(name, s string, limit int) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > limit {
		return 0, fault.Invalid(name, "%s=%q: want a whole number from 1 to %d", name, s, limit)
	}
	return n, nil
}

// parseBaseURL checks an optional base URL: absolute http or https with a host, no query.
func parseBaseURL(name, s string) (string, error) {
	if s == "" {
		return "", nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fault.Invalid(name, "%s=%q: want an absolute http or https URL without query, like https://api.example.com/v1", name, s)
	}
	return strings.TrimSuffix(s, "/"), nil
}
