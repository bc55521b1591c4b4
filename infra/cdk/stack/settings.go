package stack

import (
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"sinew/internal/config"
	"sinew/internal/deploy"
	"sinew/internal/fault"
)

// Context keys of the stack's own settings (`cdk deploy -c key=value`, or cdk.json's context).
// The functions' operator settings are set by their variable's name instead (-c SINEW_MODEL=...),
// see OperatorVariables.
const (
	CtxStage              = "stage"                  // prod (default) or dev: the defaults of removal, retention, protection and log level
	CtxRemovalPolicy      = "removalPolicy"          // retain (prod's default) or destroy (dev's): the table, the keys, the user pool, the logs
	CtxOIDCIssuer         = "oidcIssuer"             // an existing OIDC issuer URL instead of the stack's Cognito user pool
	CtxOIDCAudience       = "oidcAudience"           // that issuer's audience(s), comma-separated; required with oidcIssuer
	CtxCORSOrigins        = "corsOrigins"            // comma-separated browser origins allowed to call the API; none by default
	CtxThrottleRate       = "throttleRateLimit"      // steady requests per second for the whole API
	CtxThrottleBurst      = "throttleBurstLimit"     // burst of requests for the whole API
	CtxChatThrottleRate   = "chatThrottleRateLimit"  // steady requests per second of the chat route, which spends model tokens
	CtxChatThrottleBurst  = "chatThrottleBurstLimit" // burst of the chat route
	CtxTags               = "tags"                   // further cost allocation tags, key=value,key=value
	CtxLogRetentionDays   = "logRetentionDays"       // retention of every log group the stack makes
	CtxAlarmEmail         = "alarmEmail"             // an e-mail address subscribed to the alarm topic
	CtxEventBusName       = "eventBusName"           // an existing bus for ToolCallPending instead of the stack's own
	CtxBedrockModels      = "bedrockModels"          // further Bedrock model ids the model-calling functions may invoke
	CtxOpenAIKeySecretARN = "openAIKeySecretArn"     // an existing secret with the OpenAI-compatible key
	CtxFFmpegLayerARN     = "ffmpegLayerArn"         // a Lambda layer with ffmpeg for the integration function
	CtxFFmpegLayerZip     = "ffmpegLayerZip"         // a zip (path) of such a layer for the stack to publish

	CtxAPIReservedConcurrency    = "apiReservedConcurrency"    // concurrent executions kept for the api function; 0: none
	CtxSettleReservedConcurrency = "settleReservedConcurrency" // the same for settle
	CtxTableMaxReadUnits         = "tableMaxReadRequestUnits"  // the table's (and its index's) on-demand maximum of read units a second; 0: none
	CtxTableMaxWriteUnits        = "tableMaxWriteRequestUnits" // the same for write units
	CtxDeletionProtection        = "deletionProtection"        // true: the table and the user pool refuse deletion; set it after the first deploy succeeds
)

// Settings are the operator's choices for one deployment, validated.
type Settings struct {
	Stage    string // prod or dev
	Destroy  bool   // removal policy destroy; retain otherwise
	LogLevel string // the functions' application log level: DEBUG (dev) or INFO (prod)
	// SystemLogLevel is the level of the records Lambda itself writes: WARN (prod) leaves out each
	// invocation's platform.start and platform.report, which CloudWatch's Lambda metrics already
	// hold (duration, errors) and which would be most of a server-side call's log bytes; INFO (dev).
	SystemLogLevel     string
	OIDCIssuer         string
	OIDCAudience       []string
	CORSOrigins        []string
	ThrottleRate       float64
	ThrottleBurst      int
	ChatThrottleRate   float64
	ChatThrottleBurst  int
	Tags               map[string]string // cost allocation tags on every resource (with application, stack and stage)
	LogRetentionDays   int
	AlarmEmail         string
	EventBusName       string
	BedrockModels      []string // every model id granted: SINEW_MODEL's when it is a Bedrock one, then bedrockModels
	OpenAIKeySecretARN string
	FFmpegLayerARN     string
	FFmpegLayerZip     string
	// Reserved is the reserved concurrency of the functions that have one (api, settle); a
	// function absent has none.
	Reserved map[string]int
	// TableMaxReadUnits and TableMaxWriteUnits cap the table's and its index's on-demand request
	// units a second; 0 is no cap.
	TableMaxReadUnits, TableMaxWriteUnits int
	// DeletionProtection turns on the table's and the user pool's own deletion protection. It is
	// off by default because CloudFormation cannot delete a protected resource when a stack's first
	// create rolls back (RetainExceptOnCreate deletes what that attempt made), which would leave the
	// stack in ROLLBACK_FAILED; a prod stack has termination protection from the start instead.
	DeletionProtection bool
	// Env holds the functions' operator settings that were given (SINEW_MODEL, SINEW_APICALL_ALLOW,
	// ...); unset ones take config's defaults in the function.
	Env map[string]string
}

