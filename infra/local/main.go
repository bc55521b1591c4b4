// Command local stands sinew up on one machine with no AWS account and no network.
//
// It serves the Step Functions API over the embedded engine (durable across kill -9), the Lambda
// Invoke API over in-process handlers, EventBridge PutEvents (a feed), KMS, the HTTP API behind
// local JWTs, and DynamoDB Local. It runs the same statemachines/*.asl.json and the same handlers
// as a deployment (both read internal/deploy's description), and code finds its endpoints as the
// AWS SDKs do, through AWS_ENDPOINT_URL_<SERVICE>: there is no sinew-specific switch between local
// and AWS.
//
// Durability: executions, waiting task tokens, Waits, retry back-offs and histories survive a crash;
// a task that was running at the crash runs again (at-least-once), and the executors' idempotency
// by call id (package executor/guard) keeps its side effects single. Events a rule target matches (the
// status changes settle takes) and Lambda Event invocations are journaled before they are
// answered and delivered after a restart (package outbox); the records whose status change was
// lost anyway are settled when read and by the sweep (--sweep-period). Its README lists what
// survives kill -9 and what is rebuilt.
//
//	go run ./infra/local [--dir .local] [--in-memory] [--sfn-port 0] ...   serve
//	go run ./infra/local token DEVELOPER_ID                                print a JWT
//	go run ./infra/local env [--dir .local]                                print the AWS exports (eval "$(...)")
//	go run ./infra/local rotate-secrets                                    re-encrypt sealed values under the key's newest version
//
// Every AWS API it serves (Step Functions, Lambda, KMS, EventBridge, and DynamoDB, proxied to
// DynamoDB Local) also answers on one endpoint at a fixed port (--aws-port, 4599 by default),
// routed by the service each request is signed for, so AWS_ENDPOINT_URL set once points the AWS
// SDKs and the AWS CLI at local mode; each service keeps its own endpoint too. It prints its
// endpoints and the lines to export, and writes them to <dir>/endpoints.json, which it removes
// when it stops (after a crash the file stays: its "pid" tells whether it is current).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"sinew/internal/asl"
	"sinew/internal/asl/jsonata"
	"sinew/internal/awscount"
	"sinew/internal/config"
	"sinew/internal/console"
	"sinew/internal/deploy"
	"sinew/internal/httpapi"
	"sinew/internal/localaws/awsauth"
	"sinew/internal/localaws/awsrouter"
	"sinew/internal/localaws/browserguard"
	"sinew/internal/localaws/durable"
	"sinew/internal/localaws/eventbridge"
	"sinew/internal/localaws/jwtlocal"
	"sinew/internal/localaws/kms"
	"sinew/internal/localaws/lambdaapi"
	"sinew/internal/localaws/localnames"
	"sinew/internal/localaws/quota"
	"sinew/internal/localaws/sfnapi"
	"sinew/internal/secrets"
	"sinew/internal/secrets/rotate"
	"sinew/internal/store"
	"sinew/internal/testenv/ddblocal"
)

const (
	region    = localnames.Region
	account   = localnames.Account
	tableName = localnames.Table
	tokenTTL  = 24 * time.Hour
)

func main() {
	args := os.Args[1:]
	var err error
	switch {
	case len(args) > 0 && args[0] == "token":
		err = tokenCmd(args[1:])
	case len(args) > 0 && args[0] == "env":
		err = envCmd(os.Stdout, args[1:])
	case len(args) > 0 && args[0] == "rotate-secrets":
		// Re-encrypts every sealed value under the secrets key's newest version, against the
		// endpoints in the environment (AWS_ENDPOINT_URL_DYNAMODB/KMS, SINEW_TABLE, SINEW_SECRETS_KEY):
		// local mode's, or AWS's.
		err = rotate.Run(context.Background(), os.Stdout, slog.New(slog.NewJSONHandler(os.Stderr, nil)))
	default:
		tuneRuntime()
		err = serve(args)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "local:", err)
		os.Exit(1)
	}
}

