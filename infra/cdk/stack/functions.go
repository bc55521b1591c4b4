package stack

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"

	"sinew/internal/config"
	"sinew/internal/deploy"
	"sinew/internal/store"
)

// The table key, as DynamoDB uses it on the caller's behalf (kms:ViaService).
var (
	tableKeyRead  = []string{"kms:Decrypt", "kms:DescribeKey"}
	tableKeyWrite = []string{"kms:Encrypt", "kms:GenerateDataKey", "kms:ReEncryptFrom", "kms:ReEncryptTo"}
)

// role makes a function's execution role with nothing but writing its own logs; the permissions of
// its description are added by function. No AWS managed policy: AWSLambdaBasicExecutionRole would
// let it write to every log group.
func (s *Sinew) role(f deploy.Function) awsiam.Role {
	return awsiam.NewRole(s.Stack, jsii.String(logicalID(f.Name)+"Role"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
		Description: jsii.String("sinew " + f.Name + " function"),
	})
}

// secretsKey makes the key of setup secrets. Its key policy lets the account administer the key
// but not use it; only the roles whose description allows it may seal (GenerateDataKey) or unseal
// (Decrypt), and only under sinew's encryption context, so no IAM policy elsewhere in the account
// can open a secret.
//
// The users are named by aws:PrincipalArn in a condition, with the account as the principal: a key
// policy whose Principal names a role made in the same deploy can be refused by KMS
// (MalformedPolicyDocumentException) until IAM has propagated the role; a condition's value is not
// checked, and the roles' own policies still have to allow the action.
func (s *Sinew) secretsKey(fns []deploy.Function) {
	doc := awsiam.NewPolicyDocument(&awsiam.PolicyDocumentProps{Statements: &[]awsiam.PolicyStatement{s.keyAdmin()}})
	for _, use := range []struct {
		sid    string
		action deploy.Action
		kms    string
	}{{"SealBy", deploy.SecretsKeyEncrypt, "kms:GenerateDataKey"}, {"UnsealBy", deploy.SecretsKeyDecrypt, "kms:Decrypt"}} {
		var arns []*string
		var names []string
		for _, f := range fns {
			if slices.ContainsFunc(Permissions(f), func(p deploy.Permission) bool { return p.Action == use.action }) {
				arns = append(arns, s.Roles[f.Name].RoleArn())
				names = append(names, logicalID(f.Name))
			}
		}
		if len(arns) == 0 {
			continue
		}
		doc.AddStatements(s.keyUse(use.sid+strings.Join(names, ""), arns, sinewContext(), use.kms))
	}
	s.SecretsKey = awskms.NewKey(s.Stack, jsii.String("SecretsKey"), &awskms.KeyProps{
		Description:       jsii.String("sinew: envelope-encrypts setup secrets; only the executors may decrypt"),
		EnableKeyRotation: jsii.Bool(true),
		RemovalPolicy:     s.removal(),
		Policy:            doc,
	})
}

// keyAdmin lets the account administer the secrets key without using it. No kms:Create*: it holds
// kms:CreateGrant, and a grant gives its grantee Decrypt.
func (s *Sinew) keyAdmin() awsiam.PolicyStatement {
	// In a key policy "*" is the key itself; AWS allows no other resource there.
	return awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("AccountAdministersButDoesNotUse"),
		Principals: &[]awsiam.IPrincipal{awsiam.NewAccountRootPrincipal()},
		Actions: jsii.Strings("kms:CreateAlias", "kms:DeleteAlias", "kms:UpdateAlias", "kms:Describe*", "kms:Enable*", "kms:List*",
			"kms:PutKeyPolicy", "kms:UpdateKeyDescription", "kms:RevokeGrant", "kms:RetireGrant", "kms:Disable*", "kms:Get*",
			"kms:TagResource", "kms:UntagResource", "kms:ScheduleKeyDeletion", "kms:CancelKeyDeletion", "kms:RotateKeyOnDemand"),
		Resources: jsii.Strings("*"),
	})
}

// keyUse lets the principals whose ARN is one of arns use the secrets key for actions, under cond.
func (s *Sinew) keyUse(sid string, arns []*string, cond map[string]any, actions ...string) awsiam.PolicyStatement {
	c := map[string]any{"ArnEquals": map[string]any{"aws:PrincipalArn": arns}}
	for k, v := range cond {
		c[k] = v
	}
	return awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String(sid),
		Principals: &[]awsiam.IPrincipal{awsiam.NewAccountRootPrincipal()},
		Actions:    jsii.Strings(actions...),
		Resources:  jsii.Strings("*"),
		Conditions: &c,
	})
}

