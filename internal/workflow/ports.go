package workflow

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/sfn"
)

// SFN is the part of the aws-sdk-go-v2 Step Functions client the workflow uses. Local mode's
// Step Functions API answers the same calls through an endpoint override.
type SFN interface {
	ExecutionStarter
	StopExecution(context.Context, *sfn.StopExecutionInput, ...func(*sfn.Options)) (*sfn.StopExecutionOutput, error)
	SendTaskSuccess(context.Context, *sfn.SendTaskSuccessInput, ...func(*sfn.Options)) (*sfn.SendTaskSuccessOutput, error)
	SendTaskFailure(context.Context, *sfn.SendTaskFailureInput, ...func(*sfn.Options)) (*sfn.SendTaskFailureOutput, error)
	SendTaskHeartbeat(context.Context, *sfn.SendTaskHeartbeatInput, ...func(*sfn.Options)) (*sfn.SendTaskHeartbeatOutput, error)
}

var _ SFN = (*sfn.Client)(nil)

// ExecutionStarter is the one call that starts an execution: SFN has it, and the agent_loop
// starter needs no other.
type ExecutionStarter interface {
	StartExecution(context.Context, *sfn.StartExecutionInput, ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error)
}