func tokenCmd(args []string) error {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	dir := fs.String("dir", ".local", "the local directory (holds the signing key)")
	ttl := fs.Duration("ttl", tokenTTL, "how long the token lives")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: local token [--dir .local] DEVELOPER_ID")
	}
	signer, err := jwtlocal.Open(jwtlocal.Options{Dir: *dir, Claim: os.Getenv(config.EnvJWTClaim)})
	if err != nil {
		return err
	}
	tok, err := signer.Issue(fs.Arg(0), *ttl)
	if err != nil {
		return err
	}
	fmt.Println(tok)
	return nil
}

// envCmd prints the shell exports that point the AWS SDKs and CLI at the local mode running on
// dir, signed with its credentials: the one place the secret key is printed, on request.
func envCmd(w io.Writer, args []string) error {
	fs := flag.NewFlagSet("env", flag.ContinueOnError)
	dir := fs.String("dir", ".local", "the local directory of a running local mode")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return errors.New("usage: local env [--dir .local]")
	}
	data, err := os.ReadFile(filepath.Join(*dir, "endpoints.json"))
	if err != nil {
		return fmt.Errorf("no local mode runs on %s (start it with make local, or go run ./infra/local --dir %s): %w", *dir, *dir, err)
	}
	var eps map[string]string
	if err := json.Unmarshal(data, &eps); err != nil {
		return fmt.Errorf("%s/endpoints.json: %w", *dir, err)
	}
	creds, err := awsauth.Load(*dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "export AWS_ENDPOINT_URL=%s\n", eps["aws"])
	// StartSyncExecution's sync- host prefix names no loopback host: the CLI (botocore 1.38 and
	// later) and boto3 skip it with this set, and the one endpoint serves it.
	fmt.Fprintln(w, "export AWS_DISABLE_HOST_PREFIX_INJECTION=true")
	for _, kv := range creds.Env() {
		fmt.Fprintf(w, "export %s\n", kv)
	}
	fmt.Fprintf(w, "export AWS_DEFAULT_REGION=%s AWS_REGION=%s\n", region, region)
	return nil
}

type options struct {
	dir           string
	inMemory      bool
	ports         map[string]*int
	testFunctions bool
	root          string
	rie           bool
	rieBin        string
	sweepPeriod   time.Duration
	quotas        *quota.Limits // AWS's quotas, applied with --quotas
	lambdaTools   []lambdaTool
}

// endpoint names: the keys of endpoints.json.
var endpointNames = []string{"aws", "stepfunctions", "lambda", "http", "events", "kms"}

// DefaultAWSPort is the fixed port of the endpoint that serves every AWS API, so that
// AWS_ENDPOINT_URL=http://127.0.0.1:4599 set once in a shell holds across runs.
const DefaultAWSPort = 4599

func serve(args []string) error {
	fs := flag.NewFlagSet("local", flag.ContinueOnError)
	o := options{ports: map[string]*int{}}
	fs.StringVar(&o.dir, "dir", ".local", "the local directory: keys, the event feed, DynamoDB and Step Functions data")
	fs.BoolVar(&o.inMemory, "in-memory", false, "keep DynamoDB and Step Functions data in memory (gone at exit)")
	fs.BoolVar(&o.testFunctions, "test-functions", false, "also register the sinew-test-* functions the end-to-end tests use")
	fs.StringVar(&o.root, "root", ".", "the module root (where statemachines/ and functions/ are)")
	fs.BoolVar(&o.rie, "rie", false, "run each function's real bootstrap (built for this machine) under the AWS Lambda Runtime Interface Emulator")
	fs.StringVar(&o.rieBin, "rie-bin", "", "the emulator binary (default: aws-lambda-rie on PATH)")
	fs.DurationVar(&o.sweepPeriod, "sweep-period", DefaultSweepPeriod, "how often settle sweeps the execution records whose status change was lost (0: never)")
	quotas := fs.String("quotas", "off", quotasUsage)
	fs.Func("lambda-tool", "NAME=BOOTSTRAP: a developer's Lambda function that aws_lambda tools may invoke, its bootstrap run under the emulator (repeatable)", lambdaToolFlag(&o.lambdaTools))
	for _, n := range endpointNames {
		if n == "aws" {
			continue // its own default, below
		}
		o.ports[n] = fs.Int(n+"-port", 0, "port of the "+n+" endpoint on 127.0.0.1 (0: a free one)")
	}
	o.ports["aws"] = fs.Int("aws-port", DefaultAWSPort, "port on 127.0.0.1 of the endpoint that serves every AWS API, routed by the service a request is signed for (0: a free one)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unknown subcommand %q (serve takes flags only; the other subcommand is token)", fs.Arg(0))
	}
	var err error
	if o.quotas, err = parseQuotas(*quotas); err != nil {
		return err
	}
	// Every log line passes the redactor, which knows the secrets of the calls in flight, as in
	// the deployed functions.
	red := secrets.NewRedactor()
	// TeeLogs inside the redactor: a Lambda Invoke with LogType Tail gets the redacted lines.
	log := slog.New(withQuietRequests(red.Handler(lambdaapi.TeeLogs(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})))))
	slog.SetDefault(log)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, o, log, red)
}

