package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"sinew/internal/asl"
	"sinew/internal/config"
	"sinew/internal/deploy"
	"sinew/internal/handler"
	"sinew/internal/handler/apicallenv"
	"sinew/internal/handler/apienv"
	"sinew/internal/handler/chatenv"
	"sinew/internal/handler/functionenv"
	"sinew/internal/handler/integrationenv"
	"sinew/internal/handler/modelenv"
	"sinew/internal/handler/prepareenv"
	"sinew/internal/handler/systemenv"
	"sinew/internal/lambdaboundary"
	"sinew/internal/localaws/lambdaapi"
	"sinew/internal/secrets"
)

// handlerDeps is what a function's in-process handler is built from.
type handlerDeps struct {
	ctx context.Context
	red *secrets.Redactor // the redactor every log line of this process passes
	cfg *config.Config
	log *slog.Logger
}

// handlers builds each function's in-process handler, keyed by the function names of
// internal/deploy. A described function missing here has no handler package yet; local mode says
// so at start.
// Each is built as the function's main builds it (FromEnv, New, the Lambda error boundary), from
// the environment local mode has set.
var handlers = map[string]func(d handlerDeps) (lambdaapi.Invoker, error){
	"api": func(d handlerDeps) (lambdaapi.Invoker, error) {
		rt, err := apienv.Router(d.ctx, d.log)
		if err != nil {
			return nil, err
		}
		return lambdaapi.FromHandler(lambdaboundary.Handler(rt.ServeEvent)), nil
	},
	"prepare": func(d handlerDeps) (lambdaapi.Invoker, error) {
		deps, err := prepareenv.Deps(d.ctx)
		return boundary(handler.NewPrepare(deps)), err
	},
	"function": func(d handlerDeps) (lambdaapi.Invoker, error) {
		deps, err := functionenv.Deps(d.ctx)
		return boundary(handler.NewFunction(deps)), err
	},
	"apicall": func(d handlerDeps) (lambdaapi.Invoker, error) {
		h, err := apicallenv.Handler(d.ctx, d.red)
		return boundary(h), err
	},
	"integration": func(d handlerDeps) (lambdaapi.Invoker, error) {
		h, err := integrationenv.Handler(d.ctx, d.red)
		return boundary(h), err
	},
	"system": func(d handlerDeps) (lambdaapi.Invoker, error) {
		h, err := systemenv.Handler(d.ctx)
		return boundary(h), err
	},
	"chat": func(d handlerDeps) (lambdaapi.Invoker, error) {
		rt, err := chatenv.Router(d.ctx, d.log)
		if err != nil {
			return nil, err
		}
		return lambdaapi.FromHandler(lambdaboundary.Handler(rt.ServeEvent)), nil
	},
	"model": func(d handlerDeps) (lambdaapi.Invoker, error) {
		s, err := modelenv.Stepper(d.ctx, d.log)
		return boundary(modelenv.NewModel(s)), err
	},
	"settle": func(d handlerDeps) (lambdaapi.Invoker, error) {
		deps, err := handler.SettleFromEnv(d.ctx)
		return boundary(handler.NewSettle(deps)), err
	},
}

// boundary runs a handler behind the same Lambda error boundary as its deployed main.
func boundary[In, Out any](h func(context.Context, In) (Out, error)) lambdaapi.Invoker {
	return lambdaapi.FromHandler(lambdaboundary.Handler(h))
}

// functions is the registry of in-process functions, shared by the Lambda Invoke API and the
// engine's Lambda tasks.
type functions struct {
	region, account string
	api             *lambdaapi.Service

	mu sync.RWMutex
	m  map[string]lambdaapi.Invoker
}

func (f *functions) register(name string, inv lambdaapi.Invoker) error {
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

// registerDescribed builds the in-process handler of every described function that has one.
func (f *functions) registerDescribed(d handlerDeps) error {
	for _, fn := range deploy.Functions() {
		ctor, ok := handlers[fn.Name]
		if !ok {
			continue
		}
		inv, err := ctor(d)
		if err != nil {
			return fmt.Errorf("function %s: %w", fn.Name, err)
		}
		if err := f.register(fn.Name, inv); err != nil {
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