// Defaults of the settings without a value.
const (
	DefaultThrottleRate      = 50
	DefaultThrottleBurst     = 100
	DefaultChatThrottleRate  = 5
	DefaultChatThrottleBurst = 10
	DefaultLogRetentionDays  = 30 // prod's
	DevLogRetentionDays      = 7
	// A reservation is also a cap: api serves at most this many requests at once (an MCP tools/call
	// holds one for up to SINEW_MCP_WAIT_S), settle at most this many events (the rest are retried).
	// Reserving needs an account limit of at least their sum plus the 10 AWS keeps unreserved.
	DefaultAPIReservedConcurrency    = 20
	DefaultSettleReservedConcurrency = 10
	// Above what the API's default throttle can cause (50 calls a second at the ~18 write and ~5
	// read units of the costliest call, infra/bench), low enough that a runaway loop costs at most
	// about $110 a day in writes and $45 in reads at on-demand list prices.
	DefaultTableMaxReadUnits  = 4000
	DefaultTableMaxWriteUnits = 2000
)

// ReservedConcurrencyKeys are the settings of the functions that reserve concurrency, by function.
var ReservedConcurrencyKeys = map[string]string{"api": CtxAPIReservedConcurrency, "settle": CtxSettleReservedConcurrency}

// Stages.
const (
	StageProd = "prod"
	StageDev  = "dev"
)

// retentionDays are the values CloudWatch Logs accepts for a log group's retention.
var retentionDays = []int{1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}

// OperatorVariables are the function variables whose value is the operator's (deploy.ValueOf gives
// OperatorSetting), except the OpenAI key's secret, which the stack fills with the secret it makes or
// is given. They are the SINEW_* context keys the stack accepts.
func OperatorVariables() []string {
	var out []string
	for _, f := range deploy.Functions() {
		for _, e := range f.Env {
			if deploy.ValueOf(e).Kind == deploy.OperatorSetting && e != config.EnvOpenAIKey && !slices.Contains(out, e) {
				out = append(out, e)
			}
		}
	}
	slices.Sort(out)
	return out
}

// ContextFunc reads one context value; the CDK's node.TryGetContext gives strings from -c and any
// JSON value from cdk.json.
type ContextFunc func(key string) (any, bool)