func run(ctx context.Context, o options, log *slog.Logger, red *secrets.Redactor) error {
	dir, err := filepath.Abs(o.dir)
	if err != nil {
		return err
	}
	if err := checkDataDir(dir); err != nil {
		return err
	}
	self, iam, stopStats, err := setUpAWSClients(log, dir, o.quotas)
	if err != nil {
		return err
	}
	defer stopStats()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	// The AWS endpoints accept only requests signed with these, as an AWS account accepts only
	// its own keys; the in-process functions sign with them too (setEnv).
	creds, err := awsauth.LoadOrCreate(dir)
	if err != nil {
		return err
	}

	listeners, err := listen(o)
	for _, l := range listeners {
		defer l.Close()
	}
	if err != nil {
		return err
	}
	url := func(n string) string { return "http://" + listeners[n].Addr().String() }

	ddb, err := startDynamoDB(ctx, o, dir, creds)
	if err != nil {
		return err
	}
	defer ddb.Close()

	events, err := eventbridge.Open(eventbridge.Options{Dir: dir, Region: region, Account: account, Logger: log})
	if err != nil {
		return err
	}
	defer events.Close()
	keys, err := kms.Open(kms.Options{Dir: dir, Region: region, Account: account, Logger: log})
	if err != nil {
		return err
	}
	iam.useKMS(keys)
	signer, err := jwtlocal.Open(jwtlocal.Options{Dir: dir, Claim: os.Getenv(config.EnvJWTClaim)})
	if err != nil {
		return err
	}

	st, closeStore, err := openSFNStore(o, dir)
	if err != nil {
		return err
	}
	defer closeStore()
	warnOldJournal(log, dir)

	cfg, err := setEnv(url, ddb.Endpoint(), creds)
	if err != nil {
		return err
	}

	lambdaSvc := lambdaapi.New(lambdaapi.Options{Region: region, Account: account, Logger: log, Timeout: deployedTimeout})
	fns, stopRIE, err := startFunctions(o, dir, lambdaSvc, iam, handlerDeps{ctx: ctx, red: red, cfg: cfg, log: log})
	if err != nil {
		return err
	}
	defer stopRIE()

	sfn, err := startWorkflows(ctx, o, st, fns, events, log)
	if err != nil {
		return err
	}

	handlers, err := endpointHandlers(awsServices{sfn, lambdaSvc, events, keys, ddb.Endpoint()}, fns, signer, url("stepfunctions"), creds, log)
	if err != nil {
		return err
	}
	running, errc := serveEndpoints(guarded(handlers, creds), listeners)
	// The in-process functions' own requests never cross a socket, so no web page or other
	// process can have sent them: they skip the checks.
	self.serve(selfHosts(handlers, listeners))

	if err := announce(dir, ddb.Endpoint(), url); err != nil {
		return err
	}
	defer os.Remove(filepath.Join(dir, "endpoints.json")) // it describes a running local mode only
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	log.Info("shutting down")
	shutdown(running, lambdaSvc)
	return err
}