// SecretsContextKeys are the keys of the encryption context the store binds each sealed value to
// (developer, owner and tool always; field and key for setup values); the key policy allows the
// secrets key only under such a context, with a developer.
var SecretsContextKeys = []string{"developer", "owner", "tool", "field", "key"}

func sinewContext() map[string]any {
	return map[string]any{
		"ForAllValues:StringEquals": map[string]any{"kms:EncryptionContextKeys": SecretsContextKeys},
		"Null":                      map[string]any{"kms:EncryptionContext:developer": "false"},
	}
}

// events makes the bus for ToolCallPending, or adopts the operator's.
func (s *Sinew) events() {
	if n := s.settings.EventBusName; n != "" {
		s.EventBus = awsevents.EventBus_FromEventBusName(s.Stack, jsii.String("EventBus"), jsii.String(n))
		return
	}
	s.EventBus = awsevents.NewEventBus(s.Stack, jsii.String("EventBus"), &awsevents.EventBusProps{
		EventBusName: jsii.String(s.physical("events")),
		Description:  jsii.String("sinew: ToolCallPending events, one per function call waiting for its client"),
	})
}

// env gives the function's environment: each variable's value from where deploy.ValueOf says it
// comes, operator settings only when set (the function applies config's default otherwise), and
// the Go runtime's GOGC and GOMEMLIMIT (deploy.RuntimeEnv: no collection inside a cold start, the
// heap capped under the function's memory).
func (s *Sinew) env(f deploy.Function) *map[string]*string {
	out := map[string]*string{}
	for k, v := range f.RuntimeEnv() {
		out[k] = jsii.String(v)
	}
	for _, name := range f.Env {
		v := deploy.ValueOf(name)
		switch v.Kind {
		case deploy.TableName:
			out[name] = s.Table.TableName()
		case deploy.FunctionName:
			out[name] = jsii.String(s.physical(v.Target))
		case deploy.FunctionARN:
			out[name] = s.functionARN(v.Target)
		case deploy.StateMachineARN:
			out[name] = s.stateMachineARN(v.Target)
		case deploy.SecretsKeyID:
			out[name] = s.SecretsKey.KeyArn()
		case deploy.EventBusName:
			out[name] = s.EventBus.EventBusName()
		case deploy.TaskRoleARN:
			out[name] = s.TaskRole.RoleArn()
		case deploy.OperatorSetting:
			if name == config.EnvOpenAIKey {
				if s.modelKey != nil {
					out[name] = s.modelKey
				}
			} else if val, ok := s.settings.Env[name]; ok {
				out[name] = jsii.String(val)
			}
		default:
			panic(fmt.Sprintf("stack: %s of %s: value kind %q unknown to the stack", name, f.Name, v.Kind))
		}
	}
	return &out
}

// alsoRuns maps a function to another whose work it can do: the system function runs session.chat
// (internal/system), so it gets what chat needs too.
var alsoRuns = map[string]string{"system": "chat"}

// Permissions are the abstract permissions of f's role: its description's, and those of the
// function whose work it can also do (alsoRuns) that it lacks; table grants merge their item kinds.
func Permissions(f deploy.Function) []deploy.Permission {
	out := slices.Clone(f.Permissions)
	other, ok := deploy.FunctionByName(alsoRuns[f.Name])
	if !ok {
		return out
	}
	for _, p := range other.Permissions {
		i := slices.IndexFunc(out, func(q deploy.Permission) bool { return q.Action == p.Action && q.Target == p.Target })
		switch {
		case i < 0:
			out = append(out, p)
		case p.Action == deploy.TableRead || p.Action == deploy.TableWrite:
			items := slices.Clone(out[i].Items)
			for _, it := range p.Items {
				if !slices.Contains(items, it) {
					items = append(items, it)
				}
			}
			out[i].Items = items
		}
	}
	return out
}