// ParseSettings reads and validates the settings. keys lists every context key present, so an
// unknown SINEW_* key (a typo) is refused rather than ignored. Every invalid setting is reported at
// once, each as an InvalidInput fault naming the setting.
func ParseSettings(get ContextFunc, keys []string) (Settings, error) {
	var errs []error
	str := func(key string) string {
		v, ok := get(key)
		if !ok || v == nil {
			return ""
		}
		return strings.TrimSpace(fmt.Sprint(v))
	}
	list := func(key string) []string {
		var out []string
		for _, s := range strings.Split(str(key), ",") {
			if s = strings.TrimSpace(s); s != "" && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		return out
	}
	num := func(key string, def float64, lo, hi float64) float64 {
		s := str(key)
		if s == "" {
			return def
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f < lo || f > hi {
			errs = append(errs, fault.Invalid(key, "%s=%q: want a number from %g to %g", key, s, lo, hi))
			return def
		}
		return f
	}

	s := Settings{Env: map[string]string{}, Stage: StageProd, LogLevel: "INFO", SystemLogLevel: "WARN"}
	switch st := strings.ToLower(str(CtxStage)); st {
	case "", StageProd:
	case StageDev:
		// A dev stack is thrown away: its data goes with it, its logs are short-lived and verbose.
		s.Stage, s.Destroy, s.LogLevel, s.SystemLogLevel = StageDev, true, "DEBUG", "INFO"
	default:
		errs = append(errs, fault.Invalid(CtxStage, "%s=%q: want prod or dev", CtxStage, st))
	}
	errs = append(errs, parseAccess(&s, str, list)...)
	s.ThrottleRate = num(CtxThrottleRate, DefaultThrottleRate, 1, 10000)
	s.ThrottleBurst = int(num(CtxThrottleBurst, DefaultThrottleBurst, 1, 5000))
	// The chat route's defaults never exceed the API's own throttle.
	s.ChatThrottleRate = num(CtxChatThrottleRate, min(DefaultChatThrottleRate, s.ThrottleRate), 1, 10000)
	s.ChatThrottleBurst = int(num(CtxChatThrottleBurst, float64(min(DefaultChatThrottleBurst, s.ThrottleBurst)), 1, 5000))
	if s.ChatThrottleRate > s.ThrottleRate || s.ChatThrottleBurst > s.ThrottleBurst {
		errs = append(errs, fault.Invalid(CtxChatThrottleRate, "%s/%s (%g/%d) above the API's %s/%s (%g/%d): the chat route's throttle is meant to be the lower one",
			CtxChatThrottleRate, CtxChatThrottleBurst, s.ChatThrottleRate, s.ChatThrottleBurst, CtxThrottleRate, CtxThrottleBurst, s.ThrottleRate, s.ThrottleBurst))
	}
	days := float64(DefaultLogRetentionDays)
	if s.Stage == StageDev {
		days = DevLogRetentionDays
	}
	s.LogRetentionDays = int(num(CtxLogRetentionDays, days, 1, 3653))
	if !slices.Contains(retentionDays, s.LogRetentionDays) {
		errs = append(errs, fault.Invalid(CtxLogRetentionDays, "%s=%d: CloudWatch Logs accepts only %v", CtxLogRetentionDays, s.LogRetentionDays, retentionDays))
	}
	s.Tags, errs = parseTags(list(CtxTags), errs)

	errs = append(errs, parseNames(&s, str)...)
	errs = append(errs, parseLimits(&s, str)...)
	cfg, ferrs := parseFunctionEnv(&s, str, keys)
	errs = append(errs, ferrs...)
	errs = append(errs, parseModels(&s, cfg, list)...)
	if err := errors.Join(errs...); err != nil {
		return Settings{}, err
	}
	return s, nil
}

// parseAccess reads who may reach the API and what happens to the data: the removal policy (over
// the stage's), the OIDC issuer and audience (else the stack's Cognito user pool) and the CORS
// origins.
func parseAccess(s *Settings, str func(string) string, list func(string) []string) (errs []error) {
	switch rp := strings.ToLower(str(CtxRemovalPolicy)); rp {
	case "":
	case "retain":
		s.Destroy = false
	case "destroy":
		s.Destroy = true
	default:
		errs = append(errs, fault.Invalid(CtxRemovalPolicy, "%s=%q: want retain or destroy", CtxRemovalPolicy, rp))
	}

	s.OIDCIssuer, s.OIDCAudience = str(CtxOIDCIssuer), list(CtxOIDCAudience)
	switch {
	case s.OIDCIssuer == "" && len(s.OIDCAudience) > 0:
		errs = append(errs, fault.Invalid(CtxOIDCAudience, "%s is set without %s: give both, or neither for the stack's Cognito user pool", CtxOIDCAudience, CtxOIDCIssuer))
	case s.OIDCIssuer != "":
		if u, err := url.Parse(s.OIDCIssuer); err != nil || u.Scheme != "https" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			errs = append(errs, fault.Invalid(CtxOIDCIssuer, "%s=%q: want the issuer's https URL, like https://login.example.com/", CtxOIDCIssuer, s.OIDCIssuer))
		}
		if len(s.OIDCAudience) == 0 {
			errs = append(errs, fault.Invalid(CtxOIDCAudience, "%s is required with %s: the audience (client id) the tokens are issued for", CtxOIDCAudience, CtxOIDCIssuer))
		}
	}

	s.CORSOrigins = list(CtxCORSOrigins)
	for _, o := range s.CORSOrigins {
		if o == "*" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
			errs = append(errs, fault.Invalid(CtxCORSOrigins, "%s: %q is not an origin; want scheme://host[:port], like https://app.example.com, or *", CtxCORSOrigins, o))
		}
	}
	return errs
}