// startFunctions registers the in-process functions: the described ones (each under the Runtime
// Interface Emulator with --rie; stopRIE ends those) and the test ones with --test-functions, and
// starts the journaled Event invocations.
func startFunctions(o options, dir string, lambdaSvc *lambdaapi.Service, iam *iamRecorder, d handlerDeps) (fns *functions, stopRIE func(), err error) {
	fns = &functions{region: region, account: account, api: lambdaSvc, m: map[string]lambdaapi.Invoker{}, iam: iam, quota: o.quotas}
	stopRIE = func() {}
	if err := allowLambdaTools(o.lambdaTools); err != nil {
		return nil, stopRIE, err
	}
	if err := fns.registerDescribed(d); err != nil {
		return nil, stopRIE, err
	}
	if o.rie {
		if stopRIE, err = registerRIE(d.ctx, o, dir, fns, d.log); err != nil {
			return nil, func() {}, err
		}
	}
	stopTools, err := registerLambdaTools(d.ctx, o, fns, d.log)
	if err != nil {
		stopRIE()
		return nil, func() {}, err
	}
	stopOwn := stopRIE
	stopRIE = func() { stopTools(); stopOwn() }
	if o.testFunctions {
		if err := registerTestFunctions(fns, dir); err != nil {
			stopRIE()
			return nil, func() {}, err
		}
	}
	fns.warnMissing(d.log)
	// Event invocations are journaled from here on; those of before a restart run now that their
	// functions are registered.
	if err := lambdaSvc.StartAsync(dir, lambdaapi.AsyncOptions{}); err != nil {
		stopRIE()
		return nil, func() {}, err
	}
	return fns, stopRIE, nil
}

// setUpAWSClients configures the in-process functions' AWS clients (configureAWSClients), with the
// IAM recording when iamrec.EnvRecord asks for it, and starts their stats (startStats).
func setUpAWSClients(log *slog.Logger, dir string, q *quota.Limits) (self *selfCalls, iam *iamRecorder, stopStats func(), err error) {
	if iam, err = openIAMRecorder(log); err != nil {
		return nil, nil, nil, err
	}
	// The request mix only (aws-requests.json): DynamoDB Local is not asked to account capacity.
	counts := &awscount.Counter{ByService: true, LeaveCapacity: true}
	gate, err := newDDBGate()
	if err != nil {
		return nil, nil, nil, err
	}
	rec, err := openDDBRecorder()
	if err != nil {
		return nil, nil, nil, err
	}
	wire, self := configureAWSClients(counts, gate, rec, iam, q)
	stopStats, err = startStats(log, dir, statsOf{counts, wire, gate, rec})
	if err != nil {
		_ = rec.close()
		return nil, nil, nil, err
	}
	return self, iam, stopStats, nil
}

// shutdown stops the servers and the Lambda service, giving requests in flight 10 s.
func shutdown(running []*http.Server, lambdaSvc *lambdaapi.Service) {
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, srv := range running {
		_ = srv.Shutdown(sctx)
	}
	_ = lambdaSvc.Close(sctx)
}

// announce writes the endpoints to dir's endpoints.json and prints them.
func announce(dir, dynamoDB string, url func(string) string) error {
	eps := map[string]string{"dynamodb": dynamoDB, "pid": strconv.Itoa(os.Getpid())}
	for _, n := range endpointNames {
		eps[n] = url(n)
	}
	if err := writeEndpoints(dir, eps); err != nil {
		return err
	}
	printEndpoints(os.Stdout, eps, dir)
	return nil
}

// listen opens each endpoint's listener on 127.0.0.1, at its --<name>-port or a free port; on
// an error, the listeners opened so far come back with it, for the caller to close. A port in use
// is one line saying which flag moves it.
func listen(o options) (map[string]net.Listener, error) {
	listeners := map[string]net.Listener{}
	for _, n := range endpointNames {
		port := *o.ports[n]
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if errors.Is(err, syscall.EADDRINUSE) {
			return listeners, fmt.Errorf("port %d (the %s endpoint) is in use, perhaps by another local mode: stop it, or choose another port with --%s-port N (0 picks a free one)", port, n, n)
		}
		if err != nil {
			return listeners, fmt.Errorf("listen for %s: %w", n, err)
		}
		listeners[n] = l
	}
	return listeners, nil
}

// awsServices are the AWS APIs local mode serves, DynamoDB Local by its endpoint.
type awsServices struct {
	sfn, lambda, events, kms http.Handler
	dynamoDB                 string
}

