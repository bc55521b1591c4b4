package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"sinew/internal/asl"
	"sinew/internal/config"
	"sinew/internal/deploy"
	"sinew/internal/handler"
	"sinew/internal/handler/all"
	"sinew/internal/localaws/lambdaapi"
	"sinew/internal/localaws/quota"
	"sinew/internal/secrets"
)

// handlerDeps is what local mode builds its in-process functions from.
type handlerDeps struct {
	ctx context.Context
	red *secrets.Redactor // the redactor every log line of this process passes
	cfg *config.Config
	log *slog.Logger
}

// functions is the registry of in-process functions, shared by the Lambda Invoke API and the
// engine's Lambda tasks.
type functions struct {
	region, account string
	api             *lambdaapi.Service

	mu sync.RWMutex
	m  map[string]lambdaapi.Invoker

	iam   *iamRecorder  // nil unless recording for the IAM check
	quota *quota.Limits // AWS's account concurrency, with --quotas
}

func (f *functions) register(name string, inv lambdaapi.Invoker) error {
	inv = withConcurrency(f.quota, f.iam.asFunction(name, inv))
	if err := f.api.Register(name, inv); err != nil {
		return err
	}
	f.mu.Lock()
	// The engine's Lambda tasks are bounded by the deployed timeout too, and fail as in AWS
	// (Sandbox.Timedout), which the state machines' retriers name.
	f.m[name] = lambdaapi.WithTimeout(inv, deployedTimeout(name))
	f.mu.Unlock()
	return nil
}

func (f *functions) arn(name string) string {
	return fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", f.region, f.account, name)
}

// registerDescribed builds every described function that has a constructor (package all) in
// process, as its main builds it, from the environment local mode has set (setEnv). A described
// function without one has no handler package yet; local mode says so at start (warnMissing).
func (f *functions) registerDescribed(d handlerDeps) error {
	env := handler.Env{Getenv: os.Getenv, Log: d.log, Redactor: d.red}
	for _, fn := range deploy.Functions() {
		ctor, ok := all.Lambdas[fn.Name]
		if !ok {
			continue
		}
		h, err := ctor(d.ctx, env)
		if err != nil {
			return fmt.Errorf("function %s: %w", fn.Name, err)
		}
		if err := f.register(fn.Name, lambdaapi.FromHandler(h)); err != nil {
			return err
		}
	}
	return nil
}

// deployedTimeout is a described function's timeout, so a synchronous Invoke is bounded as in AWS.
func deployedTimeout(name string) time.Duration {
	if fn, ok := deploy.FunctionByName(name); ok {
		return fn.Timeout
	}
	return 0
}

// warnMissing says which described functions nothing answers for: not a silent skip.
func (f *functions) warnMissing(log *slog.Logger) {
	var missing []string
	f.mu.RLock()
	for _, fn := range deploy.Functions() {
		if f.m[fn.Name] == nil {
			missing = append(missing, fn.Name)
		}
	}
	f.mu.RUnlock()
	if len(missing) > 0 {
		log.Warn("described functions without a handler yet: invoking them fails with ResourceNotFoundException",
			"functions", strings.Join(missing, ","))
	}
}

// Invoke implements asl.LambdaInvoker over the registry, with Lambda's answers: a function error
// as {"errorType", "errorMessage"} (FunctionError "Unhandled"), an unknown function as
// Lambda.ResourceNotFoundException with the cause Step Functions reports.
func (f *functions) Invoke(ctx context.Context, req asl.LambdaRequest) (*asl.LambdaResponse, error) {
	f.iam.engineInvoke(ctx, req)
	name := functionName(req.FunctionName)
	f.mu.RLock()
	inv := f.m[name]
	f.mu.RUnlock()
	if inv == nil {
		return nil, &asl.LambdaServiceError{Code: "ResourceNotFoundException", Message: fmt.Sprintf(
			"Function not found: %s (Service: AWSLambda; Status Code: 404; Error Code: ResourceNotFoundException; Request ID: %s; Proxy: null)",
			f.arn(name), uuid.NewString())}
	}
	out, ferr, err := inv.Invoke(ctx, req.Payload)
	var th *lambdaapi.Throttled
	if errors.As(err, &th) {
		return nil, throttledTask(th)
	}
	if err != nil {
		return nil, &asl.LambdaServiceError{Code: "ServiceException", Message: err.Error()}
	}
	if ferr != nil {
		data, _ := json.Marshal(ferr)
		return &asl.LambdaResponse{Payload: data, FunctionError: "Unhandled", ExecutedVersion: "$LATEST"}, nil
	}
	return &asl.LambdaResponse{Payload: out, ExecutedVersion: "$LATEST"}, nil
}

// functionName takes the name out of a name, partial ARN or ARN, with or without a qualifier.
func functionName(ref string) string {
	parts := strings.Split(ref, ":")
	for i, p := range parts {
		if p == "function" && i+1 < len(parts) {
			return parts[i+1]
		}
	}
	return parts[0]
}