// parseNames reads the names and ARNs the stack uses as given: the alarm e-mail, the event bus,
// the OpenAI key's secret and the ffmpeg layer.
func parseNames(s *Settings, str func(string) string) (errs []error) {
	if s.AlarmEmail = str(CtxAlarmEmail); s.AlarmEmail != "" {
		if a, err := mail.ParseAddress(s.AlarmEmail); err != nil || a.Address != s.AlarmEmail {
			errs = append(errs, fault.Invalid(CtxAlarmEmail, "%s=%q: want a bare e-mail address, like ops@example.com", CtxAlarmEmail, s.AlarmEmail))
		}
	}
	if s.EventBusName = str(CtxEventBusName); s.EventBusName != "" && !eventBusNameRE.MatchString(s.EventBusName) {
		errs = append(errs, fault.Invalid(CtxEventBusName, "%s=%q: want an event bus name (letters, digits, . - _ /, at most 256)", CtxEventBusName, s.EventBusName))
	}
	if s.OpenAIKeySecretARN = str(CtxOpenAIKeySecretARN); s.OpenAIKeySecretARN != "" && !secretARNRE.MatchString(s.OpenAIKeySecretARN) {
		errs = append(errs, fault.Invalid(CtxOpenAIKeySecretARN, "%s=%q: want a Secrets Manager secret ARN, arn:aws:secretsmanager:<region>:<account>:secret:<name>", CtxOpenAIKeySecretARN, s.OpenAIKeySecretARN))
	}
	s.FFmpegLayerARN, s.FFmpegLayerZip = str(CtxFFmpegLayerARN), str(CtxFFmpegLayerZip)
	switch {
	case s.FFmpegLayerARN != "" && s.FFmpegLayerZip != "":
		errs = append(errs, fault.Invalid(CtxFFmpegLayerARN, "%s and %s are both set: give one", CtxFFmpegLayerARN, CtxFFmpegLayerZip))
	case s.FFmpegLayerARN != "" && !layerARNRE.MatchString(s.FFmpegLayerARN):
		errs = append(errs, fault.Invalid(CtxFFmpegLayerARN, "%s=%q: want a layer version ARN, arn:aws:lambda:<region>:<account>:layer:<name>:<version>", CtxFFmpegLayerARN, s.FFmpegLayerARN))
	case s.FFmpegLayerZip != "" && !strings.HasSuffix(s.FFmpegLayerZip, ".zip"):
		errs = append(errs, fault.Invalid(CtxFFmpegLayerZip, "%s=%q: want the path of a .zip file", CtxFFmpegLayerZip, s.FFmpegLayerZip))
	}
	return errs
}