// endpointHandlers is the handler of each endpoint: each AWS API on its own and all of them on
// the one AWS endpoint, routed by signing name, and the HTTP API behind the console; guarded adds
// the checks of requests from outside.
func endpointHandlers(svc awsServices, fns *functions, signer *jwtlocal.Signer, sfnURL string, creds awsauth.Credentials, log *slog.Logger) (map[string]http.Handler, error) {
	ddbProxy, err := proxyTo(svc.dynamoDB, fns.quota)
	if err != nil {
		return nil, err
	}
	all := awsrouter.New(map[string]http.Handler{awsrouter.StepFunctions: svc.sfn, awsrouter.Lambda: svc.lambda,
		awsrouter.EventBridge: svc.events, awsrouter.KMS: svc.kms, awsrouter.DynamoDB: ddbProxy})
	rt := httpapi.HTTPHandler(func(ctx context.Context, ev httpapiEvent) (httpapiResponse, error) {
		return serveAPI(ctx, fns, ev)
	}, signer.Claims)
	return map[string]http.Handler{"stepfunctions": svc.sfn, "lambda": svc.lambda, "events": svc.events, "kms": svc.kms, "aws": all,
		"http": console.New(console.Options{API: rt, StepFunctions: console.SFNClient(sfnURL, region, creds.Provider()), Claims: signer.Claims, Logger: log})}, nil
}

// endpointServices are the signing names each AWS endpoint accepts: a request signed for another
// service is refused there, as AWS refuses it at that service's endpoint.
var endpointServices = map[string][]string{
	"aws":           {awsrouter.StepFunctions, awsrouter.Lambda, awsrouter.EventBridge, awsrouter.KMS, awsrouter.DynamoDB},
	"stepfunctions": {awsrouter.StepFunctions},
	"lambda":        {awsrouter.Lambda},
	"events":        {awsrouter.EventBridge},
	"kms":           {awsrouter.KMS},
}

// guarded wraps each endpoint's handler in the checks a request from outside the process passes:
// every endpoint refuses what a web browser sends on a page's behalf (browserguard), and the AWS
// endpoints accept only requests signed with creds (awsauth), as IAM would in an account.
func guarded(handlers map[string]http.Handler, creds awsauth.Credentials) map[string]http.Handler {
	out := make(map[string]http.Handler, len(handlers))
	for n, h := range handlers {
		if svcs, ok := endpointServices[n]; ok {
			h = awsauth.New(creds, awsauth.Options{Region: region, Services: svcs}).Wrap(h)
		}
		out[n] = browserguard.Wrap(h)
	}
	return out
}

// proxyTo forwards requests to endpoint (DynamoDB Local), unchanged: DynamoDB Local does not
// check the signature, whose Host the proxy would otherwise have to keep. With quotas, each
// partition's throughput is q's.
func proxyTo(endpoint string, q *quota.Limits) (http.Handler, error) {
	u, err := neturl.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("the DynamoDB endpoint %q: %w", endpoint, err)
	}
	p := httputil.NewSingleHostReverseProxy(u)
	if q != nil {
		p.Transport = q.Transport(store.AttrPK, nil)
	}
	return p, nil
}

// startWorkflows routes the status changes of executions to settle, then starts Step Functions,
// which may end executions as soon as it recovers them, and the sweep of open records.
func startWorkflows(ctx context.Context, o options, st *durable.Store, fns *functions, events *eventbridge.Service, log *slog.Logger) (*sfnapi.Service, error) {
	if err := routeStatusChanges(events, fns, eventbridge.Target{}, log); err != nil {
		return nil, err
	}
	sfn, err := startStepFunctions(ctx, o, st, fns, events, log)
	if err != nil {
		return nil, err
	}
	sweepOpenRecords(ctx, fns, o.sweepPeriod, log)
	return sfn, nil
}

