package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"

	"github.com/aws/aws-lambda-go/lambdacontext"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/uuid"

	"sinew/internal/asl"
	"sinew/internal/iamrec"
	"sinew/internal/localaws/durable"
	"sinew/internal/localaws/kms"
	"sinew/internal/localaws/lambdaapi"
	"sinew/internal/localaws/localnames"
)

// iamRecorder writes every AWS request the in-process functions send, and those the Step Functions
// engine and the status-change route make on a state machine's or a rule's behalf, as the
// authorizations IAM would make (iamrec.Request) into the directory iamrec.EnvRecord names, for
// the IAM check (make iam-check). A nil *iamRecorder records nothing and adds nothing to any path.
//
// A function's requests are told apart by the Lambda context local mode gives each invocation:
// its InvokedFunctionArn, as Lambda gives it. Functions run under --rie are other processes whose
// SDK clients this one does not configure: their requests are not recorded.
type iamRecorder struct {
	w      *iamrec.Writer
	log    *slog.Logger
	keys   atomic.Pointer[kms.Service]
	tokens atomic.Pointer[durable.Recorder]
	failed atomic.Bool
}

// openIAMRecorder opens the recording when iamrec.EnvRecord is set, else gives nil.
func openIAMRecorder(log *slog.Logger) (*iamRecorder, error) {
	dir := os.Getenv(iamrec.EnvRecord)
	if dir == "" {
		return nil, nil
	}
	w, err := iamrec.Open(dir)
	if err != nil {
		return nil, err
	}
	log.Debug("recording the AWS requests of the functions and state machines for the IAM check", "dir", dir)
	return &iamRecorder{w: w, log: log}, nil
}

func (r *iamRecorder) useKMS(s *kms.Service) {
	if r != nil {
		r.keys.Store(s)
	}
}

func (r *iamRecorder) useTokens(rec *durable.Recorder) {
	if r != nil {
		r.tokens.Store(rec)
	}
}

func (r *iamRecorder) lookup() iamrec.Lookup {
	return iamrec.Lookup{
		Key: func(ref string, blob []byte) (string, []string, bool) {
			if s := r.keys.Load(); s != nil {
				return s.KeyOf(ref, blob)
			}
			return "", nil, false
		},
		TaskMachine: func(token string) string {
			if rec := r.tokens.Load(); rec != nil {
				return iamrec.MachineOfExecution(rec.TokenExecution(token))
			}
			return ""
		},
	}
}

// write records rs as principal's; a failure to write is logged once and the request goes on.
func (r *iamRecorder) write(principal, typ string, rs []iamrec.Request) {
	for i := range rs {
		rs[i].Principal, rs[i].PrincipalType = principal, typ
	}
	if err := r.w.Write(rs...); err != nil && r.failed.CompareAndSwap(false, true) {
		r.log.Error("the IAM recording failed; later requests are not recorded", "error", err)
	}
}

// Register adds the recording to an AWS client's stack, in the Serialize step after the operation's
// serializer (the input was accepted), once per call: retries are the same authorization.
func (r *iamRecorder) Register(stack *middleware.Stack) error {
	if r == nil {
		return nil
	}
	return stack.Serialize.Add(middleware.SerializeMiddlewareFunc("sinew.iamrecord",
		func(ctx context.Context, in middleware.SerializeInput, next middleware.SerializeHandler) (middleware.SerializeOutput, middleware.Metadata, error) {
			principal, typ := functionOf(ctx), iamrec.PrincipalFunction
			if principal == "" {
				typ = "" // nothing says whose request it is: the check reports it
			}
			r.write(principal, typ, iamrec.Derive(awsmiddleware.GetOperationName(ctx), in.Parameters, r.lookup()))
			return next.HandleSerialize(ctx, in)
		}), middleware.After)
}

// functionOf is the function whose invocation ctx belongs to, from its Lambda context.
func functionOf(ctx context.Context) string {
	lc, ok := lambdacontext.FromContext(ctx)
	if !ok {
		return ""
	}
	_, name, ok := strings.Cut(lc.InvokedFunctionArn, ":function:")
	if !ok {
		return ""
	}
	name, _, _ = strings.Cut(name, ":")
	return name
}

// asFunction gives each invocation of function name the Lambda context Lambda gives it (a request
// id and the invoked ARN), which the recording reads.
func (r *iamRecorder) asFunction(name string, inv lambdaapi.Invoker) lambdaapi.Invoker {
	if r == nil {
		return inv
	}
	arn := localnames.FunctionARN(name)
	return lambdaapi.InvokerFunc(func(ctx context.Context, p []byte) ([]byte, *lambdaapi.FunctionError, error) {
		lc := &lambdacontext.LambdaContext{AwsRequestID: uuid.NewString(), InvokedFunctionArn: arn}
		return inv.Invoke(lambdacontext.NewContext(ctx, lc), p)
	})
}

// asRule records each invocation of function name by inv as EventBridge's for rule (the
// status-change route stands for the deployed rule): Lambda authorizes it by the function's
// resource policy, for the service principal, with the rule as aws:SourceArn.
func (r *iamRecorder) asRule(rule, name string, inv lambdaapi.Invoker) lambdaapi.Invoker {
	if r == nil || inv == nil {
		return inv
	}
	req := iamrec.Request{Service: "lambda", Operation: "Invoke", Action: "lambda:InvokeFunction", Resource: localnames.FunctionARN(name),
		Context: map[string]any{"aws:SourceArn": localnames.RuleARN(rule), "aws:SourceAccount": localnames.Account}}
	return lambdaapi.InvokerFunc(func(ctx context.Context, p []byte) ([]byte, *lambdaapi.FunctionError, error) {
		r.write("events.amazonaws.com", iamrec.PrincipalService, []iamrec.Request{req})
		return inv.Invoke(ctx, p)
	})
}

// engineCall records what the Step Functions engine sends for execution (an ARN) to the state
// machine's role.
func (r *iamRecorder) engineCall(execution string, rs ...iamrec.Request) {
	if r == nil {
		return
	}
	// An Express execution carries no ARN here: its requests are written with no machine's name.
	r.write(iamrec.MachineName(execution), iamrec.PrincipalStateMachine, rs)
}

// engineInvoke records a Lambda task's invocation.
func (r *iamRecorder) engineInvoke(ctx context.Context, req asl.LambdaRequest) {
	if r == nil {
		return
	}
	r.engineCall(durable.ExecutionOf(ctx), iamrec.Request{Service: "lambda", Operation: "Invoke", Action: "lambda:InvokeFunction",
		Resource: iamrec.FunctionARN(req.FunctionName, req.Qualifier)})
}

// engineIntegration records an optimised integration's call (dynamodb:putItem, events:putEvents).
func (r *iamRecorder) engineIntegration(c journaledCall) {
	if r == nil {
		return
	}
	r.engineCall(c.ExecutionArn, iamrec.DeriveIntegration(c.Service, c.API, json.RawMessage(c.Parameters))...)
}

// engineStartChild records a states:startExecution task's start of a child execution.
func (r *iamRecorder) engineStartChild(ctx context.Context, machine string) {
	if r == nil {
		return
	}
	r.engineCall(durable.ExecutionOf(ctx), iamrec.Request{Service: "states", Operation: "StartExecution",
		Action: "states:StartExecution", Resource: machine})
}
