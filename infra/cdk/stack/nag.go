package stack

import (
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"sinew/internal/deploy"
)

// ApplyChecks runs cdk-nag's AwsSolutions pack on every stack of app at synth: an unacknowledged
// finding is an error annotation, and `cdk synth` fails on it.
func ApplyChecks(app awscdk.App) {
	awscdk.Aspects_Of(app).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
}

// nag acknowledges rule on c and its children, with the reason written where the choice is made.
func nag(c constructs.IConstruct, rule, reason string) {
	cdknag.NagSuppressions_AddResourceSuppressions(c, &[]*cdknag.NagPackSuppression{{
		Id: jsii.String(rule), Reason: jsii.String(reason)}}, jsii.Bool(true))
}

// nagOn acknowledges only the named findings of a granular rule (IAM5's Resource::... and
// Action::...), so any other wildcard still fails the check. A finding given as /regex/ is matched
// as one.
func nagOn(c constructs.IConstruct, rule, reason string, findings ...string) {
	applies := make([]interface{}, 0, len(findings))
	for _, f := range findings {
		if len(f) > 1 && strings.HasPrefix(f, "/") && strings.HasSuffix(f, "/") {
			applies = append(applies, &cdknag.RegexAppliesTo{Regex: jsii.String(f)})
			continue
		}
		applies = append(applies, f)
	}
	cdknag.NagSuppressions_AddResourceSuppressions(c, &[]*cdknag.NagPackSuppression{{
		Id: jsii.String(rule), Reason: jsii.String(reason), AppliesTo: &applies}}, jsii.Bool(true))
}

// nagExecutions acknowledges the execution ARN pattern of the state machines whose executions f
// describes or stops.
func nagExecutions(c constructs.IConstruct, f deploy.Function) {
	var machines []string
	for _, p := range Permissions(f) {
		if (p.Action == deploy.ManageExecution || p.Action == deploy.DescribeExecution) && !slices.Contains(machines, p.Target) {
			machines = append(machines, p.Target)
		}
	}
	if len(machines) == 0 {
		return
	}
	nagOn(c, "AwsSolutions-IAM5",
		"Executions are named when they start, so DescribeExecution/StopExecution can only be scoped to the executions of one named state machine (execution:<state machine>:*), which is what this grants.",
		`/^Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:[A-Za-z0-9_-]+:\*$/`)
}

// nagBedrock acknowledges the Region wildcard of a geographic inference profile's model (see
// bedrockGrants); a global profile's grant names its ARNs without one.
func nagBedrock(c constructs.IConstruct, f deploy.Function, models []string) {
	if !slices.ContainsFunc(Permissions(f), func(p deploy.Permission) bool { return p.Action == deploy.BedrockInvoke }) || !slices.ContainsFunc(models, func(m string) bool {
		geo, _, ok := SplitProfile(m)
		return ok && geo != "global"
	}) {
		return
	}
	nagOn(c, "AwsSolutions-IAM5",
		"A geographic cross-Region inference profile routes each request to one of its destination Regions, which Bedrock picks per request and AWS extends over time; Bedrock requires InvokeModel on the profile's foundation model in the Region it lands in. The Region is therefore a wildcard, the model is named, and the statement's bedrock:InferenceProfileArn condition admits only requests made through the configured profile.",
		`/^Resource::arn:<AWS::Partition>:bedrock:\*::foundation-model\/.+$/`)
}

// nagToolFunctions acknowledges the wildcards of the developers' functions aws_lambda tools may
// invoke: a function's qualifiers (":*") and the name prefixes the operator chose in
// SINEW_AWS_LAMBDA_FUNCTIONS (settings refuse a bare "*").
func nagToolFunctions(c constructs.IConstruct, f deploy.Function) {
	if !slices.ContainsFunc(Permissions(f), func(p deploy.Permission) bool { return p.Action == deploy.InvokeToolFunction }) {
		return
	}
	nagOn(c, "AwsSolutions-IAM5",
		"aws_lambda tools invoke only the functions the operator names in SINEW_AWS_LAMBDA_FUNCTIONS; each is granted with its versions and aliases (name:*), and an entry the operator writes as a name prefix (tools-*) is granted as that prefix. The executor refuses any function the setting does not name before it calls.",
		`/^Resource::arn:(<AWS::Partition>|aws[a-z-]*):lambda:(<AWS::Region>|[a-z0-9-]+):(<AWS::AccountId>|\d{12}):function:[A-Za-z0-9_:$-]*\*$/`)
}
