package executions

import (
	"os"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"sinew/internal/config"
	"sinew/internal/julep/taskexec"
	"sinew/internal/julep/taskmachine"
	"sinew/internal/sfnopt"
	"sinew/internal/store"
	"sinew/internal/workflow"
)

// NewDeps builds the routes' dependencies for the api function: st (whose sealer only seals, the
// api never opens setup), a Step Functions client from aws (AWS_ENDPOINT_URL_SFN finds local mode's
// endpoint, which serves StartSyncExecution on the same host), and the state machines' ARNs from cfg.
func NewDeps(cfg *config.Config, aws awsv2.Config, st *store.Store) Deps {
	c := sfn.NewFromConfig(aws, sfnopt.ForEndpoint(aws, os.Getenv)...)
	machines := &taskmachine.Machines{ToolCallARN: cfg.ToolCallARN}
	return Deps{Workflow: &workflow.Service{Store: st, SFN: c, ToolCallARN: cfg.ToolCallARN, ToolCallExpressARN: cfg.ToolCallExpressARN, AgentLoopARN: cfg.AgentLoopARN, TaskMachineARN: machines.ARN},
		Liveness: workflow.NewLiveness(st, c, cfg.ToolCallARN, cfg.AgentLoopARN).WithExpress(cfg.ToolCallExpressARN != ""),
		Tasks:    &taskexec.Service{Store: st, SFN: c, MachineARN: machines.ARN}}
}