// Statements turns a function's abstract permissions (Permissions) into IAM statements. Each names its exact
// resources; the only wildcards are those AWS forces, each said where it is made.
func (s *Sinew) Statements(f deploy.Function) []awsiam.PolicyStatement {
	var out []awsiam.PolicyStatement
	add := func(sid string, actions []string, resources []*string, cond map[string]any) {
		props := &awsiam.PolicyStatementProps{Sid: jsii.String(sid), Actions: jsii.Strings(actions...), Resources: &resources}
		if cond != nil {
			props.Conditions = &cond
		}
		out = append(out, awsiam.NewPolicyStatement(props))
	}
	viaDynamo := map[string]any{"StringEquals": map[string]any{"kms:ViaService": "dynamodb." + *awscdk.Aws_REGION() + ".amazonaws.com"}}
	s.tableStatements(f, add, viaDynamo)
	for _, p := range Permissions(f) {
		switch p.Action {
		case deploy.TableRead, deploy.TableWrite:
			// tableStatements: the actions the code calls.
		case deploy.InvokeFunction:
			add("Invoke"+logicalID(p.Target), []string{"lambda:InvokeFunction"}, []*string{s.functionARN(p.Target)}, nil)
		case deploy.InvokeToolFunction:
			// Only the developers' functions the operator named; none named, no statement.
			if arns := s.toolFunctionARNs(); len(arns) > 0 {
				add("InvokeToolFunctions", []string{"lambda:InvokeFunction"}, arns, nil)
			}
		case deploy.StartExecution:
			add("Start"+logicalID(p.Target), []string{"states:StartExecution"}, []*string{s.stateMachineARN(p.Target)}, nil)
		case deploy.StartSyncExecution:
			add("StartSync"+logicalID(p.Target), []string{"states:StartSyncExecution"}, []*string{s.stateMachineARN(p.Target)}, nil)
		case deploy.ManageExecution:
			// Executions are named at run time: their ARN pattern is the narrowest AWS offers.
			add("Stop"+logicalID(p.Target)+"Executions", []string{"states:StopExecution"},
				[]*string{s.executionsARN(p.Target)}, nil)
		case deploy.DescribeExecution:
			add("Describe"+logicalID(p.Target)+"Executions", []string{"states:DescribeExecution"},
				[]*string{s.executionsARN(p.Target)}, nil)
		case deploy.SendTaskResult:
			add("TaskResult"+logicalID(p.Target), []string{"states:SendTaskSuccess", "states:SendTaskFailure", "states:SendTaskHeartbeat"},
				[]*string{s.stateMachineARN(p.Target)}, nil)
		case deploy.AnswerOwnTask:
			add("AnswerTask"+logicalID(p.Target), []string{"states:SendTaskSuccess", "states:SendTaskFailure"},
				[]*string{s.stateMachineARN(p.Target)}, nil)
		case deploy.SecretsKeyEncrypt:
			add("SealSecrets", []string{"kms:GenerateDataKey"}, []*string{s.SecretsKey.KeyArn()}, nil)
		case deploy.SecretsKeyDecrypt:
			add("UnsealSecrets", []string{"kms:Decrypt"}, []*string{s.SecretsKey.KeyArn()}, nil)
		case deploy.PutEvents:
			add("PutEvents", []string{"events:PutEvents"}, []*string{s.EventBus.EventBusArn()}, nil)
		case deploy.ManageTaskMachines:
			s.taskMachineStatements(add)
		case deploy.BedrockInvoke:
			// With a model that is not Bedrock's and no bedrockModels there is nothing to invoke.
			for _, g := range s.bedrockGrants() {
				add(g.sid, []string{"bedrock:InvokeModel"}, g.resources, g.cond)
			}
		case deploy.ReadModelKeySecret:
			// Without an OpenAI-compatible endpoint there is no key to read.
			if s.modelRes != nil {
				add("ReadModelKey", []string{"secretsmanager:GetSecretValue"}, s.modelRes, nil)
			}
		default:
			panic(fmt.Sprintf("stack: %s: permission %q unknown to the stack", f.Name, p.Action))
		}
	}
	return out
}

// tableStatements grant f's table actions (tableAccessOf) on the table, Query on the index when
// it lists, and the table key through DynamoDB.
func (s *Sinew) tableStatements(f deploy.Function, add func(string, []string, []*string, map[string]any), via map[string]any) {
	acc, ok := tableAccessOf[f.Name]
	if !ok {
		panic(fmt.Sprintf("stack: %s: no table access declared (tableAccessOf)", f.Name))
	}
	add("Table", acc.actions, []*string{s.Table.TableArn()}, nil)
	for _, ix := range acc.indexes {
		sid := "TableIndex"
		if ix != store.GSI1 {
			sid += strings.ToUpper(ix) // the first index's Sid stays what deployed stacks hold
		}
		add(sid, []string{"dynamodb:Query"}, []*string{jsii.String(*s.Table.TableArn() + "/index/" + ix)}, nil)
	}
	add("TableKeyRead", tableKeyRead, []*string{s.TableKey.KeyArn()}, via)
	if writes(acc.actions) {
		add("TableKeyWrite", tableKeyWrite, []*string{s.TableKey.KeyArn()}, via)
	}
}