// startStepFunctions is the local Step Functions: the engine over the durable store's recorder
// (which journals every Lambda call and timer), its executions recovered from the store, and the
// state machines of statemachines/ loaded.
func startStepFunctions(ctx context.Context, o options, st *durable.Store, fns *functions, events *eventbridge.Service, log *slog.Logger) (*sfnapi.Service, error) {
	direct := directIntegrations(o.quotas)
	rec := durable.NewRecorder(st, withIntegrations{fns: fns, direct: direct, iam: fns.iam}, asl.RealClock{}, log)
	fns.iam.useTokens(rec)
	var sfn *sfnapi.Service
	eng := asl.New(asl.Config{Clock: rec, Lambda: rec, Region: region, Account: account, Logger: log,
		Integrations: journaledIntegrations(rec, direct),
		Machines:     func(arn string) (*asl.Machine, bool) { return sfn.Resolve(arn) },
		// Child executions are executions of their own, journaled, and found again by a replayed parent.
		StartChild: func(ctx context.Context, in asl.StartInput) (asl.Child, error) {
			fns.iam.engineStartChild(ctx, in.StateMachineArn)
			return sfn.StartChild(ctx, in)
		},
		Transition: engineTransitions(o.quotas)})
	sfn = sfnapi.New(sfnapi.Options{Store: st, Recorder: rec, Engine: eng, Events: events, JSONata: jsonata.New(),
		Region: region, Account: account, Logger: log, Throttle: sfnThrottle(o.quotas)})
	logQuotas(log, o.quotas)
	if err := sfn.Recover(ctx); err != nil {
		return nil, err
	}
	if err := loadStateMachines(o.root, sfn, fns, log); err != nil {
		return nil, err
	}
	return sfn, nil
}

// startDynamoDB starts DynamoDB Local with its data under dir (in memory with --in-memory),
// waits for it and makes sinew's table. It stops with this process (its JVM also dies with it
// on kill -9: ddblocal sets the parent-death signal).
//
// DynamoDB Local keeps a database per access key id (Isolated), and local mode's is the secret
// one of creds: a caller without it finds DynamoDB Local empty. A data directory from before
// keeps its one shared database, adopted as local mode's.
func startDynamoDB(ctx context.Context, o options, dir string, creds awsauth.Credentials) (*ddblocal.Server, error) {
	ddbOpts := ddblocal.Options{Isolated: true}
	if !o.inMemory {
		ddbOpts.DBPath = filepath.Join(dir, "dynamodb")
		if err := os.MkdirAll(ddbOpts.DBPath, 0o700); err != nil {
			return nil, err
		}
		if _, err := ddblocal.AdoptSharedDB(ddbOpts.DBPath, creds.AccessKeyID, region); err != nil {
			return nil, err
		}
	}
	ddb, err := ddblocal.StartWith(ctx, ddbOpts)
	if err != nil {
		return nil, err
	}
	if err := store.EnsureTable(ctx, ddblocal.NewClientWith(ddb.Endpoint(), creds.Provider()), tableName); err != nil {
		ddb.Close()
		return nil, fmt.Errorf("create the table: %w", err)
	}
	return ddb, nil
}

// openSFNStore opens Step Functions' durable store under dir (in a temporary directory with
// --in-memory); closeStore closes it and removes the temporary directory.
func openSFNStore(o options, dir string) (st *durable.Store, closeStore func(), err error) {
	sfnPath := filepath.Join(dir, "stepfunctions.log")
	tmp := ""
	if o.inMemory {
		if tmp, err = os.MkdirTemp("", "sinew-local-sfn-"); err != nil {
			return nil, nil, err
		}
		sfnPath = filepath.Join(tmp, "stepfunctions.log")
	}
	removeTmp := func() {
		if tmp != "" {
			os.RemoveAll(tmp)
		}
	}
	if st, err = durable.Open(sfnPath); err != nil {
		removeTmp()
		return nil, nil, err
	}
	return st, func() { st.Close(); removeTmp() }, nil
}

// warnOldJournal says when dir holds the journal of an older local mode (a bbolt file), whose
// executions this one does not resume: their records in DynamoDB stay as they were.
func warnOldJournal(log *slog.Logger, dir string) {
	old := filepath.Join(dir, "stepfunctions.db")
	if _, err := os.Stat(old); err == nil {
		log.Warn("an older local mode's Step Functions journal is not read: executions it had running are not resumed; remove the file to silence this",
			"file", old)
	}
}

