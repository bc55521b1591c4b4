// Package app builds what both worlds share above the handlers: the api function's router with
// every route, so functions/api (deployed) and infra/local (in-process) serve the same routes.
package app

import (
	"log/slog"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	lambdasvc "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"sinew/internal/catalogue"
	"sinew/internal/chat"
	"sinew/internal/config"
	"sinew/internal/dispatch"
	"sinew/internal/dispatch/lambdainvoke"
	"sinew/internal/executions"
	"sinew/internal/httpapi"
	"sinew/internal/julep/pyexpr"
	"sinew/internal/julep/taskexec"
	"sinew/internal/julep/taskflow"
	"sinew/internal/julep/taskmachine"
	"sinew/internal/loop/agentloop"
	"sinew/internal/loop/toolfmt"
	"sinew/internal/mcpserver"
	"sinew/internal/mcptools"
	"sinew/internal/openapitools"
	"sinew/internal/resources"
	"sinew/internal/secretsapi"
	"sinew/internal/store"
	"sinew/internal/system"
	"sinew/internal/tool"
)

// Deps is what the routes need.
type Deps struct {
	Config *config.Config
	AWS    awsv2.Config // for the Step Functions client of the execution routes
	Store  *store.Store // nil: only the routes that need no table (GET /healthz, GET /openapi.json, the catalogue)
	// Integrations is the provider registry the catalogue routes describe; nil leaves them out.
	Integrations catalogue.Source
	Logger       *slog.Logger
}

// APIRouter is the router of every HTTP route but chat (which has a Lambda of its own). GET
// /healthz and GET /openapi.json come with httpapi.New.
func APIRouter(d Deps) *httpapi.Router {
	cfg := d.Config
	if cfg == nil {
		cfg = &config.Config{}
	}
	rt := httpapi.New(httpapi.Options{JWTClaim: cfg.JWTClaim, Logger: d.Logger})
	if d.Integrations != nil {
		catalogue.Register(rt, d.Integrations)
	}
	if d.Store != nil {
		sfnc := sfn.NewFromConfig(d.AWS)
		machines := &taskmachine.Machines{SFN: sfnc, ToolCallARN: cfg.ToolCallARN, AgentLoopARN: cfg.AgentLoopARN,
			RoleARN: cfg.TaskRoleARN, Expr: pyexpr.Compile, Eval: evaluator(cfg.FunctionNames["prepare"])}
		resources.Register(rt, &resources.Service{Store: d.Store, FlagDefaults: cfg.FlagDefaults, Machines: machines, Models: modelIDs(cfg.Model)})
		secretsapi.Register(rt, secretsapi.Deps{Store: d.Store})
		openapitools.Register(rt, openapitools.Deps{Store: d.Store, Logger: d.Logger})
		// The listing of a remote MCP server runs in the integration function, which alone may
		// open the setup's secrets.
		mcptools.Register(rt, mcptools.Deps{Store: d.Store, Logger: d.Logger, Executor: &dispatch.Dispatcher{
			Invoker:   &lambdainvoke.Invoker{Client: lambdasvc.NewFromConfig(d.AWS)},
			Functions: map[tool.Type]string{tool.TypeIntegration: cfg.FunctionNames["integration"]}}})
		ex := executions.NewDeps(cfg, d.AWS, d.Store)
		executions.Register(rt, ex)
		mcpserver.Register(rt, mcpserver.Deps{Store: d.Store, Workflow: ex.Workflow, Wait: cfg.MCPWait, Issuer: cfg.JWTIssuer, Logger: d.Logger, ToolSearchThreshold: cfg.ToolSearchThreshold,
			Formatter: &toolfmt.Formatter{Integrations: d.Integrations, System: system.Schema}})
		executions.RegisterTaskExecutions(rt, &agentloop.Starter{Store: d.Store, SFN: sfnc, ARN: cfg.AgentLoopARN}, ex.Tasks)
		taskexec.Register(rt, ex.Tasks)
	}
	// The chat route is the chat function's; GET /openapi.json lists it too, so the document covers
	// the whole HTTP API.
	chatDoc := httpapi.New(httpapi.Options{})
	chat.Register(chatDoc, nil)
	rt.Document(chatDoc)
	return rt
}

// evaluator runs a task step's expressions that do not compile to JSONata in the prepare
// function (its evaluate action); without it configured they are refused when the task is saved.
func evaluator(function string) *taskflow.Evaluator {
	if function == "" {
		return nil
	}
	return &taskflow.Evaluator{Function: function, Names: pyexpr.Names,
		Evaluable: func(src string, names map[string]string) bool {
			c, _ := pyexpr.Classify(src, names)
			return c == pyexpr.NeedsEval
		}}
}

// modelIDs are the ids GET /agents/models lists: the configured model's (a script's file is
// not shown: its id is "scripted").
func modelIDs(m config.Model) []string {
	switch {
	case m.Provider == "scripted":
		return []string{"scripted"}
	case m.Name != "":
		return []string{m.Name}
	}
	return nil
}
