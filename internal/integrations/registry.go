// Package integrations is the provider registry of the integration executor: Julep's
// integrations service rebuilt as Go packages, one per provider, each with typed setup, arguments and
// outputs per method.
//
// # Declaring a provider
//
// A provider package declares its Go types and plain functions, and exposes a *Provider:
//
//	type Setup struct {
//		APIKey string `json:"brave_api_key" jsonschema:"minLength=1" jsonschema_description:"Brave Search API key"`
//	}
//	type Args struct {
//		Query string `json:"query" jsonschema:"minLength=1"`
//	}
//	type Output struct {
//		Result []Hit `json:"result"`
//	}
//	func search(ctx context.Context, env integrations.Env, s Setup, a Args) (Output, error) { ... }
//
//	var Provider = &integrations.Provider{
//		Name: "brave", FriendlyName: "Brave Search", Docs: "https://...", BaseURL: "https://api.search.brave.com",
//		Methods: []*integrations.Method{
//			integrations.NewMethod("search", "Search the web with Brave", search),
//		},
//	}
//
// Setup fields that name where a call goes are tagged `sinew:"endpoint"` (api_url, host, port,
// http_url, ...) and those that carry credentials `sinew:"secret"`: the executor then refuses a
// setup whose endpoint was changed above the layer of its secret (merge.CheckBinding), and
// TestSetupEndpointsDeclared checks that no URL, host, port or credential field goes untagged.
//
// Every method of a provider takes the same setup type; a provider without setup uses NoSetup. The
// first method is the default (an empty method name selects it). The JSON Schemas of setup, arguments
// and output are generated from the Go types (github.com/invopop/jsonschema: `json` tags name the
// fields, fields without `omitempty` are required, `jsonschema:"..."` tags add enum, default, minimum,
// maximum, minLength and the like, `jsonschema_description` describes a field). The same argument
// schema is what the model sees (ToolSchema) and what the merged arguments are validated against
// (github.com/google/jsonschema-go, with sinew checking formats) before the function runs, so a
// provider function can trust its typed input. Top-level defaults in the schema are filled in before validation.
//
// # Running
//
// Registry.Execute(ctx, provider, method, setup, args) validates the merged setup and arguments (the
// merge, package merge, is the caller's), decodes them into the method's types, runs the function with
// an Env, and returns the output in sinew's JSON value form (package jsonv). Every error a caller
// sees is a *fault.Error: InvalidInput naming the field for bad input (and for an unknown provider or
// method), Transient for failures worth retrying (the state machine or the chat dispatcher retries:
// providers keep no retry loops of their own), Provider for a permanent refusal, Timeout when the
// context's deadline ran out.
//
// # Env
//
// Env carries what a method may use for I/O: an *http.Client whose every connection goes through the
// guarded dialer (package netguard), the same guard's DialContext for connections that are not HTTP
// (SMTP, CDP, ...), the provider's base URL (SINEW_<PROVIDER>_BASE_URL or the provider's default),
// other configurable endpoints and operator settings (Env.Endpoint, Env.Setting:
// SINEW_<PROVIDER>_<NAME>), and a logger that carries the provider and method but is never given
// setup. Env.Do / Env.DoJSON are the shared HTTP helper: they classify statuses (401 and 403: the
// credentials were refused, Provider; 408, 429, 5xx, 524 and connection failures: Transient; other
// 4xx: Provider; StatusOf gives the status back), cap bodies, and keep query strings (which may hold
// API keys) out of logs and errors. WriteFormFields renders parameters as multipart fields.
//
// # Catalogue
//
// Catalogue, ProviderInfo and ToolSchema give the data of GET /integrations, GET
// /integrations/{provider} and GET /integrations/{provider}[/{method}]/tool (as Julep's integrations service does, with
// `info` always an object; Function.AsTool is the route's {"type":"function","function":...} body).
// Lookups of unknown names are NotFound there, and InvalidInput in Execute. Package schemas holds
// the same catalogue as data generated from the registry (go generate), which the functions that
// run no provider serve instead of linking them all.
//
// # Choices
//
// Input is validated strictly: a field the method does not know is an error naming it (pydantic
// would drop it silently), a null optional field counts as absent, and setup for a provider that
// takes none is refused (Julep fails with a TypeError). Validation messages never repeat the value.
//
// # Tests
//
// Package integrationstest starts a provider's fake service on 127.0.0.1 and a registry whose guard
// allows exactly that server.
//
// The providers themselves are registered in package sinew/internal/integrations/all.
package integrations

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
	"sync"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"

	"sinew/internal/fault"
	"sinew/internal/integrations/schemas"
	"sinew/internal/jsonv"
	"sinew/internal/merge"
	"sinew/internal/netguard"
)

