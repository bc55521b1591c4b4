// Package stack is sinew's CloudFormation stack in the CDK.
//
// It is everything `cdk deploy` creates, built from the one description of the deployment
// (sinew/internal/deploy), the table spec (sinew/internal/store) and the HTTP router
// (sinew/internal/httpapi), so the stack and local mode agree on functions, variables, permissions,
// definitions and routes.
package stack

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctions"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"sinew/internal/deploy"
	"sinew/internal/fault"
	"sinew/internal/httpapi"
	"sinew/internal/store"
)

// Props configure the stack.
type Props struct {
	awscdk.StackProps
	// Root is the repository root (FindRoot): functions/ and statemachines/ are read from it.
	Root     string
	Settings Settings
	// Code gives each function's code. Nil means GoBuildCode(Root), after checking every described
	// function's folder exists. Only unit tests set it (to a placeholder asset), to assert the
	// template's shape before every function is written.
	Code CodeSource
	// Definition gives a state machine's definition. Nil reads Root/m.File. Only unit tests set it,
	// for definitions still to be written.
	Definition func(m deploy.StateMachine) ([]byte, error)
	// Routes are the HTTP routes; nil means DefaultRoutes().
	Routes []httpapi.RouteInfo
}

// Sinew is the built stack and its main parts.
type Sinew struct {
	Stack         awscdk.Stack
	Table         awsdynamodb.Table
	TableKey      awskms.Key
	RotationRole  awsiam.Role // the rotate-secrets command's
	SecretsKey    awskms.Key
	Roles         map[string]awsiam.Role
	Policies      map[string]awsiam.Policy // each function's permissions from its description
	Functions     map[string]awslambda.Function
	StateMachines map[string]awsstepfunctions.StateMachine
	EventBus      awsevents.IEventBus

	name     string // the stack name: prefix of the physical names
	settings Settings
	modelKey *string // the OpenAI-compatible key's secret ARN, nil when not used
	modelRes []*string

	settleRule awsevents.Rule
	dlqs       []namedQueue
}

var stackNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]{0,39}$`)

// ChatRoute is the route of the function triggered by deploy.TriggerHTTPChat; the router of the api
// function does not hold it (chat is its own function), so the stack adds it unless given.
var ChatRoute = httpapi.RouteInfo{Method: "POST", Path: "/sessions/{session_id}/chat", Function: "chat"}

// DefaultRoutes are the routes the router lists, plus the chat route. The stack makes an explicit
// route only for the public ones (no authorizer) and those served by another function than api;
// every other request goes to api through the $default route behind the JWT authorizer, so routes
// added to the api function later need no change here and unknown paths still get the router's
// 404/405 body.
func DefaultRoutes() []httpapi.RouteInfo {
	routes := httpapi.New(httpapi.Options{}).Routes()
	if !slices.ContainsFunc(routes, func(r httpapi.RouteInfo) bool { return r.Function == ChatRoute.Function }) {
		routes = append(routes, ChatRoute)
	}
	return routes
}

// New builds the stack named id. It checks its inputs first and reports every problem at once: a
// described function whose folder is missing, a missing or inconsistent state machine definition, a
// route to an unknown function.
func New(scope constructs.Construct, id string, p Props) (*Sinew, error) {
	if !stackNameRE.MatchString(id) {
		return nil, fault.Invalid("stackName", "stack name %q: want a letter, then letters, digits or -, at most 40 (it prefixes function names, which Lambda caps at 64)", id)
	}
	fns, machines := deploy.Functions(), deploy.StateMachines()
	var errs []error
	code := p.Code
	if code == nil {
		var names []string
		for _, f := range fns {
			names = append(names, f.Name)
		}
		if missing := MissingFunctions(p.Root, names); len(missing) > 0 {
			errs = append(errs, fmt.Errorf("cannot synthesize: these described functions are not written yet (no functions/<name>/main.go under %s): %s",
				p.Root, strings.Join(missing, ", ")))
		}
		code = GoBuildCode(p.Root)
	}
	readDef := p.Definition
	if readDef == nil {
		readDef = func(m deploy.StateMachine) ([]byte, error) { return os.ReadFile(filepath.Join(p.Root, m.File)) }
	}
	defs := map[string]string{}
	for _, m := range machines {
		def, err := readDef(m)
		if err != nil {
			errs = append(errs, fmt.Errorf("state machine %s: read its definition: %w", m.Name, err))
			continue
		}
		if err := m.CheckPlaceholders(def); err != nil {
			errs = append(errs, err)
			continue
		}
		defs[m.Name] = string(def)
	}
	routes := p.Routes
	if routes == nil {
		routes = DefaultRoutes()
	}
	for _, r := range routes {
		if _, ok := deploy.FunctionByName(r.Function); !ok {
			errs = append(errs, fmt.Errorf("route %s %s: function %q is not described", r.Method, r.Path, r.Function))
		}
	}
	if p.Settings.Env == nil {
		errs = append(errs, errors.New("settings were not parsed (use ParseSettings)"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}

	sp := stackProps(p)
	st := awscdk.NewStack(scope, jsii.String(id), &sp)
	s := &Sinew{Stack: st, name: id, settings: p.Settings, Roles: map[string]awsiam.Role{}, Policies: map[string]awsiam.Policy{},
		Functions: map[string]awslambda.Function{}, StateMachines: map[string]awsstepfunctions.StateMachine{}}

	s.data()
	s.events()
	s.modelSecret()
	for _, f := range fns {
		s.Roles[f.Name] = s.role(f)
	}
	s.secretsKey(fns)
	s.rotationRole()
	for _, f := range fns {
		s.function(f, code)
	}
	for _, m := range machines {
		s.stateMachine(m, defs[m.Name])
	}
	s.settleOnStatusChange()
	s.sweepOnSchedule()
	api := s.httpAPI(routes)
	s.alarms(api)
	s.taskResponderPolicy()
	s.tag()

	out := func(id, desc string, v *string) {
		awscdk.NewCfnOutput(st, jsii.String(id), &awscdk.CfnOutputProps{Value: v, Description: jsii.String(desc)})
	}
	out("ApiUrl", "the HTTP API's base URL", api.url)
	out("TableName", "the DynamoDB table", s.Table.TableName())
	for _, m := range machines {
		out(logicalID(m.Name)+"StateMachineArn", "the "+m.Name+" state machine", s.StateMachines[m.Name].StateMachineArn())
	}
	out("EventBusName", "the EventBridge bus receiving ToolCallPending", s.EventBus.EventBusName())
	out("SecretsRotationRoleArn", "the role rotate-secrets runs as (ReEncrypt only, never Decrypt)", s.RotationRole.RoleArn())
	if api.pool != nil {
		out("UserPoolId", "the Cognito user pool of sinew's developers", api.pool)
		out("UserPoolClientId", "the app client whose tokens the API accepts", api.client)
	}
	if s.modelKey != nil {
		out("OpenAIKeySecretArn", "the secret holding the OpenAI-compatible endpoint's key", s.modelKey)
	}
	return s, nil
}

// tag puts the cost allocation tags on every resource: the application, the stack, the stage and
// the operator's own (tags).
func (s *Sinew) tag() {
	tags := awscdk.Tags_Of(s.Stack)
	// The CDK would tag the dashboard, whose CloudFormation type takes no tags.
	props := &awscdk.TagProps{ExcludeResourceTypes: jsii.Strings("AWS::CloudWatch::Dashboard")}
	tags.Add(jsii.String("application"), jsii.String("sinew"), props)
	tags.Add(jsii.String("sinew:stack"), jsii.String(s.name), props)
	tags.Add(jsii.String("sinew:stage"), jsii.String(s.settings.Stage), props)
	for _, k := range slices.Sorted(maps.Keys(s.settings.Tags)) {
		tags.Add(jsii.String(k), jsii.String(s.settings.Tags[k]), props)
	}
}

// taskResponderPolicy is a customer-managed policy, attached to nothing here, that a client's role
// attaches to answer function calls with Step Functions directly (SendTaskSuccess, SendTaskFailure,
// SendTaskHeartbeat) on sinew's state machines and nothing else.
func (s *Sinew) taskResponderPolicy() {
	var arns []*string
	for _, m := range deploy.StateMachines() {
		arns = append(arns, s.StateMachines[m.Name].StateMachineArn())
	}
	p := awsiam.NewManagedPolicy(s.Stack, jsii.String("TaskResponderPolicy"), &awsiam.ManagedPolicyProps{
		Description: jsii.String("sinew: answer pending function calls (SendTask*) of sinew's state machines; attach to a client's role"),
		Statements: &[]awsiam.PolicyStatement{awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:       jsii.String("AnswerFunctionCalls"),
			Actions:   jsii.Strings("states:SendTaskSuccess", "states:SendTaskFailure", "states:SendTaskHeartbeat"),
			Resources: &arns,
		})},
	})
	awscdk.NewCfnOutput(s.Stack, jsii.String("TaskResponderPolicyArn"), &awscdk.CfnOutputProps{
		Value: p.ManagedPolicyArn(), Description: jsii.String("the managed policy a client's role attaches to call SendTask* on sinew's state machines"),
	})
}

// stackProps are p's stack properties with sinew's defaults: its description, and termination
// protection for a retained stack, which guards what it keeps from a stray delete from the first
// create on (the resources' own deletion protection waits for Settings.DeletionProtection).
func stackProps(p Props) awscdk.StackProps {
	sp := p.StackProps
	if sp.Description == nil {
		sp.Description = jsii.String("sinew: the tool layer of an LLM agent platform on Step Functions, Lambda, DynamoDB and API Gateway")
	}
	if sp.TerminationProtection == nil && !p.Settings.Destroy {
		sp.TerminationProtection = jsii.Bool(true)
	}
	return sp
}

// removal is the removal policy the operator chose for stateful resources. Retain is
// RetainExceptOnCreate: kept when the stack is deleted or replaces them, but deleted when their
// first create rolls back, so a failed first deploy leaves no deletion-protected table, keys, pool
// or queues behind, holding nothing, to be found and deleted by hand.
func (s *Sinew) removal() awscdk.RemovalPolicy {
	if s.settings.Destroy {
		return awscdk.RemovalPolicy_DESTROY
	}
	return awscdk.RemovalPolicy_RETAIN_ON_UPDATE_OR_DELETE
}

// physical is the deployed name of a function or state machine: <stack>-<name>. Fixed names let
// IAM statements name their resources without referring to them, which is what keeps the graph
// free of cycles (settle's policy names the state machines that invoke settle; system invokes
// itself for session.chat).
func (s *Sinew) physical(name string) string { return s.name + "-" + name }

func (s *Sinew) functionARN(name string) *string {
	return s.Stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("lambda"), Resource: jsii.String("function"),
		ResourceName: jsii.String(s.physical(name)), ArnFormat: awscdk.ArnFormat_COLON_RESOURCE_NAME})
}

func (s *Sinew) stateMachineARN(name string) *string {
	return s.Stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("states"), Resource: jsii.String("stateMachine"),
		ResourceName: jsii.String(s.physical(name)), ArnFormat: awscdk.ArnFormat_COLON_RESOURCE_NAME})
}

// executionsARN covers every execution of a state machine: executions are made at run time, so
// their names cannot be listed; AWS scopes execution actions only by this ARN form.
func (s *Sinew) executionsARN(name string) *string {
	return s.Stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("states"), Resource: jsii.String("execution"),
		ResourceName: jsii.String(s.physical(name) + ":*"), ArnFormat: awscdk.ArnFormat_COLON_RESOURCE_NAME})
}

// logicalID turns a description name (tool_call, apicall) into a construct id (ToolCall, Apicall).
func logicalID(name string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(name, func(r rune) bool { return r == '_' || r == '-' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// data makes the table and its key from the store's table spec.
func (s *Sinew) data() {
	s.TableKey = awskms.NewKey(s.Stack, jsii.String("TableKey"), &awskms.KeyProps{
		Description:       jsii.String("sinew: encrypts the DynamoDB table at rest"),
		EnableKeyRotation: jsii.Bool(true),
		RemovalPolicy:     s.removal(),
	})
	spec := store.TableSpec("sinew")
	types := map[string]awsdynamodb.AttributeType{}
	for _, d := range spec.AttributeDefinitions {
		t := awsdynamodb.AttributeType_STRING
		switch d.AttributeType {
		case "N":
			t = awsdynamodb.AttributeType_NUMBER
		case "B":
			t = awsdynamodb.AttributeType_BINARY
		}
		types[*d.AttributeName] = t
	}
	key := func(ks []dynamoKey) (pk, sk *awsdynamodb.Attribute) {
		for _, k := range ks {
			a := &awsdynamodb.Attribute{Name: k.name, Type: types[*k.name]}
			if k.hash {
				pk = a
			} else {
				sk = a
			}
		}
		return pk, sk
	}
	pk, sk := key(keysOf(spec.KeySchema))
	ttl := store.TTLSpec("sinew").TimeToLiveSpecification.AttributeName
	s.Table = awsdynamodb.NewTable(s.Stack, jsii.String("Table"), &awsdynamodb.TableProps{
		PartitionKey:        pk,
		SortKey:             sk,
		BillingMode:         awsdynamodb.BillingMode_PAY_PER_REQUEST,
		TimeToLiveAttribute: ttl,
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		Encryption:           awsdynamodb.TableEncryption_CUSTOMER_MANAGED,
		EncryptionKey:        s.TableKey,
		RemovalPolicy:        s.removal(),
		DeletionProtection:   jsii.Bool(s.settings.DeletionProtection),
		MaxReadRequestUnits:  maxUnits(s.settings.TableMaxReadUnits),
		MaxWriteRequestUnits: maxUnits(s.settings.TableMaxWriteUnits),
	})
	for _, g := range spec.GlobalSecondaryIndexes {
		gpk, gsk := key(keysOf(g.KeySchema))
		var include *[]*string
		if len(g.Projection.NonKeyAttributes) > 0 {
			include = jsii.Strings(g.Projection.NonKeyAttributes...)
		}
		// The index has maximums of its own: a loop of Queries on it is not capped by the table's.
		s.Table.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
			IndexName:            g.IndexName,
			PartitionKey:         gpk,
			SortKey:              gsk,
			ProjectionType:       awsdynamodb.ProjectionType(g.Projection.ProjectionType),
			NonKeyAttributes:     include,
			MaxReadRequestUnits:  maxUnits(s.settings.TableMaxReadUnits),
			MaxWriteRequestUnits: maxUnits(s.settings.TableMaxWriteUnits),
		})
	}
}

// maxUnits is an on-demand maximum, nil (none) for 0.
func maxUnits(n int) *float64 {
	if n == 0 {
		return nil
	}
	return jsii.Number(n)
}

// modelSecret makes (or adopts) the secret holding the OpenAI-compatible endpoint's key, when the
// deployment uses such an endpoint.
func (s *Sinew) modelSecret() {
	if !s.settings.UsesOpenAI() {
		return
	}
	if arn := s.settings.OpenAIKeySecretARN; arn != "" {
		s.modelKey = jsii.String(arn)
		// A partial ARN (without Secrets Manager's 6-character suffix) matches the secret only with
		// the suffix's wildcard, as AWS documents for partial ARNs.
		res := arn
		if !fullSecretARN.MatchString(arn) {
			res += "-??????"
		}
		s.modelRes = []*string{jsii.String(res)}
		return
	}
	sec := awssecretsmanager.NewSecret(s.Stack, jsii.String("OpenAIKey"), &awssecretsmanager.SecretProps{
		Description:   jsii.String("sinew: the API key of the OpenAI-compatible endpoint (SINEW_OPENAI_BASE_URL); replace the generated value with put-secret-value"),
		RemovalPolicy: s.removal(),
	})
	s.modelKey, s.modelRes = sec.SecretArn(), []*string{sec.SecretArn()}
	nag(sec, "AwsSolutions-SMG4", "The key is issued by a third-party model endpoint; rotating it is the operator's act at that provider, so no rotation Lambda can do it.")
}

var fullSecretARN = regexp.MustCompile(`-[A-Za-z0-9]{6}$`)

// logs makes a log group with the operator's retention and removal policy. Its name ends with the
// stack's id (a UUID CloudFormation gives each stack it creates): a group kept by the Retain policy
// after `cdk destroy` never blocks the next deploy with "already exists", and the prefix still says
// whose logs they are.
func (s *Sinew) logs(id, prefix string) awslogs.LogGroup {
	stackUUID := awscdk.Fn_Select(jsii.Number(2), awscdk.Fn_Split(jsii.String("/"), awscdk.Aws_STACK_ID(), nil))
	return awslogs.NewLogGroup(s.Stack, jsii.String(id), &awslogs.LogGroupProps{
		LogGroupName:  awscdk.Fn_Join(jsii.String(""), jsii.Strings(prefix, "-", *stackUUID)),
		Retention:     retention(s.settings.LogRetentionDays),
		RemovalPolicy: s.removal(),
	})
}

// retention maps a number of days (one of retentionDays, checked by ParseSettings) to the CDK's
// value for it.
func retention(days int) awslogs.RetentionDays {
	values := []awslogs.RetentionDays{awslogs.RetentionDays_ONE_DAY, awslogs.RetentionDays_THREE_DAYS,
		awslogs.RetentionDays_FIVE_DAYS, awslogs.RetentionDays_ONE_WEEK, awslogs.RetentionDays_TWO_WEEKS,
		awslogs.RetentionDays_ONE_MONTH, awslogs.RetentionDays_TWO_MONTHS, awslogs.RetentionDays_THREE_MONTHS,
		awslogs.RetentionDays_FOUR_MONTHS, awslogs.RetentionDays_FIVE_MONTHS, awslogs.RetentionDays_SIX_MONTHS,
		awslogs.RetentionDays_ONE_YEAR, awslogs.RetentionDays_THIRTEEN_MONTHS, awslogs.RetentionDays_EIGHTEEN_MONTHS,
		awslogs.RetentionDays_TWO_YEARS, awslogs.RetentionDays_THREE_YEARS, awslogs.RetentionDays_FIVE_YEARS,
		awslogs.RetentionDays_SIX_YEARS, awslogs.RetentionDays_SEVEN_YEARS, awslogs.RetentionDays_EIGHT_YEARS,
		awslogs.RetentionDays_NINE_YEARS, awslogs.RetentionDays_TEN_YEARS}
	if i := slices.Index(retentionDays, days); i >= 0 {
		return values[i]
	}
	return awslogs.RetentionDays_ONE_MONTH
}

type dynamoKey struct {
	name *string
	hash bool
}

func keysOf(ks []ddbtypes.KeySchemaElement) []dynamoKey {
	var out []dynamoKey
	for _, k := range ks {
		out = append(out, dynamoKey{name: k.AttributeName, hash: k.KeyType == ddbtypes.KeyTypeHash})
	}
	return out
}