// bedrockGrant is one statement of what calling the configured Bedrock models takes.
type bedrockGrant struct {
	sid       string
	resources []*string
	cond      map[string]any
}

// bedrockGrants allow bedrock:InvokeModel (which Converse, the only call, needs) on exactly what
// each configured id reaches
// (https://docs.aws.amazon.com/bedrock/latest/userguide/inference-profiles-prereq.html):
//   - a model id: its foundation model in this Region;
//   - a geographic profile (us., eu., jp., ...): the profile in this Region and account, and its
//     model in any Region but only through that profile (bedrock:InferenceProfileArn). Bedrock picks
//     the destination Region per request and AWS adds destinations to a profile over time, so a
//     list of Regions would fail whenever a request lands in a newer one; the condition already
//     confines the grant to the profile's own destinations;
//   - a global profile: the profile, its model in this Region through it, and the Region-less
//     model ARN Bedrock authorizes the destination by, under aws:RequestedRegion "unspecified"
//     (https://docs.aws.amazon.com/bedrock/latest/userguide/global-cross-region-inference.html).
func (s *Sinew) bedrockGrants() []bedrockGrant {
	partition, region, account := *awscdk.Aws_PARTITION(), *awscdk.Aws_REGION(), *awscdk.Aws_ACCOUNT_ID()
	model := func(r, id string) *string {
		return jsii.String(fmt.Sprintf("arn:%s:bedrock:%s::foundation-model/%s", partition, r, id))
	}
	direct := bedrockGrant{sid: "InvokeModels"}
	var through []bedrockGrant
	for _, m := range s.settings.BedrockModels {
		geo, base, ok := SplitProfile(m)
		if !ok {
			direct.resources = append(direct.resources, model(region, m))
			continue
		}
		profile := fmt.Sprintf("arn:%s:bedrock:%s:%s:inference-profile/%s", partition, region, account, m)
		direct.resources = append(direct.resources, jsii.String(profile))
		via := map[string]any{"bedrock:InferenceProfileArn": profile}
		sid := fmt.Sprintf("Profile%dModel", len(through)+1)
		if geo != "global" {
			through = append(through, bedrockGrant{sid, []*string{model("*", base)}, map[string]any{"StringEquals": via}})
			continue
		}
		through = append(through,
			bedrockGrant{sid, []*string{model(region, base)}, map[string]any{"StringEquals": via}},
			bedrockGrant{sid + "Global", []*string{model("", base)}, map[string]any{"StringEquals": map[string]any{
				"bedrock:InferenceProfileArn": profile, "aws:RequestedRegion": "unspecified"}}})
	}
	if len(direct.resources) == 0 {
		return nil
	}
	return append([]bedrockGrant{direct}, through...)
}