// NoSetup is the setup type of a provider that takes none (wikipedia, arxiv, ffmpeg). Its catalogue
// setup schema is null, and a non-empty setup object given to it is refused.
type NoSetup struct{}

// Provider is one integration provider: its names, documentation, default base URL and ordered
// methods (the first is the default).
type Provider struct {
	Name         string // the provider name of Julep's enum, e.g. "brave"
	FriendlyName string // e.g. "Brave Search"
	URL          string // the service's home page (catalogue info.url)
	Docs         string // the API documentation (catalogue info.docs)
	Icon         string // an icon URL (catalogue info.icon), may be empty
	BaseURL      string // the default API base URL; SINEW_<NAME>_BASE_URL overrides it
	Methods      []*Method
	// AnyMethod makes the first method answer every method name, as Julep's dummy does (it returns
	// the arguments whatever the method).
	AnyMethod bool
}

// entry is a registered provider with its generated schemas (kept apart from the Provider, which
// may be registered in several registries at once, as tests do).
type entry struct {
	p           *Provider
	binding     merge.Binding // from the setup type's `sinew` tags
	setupSchema []byte        // JSON; nil when the provider takes no setup
	setupVal    *compiledSchema
	methods     []*methodEntry
}

type methodEntry struct {
	m          *Method
	argsSchema []byte // JSON
	outSchema  []byte // JSON
	argsVal    *compiledSchema
}

// Method is one method of a provider. Make it with NewMethod.
type Method struct {
	Name        string
	Description string

	setupType reflect.Type
	argsType  reflect.Type
	outType   reflect.Type
	run       func(ctx context.Context, env Env, setup, args map[string]any) (any, error)
}

// NewMethod declares a method from its function: S is the provider's setup type (NoSetup for none), A
// the arguments and O the output. S and A are structs (or map[string]any for free-form objects, as
// the dummy provider uses); the registry validates the merged input against their schemas and
// decodes it into them before fn runs.
func NewMethod[S, A, O any](name, description string, fn func(ctx context.Context, env Env, setup S, args A) (O, error)) *Method {
	return &Method{
		Name:        name,
		Description: description,
		setupType:   reflect.TypeFor[S](),
		argsType:    reflect.TypeFor[A](),
		outType:     reflect.TypeFor[O](),
		run: func(ctx context.Context, env Env, setup, args map[string]any) (any, error) {
			var s S
			if reflect.TypeFor[S]() != reflect.TypeFor[NoSetup]() {
				if err := decodeInto(setup, &s); err != nil {
					return nil, fault.Wrap(fault.InvalidInput, err, "setup does not fit %s.%s", env.Provider, env.Method)
				}
			}
			var a A
			if err := decodeInto(args, &a); err != nil {
				return nil, fault.Wrap(fault.InvalidInput, err, "arguments do not fit %s.%s", env.Provider, env.Method)
			}
			return fn(ctx, env, s, a)
		},
	}
}

// decodeInto moves a validated JSON value into a Go value through its JSON form, so the json tags
// that named the schema's fields name the decoding too.
func decodeInto(v any, dst any) error {
	if v == nil {
		v = map[string]any{}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, dst)
}

// Env is what a provider method gets for its I/O. It never holds setup.
type Env struct {
	Provider     string
	FriendlyName string
	Method       string
	// HTTP is the guarded client: every connection, to any URL, goes through the guard.
	HTTP *http.Client
	// Dial dials TCP through the same guard, for connections that are not plain HTTP requests.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// Guard is the policy behind HTTP and Dial, for libraries that take a transport or a dialer.
	Guard *netguard.Policy
	// BaseURL is SINEW_<PROVIDER>_BASE_URL when set, else the provider's default; no trailing slash.
	BaseURL string
	// Log carries provider and method; never give it setup values.
	Log *slog.Logger
	// AWS is the function's own AWS configuration (WithAWS), for providers that call AWS APIs with
	// the function's role (aws_lambda); nil when the registry was given none.
	AWS *awsv2.Config

	getenv func(string) string
}

// Endpoint gives another configurable URL of the provider: the environment variable
// SINEW_<PROVIDER>_<NAME> when set (e.g. SINEW_GOOGLE_SHEETS_TOKEN_URL for name "TOKEN_URL"), else def.
func (e Env) Endpoint(name, def string) string {
	if e.getenv != nil {
		if v := e.getenv(EnvName(e.Provider, name)); v != "" {
			return strings.TrimRight(v, "/")
		}
	}
	return def
}

// Setting gives the raw value of the environment variable SINEW_<PROVIDER>_<NAME> (an operator
// setting such as a shared credential), or "".
func (e Env) Setting(name string) string {
	if e.getenv == nil {
		return ""
	}
	return e.getenv(EnvName(e.Provider, name))
}