// parseLimits reads the reserved concurrency of api and settle and the table's on-demand
// maximums: whole numbers, 0 for none.
func parseLimits(s *Settings, str func(string) string) (errs []error) {
	count := func(key string, def, hi int) int {
		v := str(key)
		if v == "" {
			return def
		}
		n, err := strconv.Atoi(v)
		if f, ferr := strconv.ParseFloat(v, 64); err != nil && ferr == nil && f == float64(int(f)) {
			n, err = int(f), nil // a number from cdk.json
		}
		if err != nil || n < 0 || n > hi {
			errs = append(errs, fault.Invalid(key, "%s=%q: want a whole number from 0 (none) to %d", key, v, hi))
			return def
		}
		return n
	}
	s.Reserved = map[string]int{}
	for fn, key := range ReservedConcurrencyKeys {
		def := map[string]int{"api": DefaultAPIReservedConcurrency, "settle": DefaultSettleReservedConcurrency}[fn]
		if n := count(key, def, 10000); n > 0 {
			s.Reserved[fn] = n
		}
	}
	s.TableMaxReadUnits = count(CtxTableMaxReadUnits, DefaultTableMaxReadUnits, 1000000)
	s.TableMaxWriteUnits = count(CtxTableMaxWriteUnits, DefaultTableMaxWriteUnits, 1000000)
	switch v := strings.ToLower(str(CtxDeletionProtection)); v {
	case "", "false":
	case "true":
		s.DeletionProtection = true
	default:
		errs = append(errs, fault.Invalid(CtxDeletionProtection, "%s=%q: want true or false", CtxDeletionProtection, v))
	}
	return errs
}

// parseFunctionEnv reads the functions' own settings (SINEW_*), refusing a key that is not one,
// and validates them with the parser the functions use at cold start, so a bad value stops the
// synth instead of every function. cfg is nil when they do not parse.
func parseFunctionEnv(s *Settings, str func(string) string, keys []string) (cfg *config.Config, errs []error) {
	// The functions' own settings, validated by the parser the functions use at cold start, so a bad
	// value stops the synth instead of every function.
	operator := OperatorVariables()
	for _, k := range keys {
		if strings.HasPrefix(k, "SINEW_") && !slices.Contains(operator, k) {
			errs = append(errs, fault.Invalid(k, "%s is not a setting of the deployment; the SINEW_* settings are %s (the others are filled by the stack)", k, strings.Join(operator, ", ")))
		}
	}
	for _, k := range operator {
		if v := str(k); v != "" {
			s.Env[k] = v
		}
	}
	cfg, err := config.Load(func(name string) (string, bool) { v, ok := s.Env[name]; return v, ok })
	if err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, checkToolFunctions(s.Env[config.EnvLambdaTools])...)
	return cfg, errs
}

// parseModels reads the Bedrock models the functions may call (the configured model's, and
// the bedrockModels context value's) and checks the model provider fits a deployment.
func parseModels(s *Settings, cfg *config.Config, list func(string) []string) (errs []error) {
	for _, m := range list(CtxBedrockModels) {
		if !bedrockModelRE.MatchString(m) {
			errs = append(errs, fault.Invalid(CtxBedrockModels, "%s: %q is not a Bedrock model id or inference profile id, like us.anthropic.claude-haiku-4-5-20251001-v1:0", CtxBedrockModels, m))
		}
	}
	if cfg != nil && cfg.Model.Provider == "bedrock" {
		if !bedrockModelRE.MatchString(cfg.Model.Name) {
			errs = append(errs, fault.Invalid(config.EnvModel, "%s=%q: %q is not a Bedrock model id", config.EnvModel, cfg.Model, cfg.Model.Name))
		}
		s.BedrockModels = append(s.BedrockModels, cfg.Model.Name)
	}
	for _, m := range list(CtxBedrockModels) {
		if !slices.Contains(s.BedrockModels, m) {
			s.BedrockModels = append(s.BedrockModels, m)
		}
	}
	if cfg != nil && cfg.Model.Provider == "scripted" {
		errs = append(errs, fault.Invalid(config.EnvModel, "%s=%q: the scripted model is for tests and local mode; a deployment needs bedrock:<model id> or openai:<model>", config.EnvModel, cfg.Model))
	}
	if cfg != nil && cfg.Model.Provider == "openai" && cfg.OpenAIBaseURL == "" {
		errs = append(errs, fault.Invalid(config.EnvOpenAIBaseURL, "%s=%q needs %s, the endpoint's base URL", config.EnvModel, cfg.Model, config.EnvOpenAIBaseURL))
	}
	if s.OpenAIKeySecretARN != "" && (cfg == nil || cfg.OpenAIBaseURL == "") {
		errs = append(errs, fault.Invalid(CtxOpenAIKeySecretARN, "%s is set but %s is not: the key is for that endpoint", CtxOpenAIKeySecretARN, config.EnvOpenAIBaseURL))
	}
	return errs
}

