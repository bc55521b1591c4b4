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
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"sinew/internal/awscount"
	"sinew/internal/config"
	"sinew/internal/deploy"
	"sinew/internal/localaws/awsauth"
	"sinew/internal/localaws/eventbridge"
	"sinew/internal/localaws/jwtlocal"
	"sinew/internal/localaws/kms"
	"sinew/internal/localaws/lambdaapi"
	"sinew/internal/localaws/localnames"
	"sinew/internal/localaws/quota"
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
	// StartSyncExecution's sync- host prefix names no loopback host: CLIs and boto3 released since
	// February 2025 skip it with this set, and the one endpoint serves it. An older CLI
	// reaches it with HTTP_PROXY set to the endpoint (infra/local/README.md).
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

	sfn, err := startWorkflows(ctx, o, dir, st, fns, events, log)
	if err != nil {
		return err
	}

	handlers, err := endpointHandlers(awsServices{sfn, lambdaSvc, events, keys, ddb.Endpoint(), sfn.ExpressLog}, fns, signer, url("stepfunctions"), creds, log)
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