// EnvName is the environment variable for a provider setting: SINEW_<PROVIDER>_<NAME>, upper case.
func EnvName(provider, name string) string {
	return "SINEW_" + strings.ToUpper(provider) + "_" + strings.ToUpper(name)
}

// Registry holds the providers. Register them all first (package all does); after that it is safe
// for concurrent use.
type Registry struct {
	mu        sync.RWMutex
	providers map[string]*entry
	order     []string

	guard  *netguard.Policy
	client *http.Client
	getenv func(string) string
	log    *slog.Logger
	aws    *awsv2.Config
}

// Option configures a Registry.
type Option func(*Registry)

// WithGetenv replaces os.Getenv for the SINEW_<PROVIDER>_* settings (tests point providers at their
// local servers with it).
func WithGetenv(f func(string) string) Option { return func(r *Registry) { r.getenv = f } }

// WithAWS gives providers that call AWS APIs (aws_lambda) the function's AWS configuration.
func WithAWS(cfg awsv2.Config) Option { return func(r *Registry) { r.aws = &cfg } }

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(r *Registry) { r.log = l } }

// MaxRedirects is how many redirects a provider's HTTP client follows, each hop checked by the guard.
const MaxRedirects = 5

// New makes an empty registry whose providers connect only through guard (nil: a guard with no
// allowlist, which refuses every internal address).
func New(guard *netguard.Policy, opts ...Option) *Registry {
	if guard == nil {
		guard = netguard.New()
	}
	r := &Registry{
		providers: map[string]*entry{},
		guard:     guard,
		client:    redirectSafe(netguard.NewClient(guard.NewTransport(), MaxRedirects)),
		getenv:    os.Getenv,
		log:       slog.Default(),
	}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Compiled on first use: a counted repetition compiles to hundreds of allocations, paid at every
// Lambda cold start otherwise.
var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`) })

// Register adds providers, generating and compiling their schemas. It fails on a duplicate name, a
// provider without methods, methods whose setup types differ, or a type that yields no schema.
func (r *Registry) Register(ps ...*Provider) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range ps {
		if err := r.register(p); err != nil {
			return err
		}
	}
	return nil
}

// MustRegister is Register for the fixed provider list of package all: a failure is a programming
// error.
func (r *Registry) MustRegister(ps ...*Provider) {
	if err := r.Register(ps...); err != nil {
		panic(err)
	}
}

func (r *Registry) register(p *Provider) error {
	if p == nil || !nameRE().MatchString(p.Name) {
		return fmt.Errorf("integrations: bad provider name %v", p)
	}
	if _, dup := r.providers[p.Name]; dup {
		return fmt.Errorf("integrations: provider %q registered twice", p.Name)
	}
	if len(p.Methods) == 0 {
		return fmt.Errorf("integrations: provider %q has no methods", p.Name)
	}
	e := &entry{p: p}
	seen := map[string]bool{}
	for _, m := range p.Methods {
		if m == nil || m.run == nil || !nameRE().MatchString(m.Name) {
			return fmt.Errorf("integrations: provider %q: bad method (make methods with NewMethod)", p.Name)
		}
		if seen[m.Name] {
			return fmt.Errorf("integrations: provider %q: method %q declared twice", p.Name, m.Name)
		}
		seen[m.Name] = true
		if m.setupType != p.Methods[0].setupType {
			return fmt.Errorf("integrations: provider %q: method %q takes setup %v, the first method %v", p.Name, m.Name, m.setupType, p.Methods[0].setupType)
		}
		me := &methodEntry{m: m}
		var err error
		if me.argsSchema, me.argsVal, err = schemaFor(m.argsType, true); err != nil {
			return fmt.Errorf("integrations: %s.%s arguments: %w", p.Name, m.Name, err)
		}
		if me.outSchema, _, err = schemaFor(m.outType, false); err != nil {
			return fmt.Errorf("integrations: %s.%s output: %w", p.Name, m.Name, err)
		}
		e.methods = append(e.methods, me)
	}
	if st := p.Methods[0].setupType; st != reflect.TypeFor[NoSetup]() {
		var err error
		if e.binding, err = bindingOf(st); err != nil {
			return fmt.Errorf("integrations: %s setup: %w", p.Name, err)
		}
		if e.setupSchema, e.setupVal, err = schemaFor(st, true); err != nil {
			return fmt.Errorf("integrations: %s setup: %w", p.Name, err)
		}
	}
	r.providers[p.Name] = e
	r.order = append(r.order, p.Name)
	return nil
}

// Names lists the registered providers in alphabetical order.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := append([]string(nil), r.order...)
	sort.Strings(out)
	return out
}

// lookup finds a provider and method ("" = the default); unknown names are InvalidInput naming them.
func (r *Registry) lookup(provider, method string) (*entry, *methodEntry, error) {
	r.mu.RLock()
	e := r.providers[provider]
	r.mu.RUnlock()
	if e == nil {
		return nil, nil, schemas.UnknownProvider(provider, r.Names())
	}
	if method == "" || e.p.AnyMethod {
		return e, e.methods[0], nil
	}
	for _, m := range e.methods {
		if m.m.Name == method {
			return e, m, nil
		}
	}
	names := make([]string, len(e.methods))
	for i, m := range e.methods {
		names[i] = m.m.Name
	}
	return nil, nil, schemas.UnknownMethod(provider, method, names)
}

// Execute runs a provider method ("" = the default method) on the merged setup and arguments: it
// fills in defaults, validates both against the method's schemas (an error names the field, e.g.
// "arguments.query"), runs the method and returns its output as a JSON value (jsonv form).
func (r *Registry) Execute(ctx context.Context, provider, method string, setup, args map[string]any) (any, error) {
	e, me, err := r.lookup(provider, method)
	if err != nil {
		return nil, err
	}
	setup, args, err = r.prepare(e, me, setup, args)
	if err != nil {
		return nil, err
	}
	p, m := e.p, me.m
	out, err := r.run(ctx, p, m, setup, args)
	if err != nil {
		return nil, classifyRunError(ctx, p, m, err)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "%s.%s produced an output that is not JSON", p.Name, m.Name)
	}
	v, err := jsonv.Decode(b)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "%s.%s produced an output that is not JSON", p.Name, m.Name)
	}
	return v, nil
}

// run calls the method, turning a panic in provider code into an Internal error (logged with its
// stack, never with setup) so one faulty provider cannot take the executor down.
func (r *Registry) run(ctx context.Context, p *Provider, m *Method, setup, args map[string]any) (out any, err error) {
	env := r.env(p, m)
	defer func() {
		if v := recover(); v != nil {
			env.Log.ErrorContext(ctx, "provider panicked", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			out, err = nil, fault.New(fault.Internal, "%s.%s failed unexpectedly", p.Name, m.Name)
		}
	}()
	return m.run(ctx, env, setup, args)
}

// prepare applies defaults and validates setup and arguments. The maps given are not modified: both
// are first copied into sinew's JSON value form, so Go values a caller may pass ([]string, int, ...)
// validate as the JSON they stand for.
func (r *Registry) prepare(e *entry, m *methodEntry, setup, args map[string]any) (map[string]any, map[string]any, error) {
	var err error
	if setup, err = jsonObject("setup", setup); err != nil {
		return nil, nil, err
	}
	if args, err = jsonObject("arguments", args); err != nil {
		return nil, nil, err
	}
	if e.setupVal == nil {
		if len(setup) > 0 {
			keys := make([]string, 0, len(setup))
			for k := range setup {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			return nil, nil, fault.Invalid("setup", "integration provider %q takes no setup, but setup has %s", e.p.Name, strings.Join(keys, ", "))
		}
		setup = nil
	} else {
		setup = e.setupVal.prepare(setup)
		if err := e.setupVal.validate("setup", setup); err != nil {
			return nil, nil, err
		}
	}
	args = m.argsVal.prepare(args)
	if err := m.argsVal.validate("arguments", args); err != nil {
		return nil, nil, err
	}
	return setup, args, nil
}

// jsonObject copies an object into the JSON value form (nil stays nil).
func jsonObject(field string, v map[string]any) (map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err == nil {
		var out any
		if out, err = jsonv.Decode(b); err == nil {
			m, _ := out.(map[string]any)
			return m, nil
		}
	}
	return nil, &fault.Error{Kind: fault.InvalidInput, Field: field, Msg: field + " is not a JSON object", Err: err}
}

func (r *Registry) env(p *Provider, m *Method) Env {
	base := p.BaseURL
	if v := r.getenv(EnvName(p.Name, "BASE_URL")); v != "" {
		base = v
	}
	return Env{
		Provider:     p.Name,
		FriendlyName: p.FriendlyName,
		Method:       m.Name,
		HTTP:         r.client,
		Dial:         r.guard.DialContext,
		Guard:        r.guard,
		BaseURL:      strings.TrimRight(base, "/"),
		Log:          r.log.With("provider", p.Name, "method", m.Name),
		AWS:          r.aws,
		getenv:       r.getenv,
	}
}

// classifyRunError makes sure what leaves Execute is typed: a provider's *fault.Error passes as it
// is; a context deadline is Timeout; anything else is a fault of the provider's code (Internal),
// whose text is kept as the cause only.
func classifyRunError(ctx context.Context, p *Provider, m *Method, err error) error {
	var fe *fault.Error
	if errors.As(err, &fe) {
		return err
	}
	if ctx.Err() != nil {
		return ctxFault(ctx, p.FriendlyName, err)
	}
	return fault.Wrap(fault.Internal, err, "%s.%s failed", p.Name, m.Name)
}