// parseTags reads key=value pairs in the form AWS accepts for tags; aws: is AWS's own prefix.
func parseTags(pairs []string, errs []error) (map[string]string, []error) {
	out := map[string]string{}
	for _, kv := range pairs {
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || !tagKeyRE.MatchString(k) || !tagValueRE.MatchString(v) || strings.HasPrefix(strings.ToLower(k), "aws:") {
			errs = append(errs, fault.Invalid(CtxTags, "%s: %q is not a tag; want key=value (letters, digits, spaces and _.:/=+-@, key up to 128, value up to 256, key not starting with aws:)", CtxTags, kv))
			continue
		}
		out[k] = v
	}
	return out, errs
}

// UsesOpenAI reports whether the deployment talks to an OpenAI-compatible endpoint, so needs its
// key's secret.
func (s Settings) UsesOpenAI() bool { return s.Env[config.EnvOpenAIBaseURL] != "" }

var (
	tagKeyRE       = regexp.MustCompile(`^[\p{L}\p{Z}\p{N}_.:/=+\-@]{1,128}$`)
	tagValueRE     = regexp.MustCompile(`^[\p{L}\p{Z}\p{N}_.:/=+\-@]{0,256}$`)
	eventBusNameRE = regexp.MustCompile(`^[A-Za-z0-9._\-/]{1,256}$`)
	secretARNRE    = regexp.MustCompile(`^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+$`)
	layerARNRE     = regexp.MustCompile(`^arn:aws[a-z-]*:lambda:[a-z0-9-]+:\d{12}:layer:[A-Za-z0-9_-]+:\d+$`)
	// A foundation model id (provider.model[:version]) or a cross-Region inference profile's (a
	// geography's prefix, Geographies, before it).
	bedrockModelRE = regexp.MustCompile(`^(?:(?:` + strings.Join(geographyPrefixes(), "|") + `)\.)?[a-z0-9-]+\.[A-Za-z0-9._-]+(?::[A-Za-z0-9._-]+)*$`)
)

func geographyPrefixes() []string {
	var out []string
	for _, g := range Geographies {
		out = append(out, regexp.QuoteMeta(g.Prefix))
	}
	return out
}

// toolFunctionRE is an entry of SINEW_AWS_LAMBDA_FUNCTIONS: a function name, name:qualifier or ARN,
// or a name or ARN prefix ending in "*".
var toolFunctionRE = regexp.MustCompile(`^(arn:aws[a-zA-Z-]*:lambda:[a-z]{2}(-gov)?-[a-z]+-\d:\d{12}:function:)?([a-zA-Z0-9_-]{1,64}(:(\$LATEST|[a-zA-Z0-9_-]{1,128}))?|[a-zA-Z0-9_-]{0,63}\*)$`)

// ToolFunctions splits SINEW_AWS_LAMBDA_FUNCTIONS into its entries.
func ToolFunctions(v string) []string {
	var out []string
	for _, e := range strings.Split(v, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// checkToolFunctions refuses entries that are not functions, and a bare "*", which would let
// aws_lambda tools invoke every function of the account, sinew's own included.
func checkToolFunctions(v string) []error {
	var errs []error
	for _, e := range ToolFunctions(v) {
		if !toolFunctionRE.MatchString(e) || e == "*" || strings.HasSuffix(e, ":function:*") {
			errs = append(errs, fault.Invalid(config.EnvLambdaTools, "%s: %q is not a function; want a name, name:qualifier, ARN, or a name prefix ending in * (not * alone)", config.EnvLambdaTools, e))
		}
	}
	return errs
}
