package asl

import (
	"context"
	"fmt"
	"strings"
)

// Integration patterns of a Task resource.
const (
	PatternRequestResponse = ""
	PatternSync            = ".sync"
	PatternSync2           = ".sync:2"
	PatternWaitForToken    = ".waitForTaskToken"
)

// resourceRef is a parsed Task Resource.
type resourceRef struct {
	Legacy   bool   // arn:aws:lambda:region:account:function:name
	Activity bool   // arn:aws:states:region:account:activity:name
	Service  string // "lambda", "states", "dynamodb", "aws-sdk:dynamodb", ...
	API      string // "invoke", "startExecution", ...
	Pattern  string
	Function string // legacy: the function name or ARN
	Region   string
}

// Key is how integrations are registered: "service:api", e.g. "lambda:invoke".
func (r resourceRef) Key() string { return r.Service + ":" + r.API }

// historyResource is the `resource` of Task* events: the API and pattern, e.g. "invoke.waitForTaskToken".
func (r resourceRef) historyResource() string { return r.API + r.Pattern }

func parseResource(arn string) (resourceRef, error) {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) < 6 || parts[0] != "arn" || parts[1] == "" {
		return resourceRef{}, fmt.Errorf("not an ARN: %s", arn)
	}
	switch parts[2] {
	case "lambda":
		rest := parts[5] // function:name[:qualifier]
		if !strings.HasPrefix(rest, "function:") || len(rest) == len("function:") {
			return resourceRef{}, fmt.Errorf("not a Lambda function ARN: %s", arn)
		}
		return resourceRef{Legacy: true, Service: "lambda", Function: arn, Region: parts[3]}, nil
	case "states":
		if strings.HasPrefix(parts[5], "activity:") {
			return resourceRef{Activity: true, Service: "activity", Region: parts[3]}, nil
		}
		if parts[3] != "" || parts[4] != "" {
			return resourceRef{}, fmt.Errorf("not a service integration ARN: %s", arn)
		}
		// parts[5] is "service:api[.pattern]" or "aws-sdk:service:api[.pattern]".
		rest := parts[5]
		pattern := ""
		for _, p := range []string{PatternWaitForToken, PatternSync2, PatternSync} {
			if strings.HasSuffix(rest, p) {
				pattern, rest = p, strings.TrimSuffix(rest, p)
				break
			}
		}
		i := strings.LastIndex(rest, ":")
		if i <= 0 || i == len(rest)-1 {
			return resourceRef{}, fmt.Errorf("not a service integration ARN: %s", arn)
		}
		return resourceRef{Service: rest[:i], API: rest[i+1:], Pattern: pattern}, nil
	}
	return resourceRef{}, fmt.Errorf("unsupported resource: %s", arn)
}

// TaskCall is what an Integration receives.
type TaskCall struct {
	Resource     string // the Resource as written
	Service, API string
	Pattern      string
	Parameters   any    // the evaluated Parameters (JSONPath) or Arguments (JSONata)
	TaskToken    string // set for .waitForTaskToken
	ExecutionArn string
	StateName    string
}

// Integration runs one service API for Task states (registered under "service:api"). It returns the
// API's output; a *StatesError is the task's failure (its name and cause are what Retry and Catch
// see); any other error fails the task as States.TaskFailed.
type Integration interface {
	Invoke(ctx context.Context, call *TaskCall) (any, error)
}

// IntegrationFunc adapts a function to Integration.
type IntegrationFunc func(ctx context.Context, call *TaskCall) (any, error)

func (f IntegrationFunc) Invoke(ctx context.Context, call *TaskCall) (any, error) {
	return f(ctx, call)
}

// TaskFailure is a failure an integration reports with AWS's name and cause.
func TaskFailure(name, cause string) error { return newErr(name, cause) }