// setEnv sets the environment the in-process handlers read their configuration and endpoints
// from, as deployed code does, and gives the configuration it makes. url gives an endpoint's
// address by name.
func setEnv(url func(string) string, dynamoDB string, creds awsauth.Credentials) (*config.Config, error) {
	env := map[string]string{
		"AWS_ENDPOINT_URL_SFN":         url("stepfunctions"),
		"AWS_ENDPOINT_URL_LAMBDA":      url("lambda"),
		"AWS_ENDPOINT_URL_DYNAMODB":    dynamoDB,
		"AWS_ENDPOINT_URL_EVENTBRIDGE": url("events"),
		"AWS_ENDPOINT_URL_KMS":         url("kms"),
		config.EnvTable:                tableName,
		config.EnvSecretsKey:           localnames.SecretsKeyAlias,
		config.EnvToolCallARN:          machineArn(deploy.ToolCall),
		config.EnvToolCallExpressARN:   machineArn(deploy.ToolCallExpress),
		config.EnvAgentLoopARN:         machineArn(deploy.AgentLoop),
		config.EnvTaskRoleARN:          localnames.TaskRoleARN,
	}
	for _, f := range config.Functions {
		env[config.FunctionEnv(f)] = f
	}
	// The in-process functions sign with local mode's own credentials, whatever the shell had:
	// every AWS API they call is local mode's. A session token would be refused.
	env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"], env["AWS_SESSION_TOKEN"] = creds.AccessKeyID, creds.SecretAccessKey, ""
	for k, v := range env {
		if err := os.Setenv(k, v); err != nil {
			return nil, err
		}
	}
	if os.Getenv("AWS_REGION") == "" {
		_ = os.Setenv("AWS_REGION", region)
	}
	cfg, err := config.FromEnv()
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	return cfg, nil
}

// registerRIE starts each function's real bootstrap under the Lambda Runtime Interface Emulator
// (--rie) and registers it in place of the in-process handler; stop ends them.
func registerRIE(ctx context.Context, o options, dir string, fns *functions, log *slog.Logger) (stop func(), err error) {
	bin, err := emulatorBinary(o)
	if err != nil {
		return nil, fmt.Errorf("--rie: %w", err)
	}
	root, err := filepath.Abs(o.root)
	if err != nil {
		return nil, err
	}
	rie, err := startRIE(ctx, root, dir, bin, log)
	if err != nil {
		return nil, err
	}
	for _, f := range rie {
		if err := fns.register(f.name, f); err != nil {
			stopRIE(rie)
			return nil, err
		}
	}
	return func() { stopRIE(rie) }, nil
}

// serveEndpoints serves each endpoint's handler on its listener under httpapi's limits (time for
// headers, body and answer, idle time, connections at once); errc hears a server that fails. A
// synchronous Lambda Invoke may take a function's whole timeout, so the endpoints that serve it
// give an answer that long.
func serveEndpoints(servers map[string]http.Handler, listeners map[string]net.Listener) (running []*http.Server, errc chan error) {
	errc = make(chan error, len(servers))
	for n, h := range servers {
		lim := httpapi.DefaultLimits
		if n == "lambda" || n == "aws" {
			lim.WriteTimeout = maxFunctionTimeout + time.Minute
		}
		srv := httpapi.NewServer(h, lim)
		running = append(running, srv)
		go func() {
			if err := srv.Serve(httpapi.LimitListener(listeners[n], lim)); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("%s endpoint: %w", n, err)
			}
		}()
	}
	return running, errc
}

// maxFunctionTimeout is Lambda's longest function timeout.
const maxFunctionTimeout = 15 * time.Minute

func machineArn(name string) string { return localnames.StateMachineARN(name) }

// loadStateMachines loads statemachines/ with local substitutions, from the description infra/cdk
// reads.
func loadStateMachines(root string, sfn *sfnapi.Service, fns *functions, log *slog.Logger) error {
	resolve := func(v deploy.Value) (string, error) {
		if v.Kind == deploy.FunctionARN {
			return fns.arn(v.Target), nil
		}
		return localnames.Value(v)
	}
	for _, m := range deploy.StateMachines() {
		def, err := os.ReadFile(filepath.Join(root, m.File))
		if errors.Is(err, os.ErrNotExist) {
			log.Warn("state machine file not present yet; not loaded", "state_machine", m.Name, "file", m.File)
			continue
		}
		if err != nil {
			return err
		}
		rendered, err := m.Render(def, resolve)
		if err != nil {
			return err
		}
		arn, err := sfn.LoadMachine(m.Name, m.Type, rendered)
		if err != nil {
			return err
		}
		log.Info("state machine loaded", "arn", arn)
	}
	return nil
}

