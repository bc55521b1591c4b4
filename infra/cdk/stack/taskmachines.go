package stack

import (
	"slices"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"sinew/internal/deploy"
)

// syncRule is the rule Step Functions manages for .sync integrations with its own executions
// (https://docs.aws.amazon.com/step-functions/latest/dg/stepfunctions-iam.html).
const syncRule = "StepFunctionsGetEventsForStepFunctionsExecutionRule"

// taskRole is the role Julep tasks' state machines run as; the api function creates them with it
// (package julep/taskmachine) when a task is saved. A task machine's steps are child executions of
// tool_call (tool_call, wait_for_input), agent_loop (prompt) and task machines (workflow), each
// waited for (.sync:2, through Step Functions' managed rule) and stopped with its parent. A step
// whose expressions do not compile to JSONata invokes the prepare function to evaluate them.
func (s *Sinew) taskRole() {
	r := awsiam.NewRole(s.Stack, jsii.String("TaskMachineRole"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("states.amazonaws.com"), nil),
		Description: jsii.String("Julep tasks' state machines: start and wait for tool_call, agent_loop and task executions; invoke prepare to evaluate expressions"),
	})
	machines := []*string{s.stateMachineARN(deploy.ToolCall), s.stateMachineARN(deploy.AgentLoop), s.stateMachineARN(deploy.TaskMachines)}
	execs := []*string{s.executionsARN(deploy.ToolCall), s.executionsARN(deploy.AgentLoop), s.executionsARN(deploy.TaskMachines)}
	rule := s.Stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("events"), Resource: jsii.String("rule"),
		ResourceName: jsii.String(syncRule), ArnFormat: awscdk.ArnFormat_SLASH_RESOURCE_NAME})
	for _, st := range []*awsiam.PolicyStatementProps{
		{Sid: jsii.String("StartSteps"), Actions: jsii.Strings("states:StartExecution"), Resources: &machines},
		{Sid: jsii.String("WaitForSteps"), Actions: jsii.Strings("states:DescribeExecution", "states:StopExecution"), Resources: &execs},
		{Sid: jsii.String("EvaluateExpressions"), Actions: jsii.Strings("lambda:InvokeFunction"), Resources: &[]*string{s.functionARN("prepare")}},
		{Sid: jsii.String("SyncRule"), Actions: jsii.Strings("events:PutTargets", "events:PutRule", "events:DescribeRule"), Resources: &[]*string{rule}},
	} {
		r.AddToPolicy(awsiam.NewPolicyStatement(st))
	}
	s.TaskRole = r
	nagOn(r, "AwsSolutions-IAM5", taskReason, taskPattern,
		`/^Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:[A-Za-z0-9_-]+:\*$/`)
}

// taskPattern matches the ARNs of the stack's task machines and of their executions, as cdk-nag
// writes them.
const taskPattern = `/^Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:(stateMachine|execution):[A-Za-z0-9_-]+-task-\*(:\*)?$/`

// taskReason says why the grants on task machines name a pattern.
const taskReason = "A task's state machine is made when the task is saved, named task-<task id>: its ARN, and its executions', are known only as the pattern of the stack's task machines (<stack>-task-*), which is what this grants; executions are named when they start (execution:<state machine>:*)."

// nagTaskMachines acknowledges the pattern of the task machines f manages.
func nagTaskMachines(c constructs.IConstruct, f deploy.Function) {
	if slices.ContainsFunc(Permissions(f), func(p deploy.Permission) bool { return p.Action == deploy.ManageTaskMachines }) {
		nagOn(c, "AwsSolutions-IAM5", taskReason, taskPattern)
	}
}

// taskMachineStatements are the api function's grants on Julep tasks' state machines: it creates,
// updates and deletes them, passes them the task role, starts and lists their executions, and
// reads those (each with the definition it started with) and stops them.
func (s *Sinew) taskMachineStatements(add func(sid string, actions []string, resources []*string, cond map[string]any)) {
	add("ManageTaskMachines", []string{"states:CreateStateMachine", "states:UpdateStateMachine", "states:DeleteStateMachine",
		"states:ListExecutions", "states:StartExecution"}, []*string{s.stateMachineARN(deploy.TaskMachines)}, nil)
	add("ReadTaskExecutions", []string{"states:DescribeExecution", "states:DescribeStateMachineForExecution", "states:GetExecutionHistory", "states:StopExecution"},
		[]*string{s.executionsARN(deploy.TaskMachines)}, nil)
	add("PassTaskRole", []string{"iam:PassRole"}, []*string{s.TaskRole.RoleArn()},
		map[string]any{"StringEquals": map[string]any{"iam:PassedToService": "states.amazonaws.com"}})
}