// function makes one Lambda from its description.
func (s *Sinew) function(f deploy.Function, code CodeSource) {
	id := logicalID(f.Name)
	role := s.Roles[f.Name]
	lg := s.logs(id+"Logs", "/aws/lambda/"+s.physical(f.Name))
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:       jsii.String("OwnLogs"),
		Actions:   jsii.Strings("logs:CreateLogStream", "logs:PutLogEvents"),
		Resources: &[]*string{lg.LogGroupArn()},
	}))
	// The description's permissions go in a policy of their own, apart from the role's default
	// policy where the CDK puts tracing's X-Ray statement: only that one is acknowledged for its
	// Resource "*", so a wildcard that crept into these would fail cdk-nag.
	stmts := s.Statements(f)
	var perms awsiam.Policy
	if len(stmts) > 0 {
		perms = awsiam.NewPolicy(s.Stack, jsii.String(id+"Permissions"), &awsiam.PolicyProps{
			Roles: &[]awsiam.IRole{role}, Statements: &stmts,
		})
		s.Policies[f.Name] = perms
	}
	desc := f.Purpose
	if len(desc) > 256 { // Lambda's limit
		desc = desc[:253] + "..."
	}
	props := &awslambda.FunctionProps{
		FunctionName: jsii.String(s.physical(f.Name)),
		Description:  jsii.String(desc),
		Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture: awslambda.Architecture_ARM_64(),
		Handler:      jsii.String(deploy.Handler),
		Code:         code(f.Name),
		MemorySize:   jsii.Number(f.MemoryMB),
		Timeout:      awscdk.Duration_Seconds(jsii.Number(f.Timeout.Seconds())),
		Environment:  s.env(f),
		Role:         role,
		Tracing:      awslambda.Tracing_ACTIVE,
		LogGroup:     lg,
		// JSON lines, so Lambda filters the functions' slog records by level and Logs Insights
		// reads their fields.
		LoggingFormat:         awslambda.LoggingFormat_JSON,
		ApplicationLogLevelV2: awslambda.ApplicationLogLevel(s.settings.LogLevel),
		SystemLogLevelV2:      awslambda.SystemLogLevel(s.settings.SystemLogLevel),
	}
	if f.Name == "integration" {
		props.Layers = s.ffmpegLayer()
	}
	// A burst of tool calls can take every execution of a small account; api (every route) and
	// settle (every outcome) keep theirs.
	if n := s.settings.Reserved[f.Name]; n > 0 {
		props.ReservedConcurrentExecutions = jsii.Number(n)
	}
	fn := awslambda.NewFunction(s.Stack, jsii.String(id), props)
	s.Functions[f.Name] = fn
	if perms != nil {
		// A function starts only once it may do its work.
		fn.Node().AddDependency(perms)
		nagExecutions(perms, f)
		nagTaskMachines(perms, f)
		nagBedrock(perms, f, s.settings.BedrockModels)
		nagToolFunctions(perms, f)
	}
	// Active tracing adds xray:PutTraceSegments and xray:PutTelemetryRecords on "*" to the role's
	// default policy: X-Ray has no resource-level permissions.
	nagOn(role.Node().FindChild(jsii.String("DefaultPolicy")), "AwsSolutions-IAM5",
		"X-Ray's PutTraceSegments and PutTelemetryRecords accept only Resource '*' (X-Ray defines no resource types); the CDK adds them to the role's default policy for active tracing. That policy holds only them and the function's own log group.",
		"Resource::*")
}

// ffmpegLayer is the operator's ffmpeg layer for the integration function, if any.
func (s *Sinew) ffmpegLayer() *[]awslambda.ILayerVersion {
	switch {
	case s.settings.FFmpegLayerARN != "":
		return &[]awslambda.ILayerVersion{awslambda.LayerVersion_FromLayerVersionArn(s.Stack, jsii.String("FFmpegLayer"), jsii.String(s.settings.FFmpegLayerARN))}
	case s.settings.FFmpegLayerZip != "":
		return &[]awslambda.ILayerVersion{awslambda.NewLayerVersion(s.Stack, jsii.String("FFmpegLayer"), &awslambda.LayerVersionProps{
			Code:                    awslambda.Code_FromAsset(jsii.String(s.settings.FFmpegLayerZip), nil),
			CompatibleRuntimes:      &[]awslambda.Runtime{awslambda.Runtime_PROVIDED_AL2023()},
			CompatibleArchitectures: &[]awslambda.Architecture{awslambda.Architecture_ARM_64()},
			Description:             jsii.String("ffmpeg for sinew's integration function"),
			RemovalPolicy:           s.removal(),
		})}
	}
	return nil
}

// toolFunctionARNs are the ARNs of the functions SINEW_AWS_LAMBDA_FUNCTIONS names (settings
// checked them): a name or name prefix in the stack's account and Region, each with its
// qualifiers (":*"), or an ARN as given.
func (s *Sinew) toolFunctionARNs() []*string {
	var out []*string
	for _, e := range ToolFunctions(s.settings.Env[config.EnvLambdaTools]) {
		if strings.HasPrefix(e, "arn:") {
			out = append(out, jsii.String(e))
			if !strings.HasSuffix(e, "*") && strings.Count(e, ":") == 6 {
				out = append(out, jsii.String(e+":*"))
			}
			continue
		}
		arn := func(name string) *string {
			return s.Stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("lambda"), Resource: jsii.String("function"),
				ResourceName: jsii.String(name), ArnFormat: awscdk.ArnFormat_COLON_RESOURCE_NAME})
		}
		out = append(out, arn(e))
		if !strings.HasSuffix(e, "*") && !strings.Contains(e, ":") {
			out = append(out, arn(e+":*"))
		}
	}
	return out
}