// routeStatusChanges sends Step Functions' "Execution Status Change" events of sinew's state
// machines to the settle function, as the deployed EventBridge rule does, through a durable target
// of the local EventBridge: each event is journaled before the engine records the execution's end,
// and is marked delivered only once settle has succeeded on it, so one that a crash, or a settle
// that failed, left undelivered reaches settle after the restart (at least once: settle is
// idempotent). Deliveries run side by side (a slow settle holds back no other event); a failed one
// is retried with EventBridge's retry policy (in AWS, Lambda also retries a function error twice
// and then the event goes to settle's on-failure queue: here every failure is the rule's to retry)
// and, once that runs out, goes to the dead-letter file. Call it before the engine recovers: an
// execution that ends as it resumes must find the target there.
func routeStatusChanges(events *eventbridge.Service, fns *functions, t eventbridge.Target, log *slog.Logger) error {
	fns.mu.RLock()
	settle := fns.iam.asRule(localnames.StatusChangeRule, "settle", fns.m["settle"])
	fns.mu.RUnlock()
	if settle == nil {
		log.Warn("no settle handler yet: Execution Status Change events are kept in the feed only")
		return nil
	}
	var arns []any
	for _, m := range deploy.StateMachines() {
		arns = append(arns, machineArn(m.Name))
	}
	// Julep tasks' machines, made at run time, as the deployed rule names them.
	arns = append(arns, map[string]any{"prefix": machineArn(strings.TrimSuffix(deploy.TaskMachines, "*"))})
	pat, _ := json.Marshal(map[string]any{"source": []any{"aws.states"}, "detail-type": []any{"Step Functions Execution Status Change"},
		"detail": map[string]any{"stateMachineArn": arns, "status": []any{"SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"}}})
	p, err := eventbridge.ParsePattern(pat)
	if err != nil {
		return fmt.Errorf("the status change pattern: %w", err)
	}
	t.Name, t.Rule = localnames.StatusChangeRule, eventbridge.Rule{Pattern: p}
	t.Deliver = func(ctx context.Context, ev eventbridge.Event) error {
		data, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		_, ferr, err := settle.Invoke(ctx, data)
		if ferr != nil {
			// A function error's message may quote the event: only its type is told.
			return fmt.Errorf("settle failed: %s", ferr.Type)
		}
		return err
	}
	return events.AddTarget(t)
}

func writeEndpoints(dir string, eps map[string]string) error {
	data, err := json.MarshalIndent(eps, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, ".endpoints.json.tmp")
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, "endpoints.json"))
}

func printEndpoints(w *os.File, eps map[string]string, dir string) {
	fmt.Fprintf(w, "sinew local mode is up (data in %s)\n", dir)
	for _, n := range []string{"aws", "stepfunctions", "lambda", "http", "events", "kms"} {
		fmt.Fprintf(w, "  %-14s %s\n", n, eps[n])
	}
	// DynamoDB Local's own port checks no signature, so it is not offered: DynamoDB answers on
	// the aws endpoint like every other AWS API.
	fmt.Fprintf(w, "  %-14s %s (on the aws endpoint)\n", "dynamodb", eps["aws"])
	fmt.Fprintf(w, "  %-14s %s%s (in a browser on this machine)\n", "console", eps["http"], console.Prefix)
	fmt.Fprintln(w, "Point the AWS SDKs and the AWS CLI at it (every AWS API answers on the one endpoint, to requests signed with this directory's credentials):")
	fmt.Fprintf(w, "  eval \"$(go run ./infra/local env --dir %s)\"\n", dir)
	fmt.Fprintf(w, "export AWS_ENDPOINT_URL=%s\n", eps["aws"])
	// AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_<SERVICE> are honoured from AWS CLI 1.29 and 2.13 and
	// the SDKs of 2023 on; an older CLI (Debian's awscli 2.9) needs --endpoint-url on each command.
	fmt.Fprintf(w, "(An AWS CLI older than 1.29 or 2.13 ignores AWS_ENDPOINT_URL: pass --endpoint-url %s.)\n", eps["aws"])
	fmt.Fprintln(w, "A token for the HTTP API: go run ./infra/local token DEVELOPER_ID")
	fmt.Fprintln(w, "ready")
}
