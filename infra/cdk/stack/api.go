package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2authorizers"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscognito"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/jsii-runtime-go"

	"sinew/internal/deploy"
	"sinew/internal/httpapi"
)

type builtAPI struct {
	api          awsapigatewayv2.HttpApi
	url          *string
	pool, client *string // the Cognito user pool and client ids; nil with an external issuer
	accessLogs   awslogs.ILogGroup
}

// accessLogs implements awsapigatewayv2.IAccessLogSettings for the stage.
type accessLogs struct {
	dest   awsapigatewayv2.IAccessLogDestination
	format awsapigateway.AccessLogFormat
}

func (a *accessLogs) Destination() awsapigatewayv2.IAccessLogDestination { return a.dest }
func (a *accessLogs) Format() awsapigateway.AccessLogFormat              { return a.format }

// httpAPI makes the HTTP API: the JWT authorizer (the stack's Cognito user pool, or the operator's
// OIDC issuer), the $default route to the api function behind it, the routes the router marks public
// without it, each route of another function to that function, CORS, access logs and throttling.
func (s *Sinew) httpAPI(routes []httpapi.RouteInfo) builtAPI {
	var out builtAPI
	var auth awsapigatewayv2.IHttpRouteAuthorizer
	if s.settings.OIDCIssuer != "" {
		auth = awsapigatewayv2authorizers.NewHttpJwtAuthorizer(jsii.String("Jwt"), jsii.String(s.settings.OIDCIssuer),
			&awsapigatewayv2authorizers.HttpJwtAuthorizerProps{JwtAudience: jsii.Strings(s.settings.OIDCAudience...)})
	} else {
		auth = s.cognitoAuthorizer(&out)
	}

	integrations := map[string]awsapigatewayv2.HttpRouteIntegration{}
	integ := func(fn string) awsapigatewayv2.HttpRouteIntegration {
		if i, ok := integrations[fn]; ok {
			return i
		}
		i := awsapigatewayv2integrations.NewHttpLambdaIntegration(jsii.String(logicalID(fn)+"Integration"), s.Functions[fn],
			&awsapigatewayv2integrations.HttpLambdaIntegrationProps{PayloadFormatVersion: awsapigatewayv2.PayloadFormatVersion_VERSION_2_0()})
		integrations[fn] = i
		return i
	}
	httpFn := "api"
	for _, f := range deploy.Functions() {
		for _, t := range f.Triggers {
			if t == deploy.TriggerHTTP {
				httpFn = f.Name
			}
		}
	}

	var cors *awsapigatewayv2.CorsPreflightOptions
	if len(s.settings.CORSOrigins) > 0 {
		cors = &awsapigatewayv2.CorsPreflightOptions{
			AllowOrigins: jsii.Strings(s.settings.CORSOrigins...),
			AllowMethods: &[]awsapigatewayv2.CorsHttpMethod{awsapigatewayv2.CorsHttpMethod_GET, awsapigatewayv2.CorsHttpMethod_POST,
				awsapigatewayv2.CorsHttpMethod_PUT, awsapigatewayv2.CorsHttpMethod_PATCH, awsapigatewayv2.CorsHttpMethod_DELETE},
			AllowHeaders: jsii.Strings("authorization", "content-type", "idempotency-key", "accept", "mcp-protocol-version"),
			MaxAge:       awscdk.Duration_Hours(jsii.Number(1)),
		}
	}
	api := awsapigatewayv2.NewHttpApi(s.Stack, jsii.String("HttpApi"), &awsapigatewayv2.HttpApiProps{
		ApiName:            jsii.String(s.physical("api")),
		Description:        jsii.String("sinew's HTTP API"),
		CreateDefaultStage: jsii.Bool(false),
		// Every request no explicit route takes goes to the api function behind the JWT
		// authorizer; the router answers unknown paths with its own 404/405.
		DefaultIntegration: integ(httpFn),
		DefaultAuthorizer:  auth,
		CorsPreflight:      cors,
	})
	chatRoutes := map[string]awsapigatewayv2.HttpRoute{}
	for _, r := range routes {
		if !r.Public && r.Function == httpFn {
			continue // served by $default
		}
		opts := &awsapigatewayv2.AddRoutesOptions{
			Path:        jsii.String(r.Path),
			Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod(r.Method)},
			Integration: integ(r.Function),
		}
		if r.Public {
			opts.Authorizer = awsapigatewayv2.NewHttpNoneAuthorizer()
		}
		for _, route := range *api.AddRoutes(opts) {
			if r.Function == ChatRoute.Function {
				chatRoutes[r.Method+" "+r.Path] = route
			}
			if r.Public {
				nag(route, "AwsSolutions-APIG4", "The router marks "+r.Method+" "+r.Path+" public (only the OpenAPI document and the liveness check need no token); it returns no caller data.")
			}
		}
	}

	mcpMetadata(api, integ(httpFn))
	mcpRoutes(api, integ(httpFn))

	if cors != nil {
		s.preflightRoute(api, integ(httpFn))
	}
	lg := s.logs("ApiAccessLogs", "/aws/vendedlogs/apigateway/"+s.physical("api"))
	stage := awsapigatewayv2.NewHttpStage(s.Stack, jsii.String("DefaultStage"), &awsapigatewayv2.HttpStageProps{
		HttpApi:    api,
		StageName:  jsii.String("$default"),
		AutoDeploy: jsii.Bool(true),
		Throttle:   &awsapigatewayv2.ThrottleSettings{RateLimit: jsii.Number(s.settings.ThrottleRate), BurstLimit: jsii.Number(float64(s.settings.ThrottleBurst))},
		AccessLogSettings: &accessLogs{
			dest:   awsapigatewayv2.NewLogGroupLogDestination(lg),
			format: awsapigateway.AccessLogFormat_Custom(jsii.String(accessLogFormat)),
		},
	})
	s.chatThrottle(stage, chatRoutes)
	out.api, out.url, out.accessLogs = api, stage.Url(), lg
	return out
}

// accessLogFormat is one JSON object a request. latencyMs is a number, not a string, for the
// metric filter of the $default route's latency (monitoring.go). Every request pays for each byte
// of it: the time is the log event's own timestamp, and the api function's time is its Duration
// metric, so neither is written again here.
const accessLogFormat = `{"requestId":"$context.requestId","ip":"$context.identity.sourceIp",` +
	`"method":"$context.httpMethod","routeKey":"$context.routeKey",` +
	`"path":"$context.path","status":"$context.status","responseLength":"$context.responseLength",` +
	`"latencyMs":$context.responseLatency,` +
	`"integrationError":"$context.integrationErrorMessage","authorizerError":"$context.authorizer.error",` +
	`"developer":"$context.authorizer.claims.sub"}`

// cognitoAuthorizer makes the stack's Cognito user pool of developers, its app client, and the
// JWT authorizer over them; out learns the pool's and the client's ids.
func (s *Sinew) cognitoAuthorizer(out *builtAPI) awsapigatewayv2.IHttpRouteAuthorizer {
	pool := awscognito.NewUserPool(s.Stack, jsii.String("Developers"), &awscognito.UserPoolProps{
		UserPoolName: jsii.String(s.physical("developers")),
		// Developers are invited by the operator (admin-create-user); nobody signs up.
		SelfSignUpEnabled: jsii.Bool(false),
		SignInAliases:     &awscognito.SignInAliases{Email: jsii.Bool(true)},
		PasswordPolicy: &awscognito.PasswordPolicy{MinLength: jsii.Number(12), RequireDigits: jsii.Bool(true),
			RequireLowercase: jsii.Bool(true), RequireUppercase: jsii.Bool(true), RequireSymbols: jsii.Bool(true)},
		Mfa:                awscognito.Mfa_OPTIONAL,
		MfaSecondFactor:    &awscognito.MfaSecondFactor{Otp: jsii.Bool(true), Sms: jsii.Bool(false)},
		AccountRecovery:    awscognito.AccountRecovery_EMAIL_ONLY,
		DeletionProtection: jsii.Bool(s.settings.DeletionProtection),
		RemovalPolicy:      s.removal(),
		// Named, not left to Cognito's default (Essentials): password sign-in and TOTP MFA are
		// what the guide uses, and Lite bills less past the free tier.
		FeaturePlan: awscognito.FeaturePlan_LITE,
	})
	client := pool.AddClient(jsii.String("Client"), &awscognito.UserPoolClientOptions{
		UserPoolClientName: jsii.String(s.physical("client")),
		GenerateSecret:     jsii.Bool(false),
		// SRP for apps; password auth so a developer can get a token with the AWS CLI
		// (cognito-idp initiate-auth), as the deploy guide shows.
		AuthFlows:                  &awscognito.AuthFlow{UserSrp: jsii.Bool(true), UserPassword: jsii.Bool(true)},
		PreventUserExistenceErrors: jsii.Bool(true),
		// Tokens come from the auth flows above; no hosted-UI OAuth flow, so no callback URL
		// a token could be sent to.
		DisableOAuth:        jsii.Bool(true),
		AccessTokenValidity: awscdk.Duration_Hours(jsii.Number(1)),
		IdTokenValidity:     awscdk.Duration_Hours(jsii.Number(1)),
	})
	auth := awsapigatewayv2authorizers.NewHttpUserPoolAuthorizer(jsii.String("Cognito"), pool,
		&awsapigatewayv2authorizers.HttpUserPoolAuthorizerProps{UserPoolClients: &[]awscognito.IUserPoolClient{client}})
	out.pool, out.client = pool.UserPoolId(), client.UserPoolClientId()
	nag(pool, "AwsSolutions-COG2", "MFA is optional (TOTP) rather than required: sinew's callers are often programs holding a developer's token; an operator who wants it required sets the pool's MFA to ON, or brings an OIDC issuer (oidcIssuer).")
	nag(pool, "AwsSolutions-COG8", "The Plus feature plan is a per-user charge the operator chooses; the pool has no self sign-up and requires strong passwords. Switch the pool to Plus when its threat protection is wanted.")
	nag(pool, "AwsSolutions-COG3", "Threat protection (advanced security) needs Cognito's Plus plan, a per-user charge; the pool has no self sign-up, so accounts exist only when the operator makes them. Enable it in the pool when the plan is wanted.")
	return auth
}

// mcpMetadata routes the OAuth protected-resource metadata MCP clients fetch before they hold a
// token (internal/mcpserver serves it at these paths and below them) past the authorizer.
func mcpMetadata(api awsapigatewayv2.HttpApi, integ awsapigatewayv2.HttpRouteIntegration) {
	for _, path := range []string{mcpMetadataPath, mcpMetadataPath + "/{proxy+}"} {
		for _, route := range *api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{Path: jsii.String(path),
			Methods: &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod_GET}, Integration: integ,
			Authorizer: awsapigatewayv2.NewHttpNoneAuthorizer()}) {
			nag(route, "AwsSolutions-APIG4", "GET "+path+" is OAuth protected-resource metadata (RFC 9728): public by definition, it names the token issuer and nothing of any caller.")
		}
	}
}

// mcpRoutes give MCP's endpoints routes of their own to the api function, behind the authorizer
// like $default: a tools/call waits for its execution up to SINEW_MCP_WAIT_S, and an import waits
// for a remote MCP server's listing, by design, so apart from $default their answers do not make
// the latency of the quick routes.
func mcpRoutes(api awsapigatewayv2.HttpApi, integ awsapigatewayv2.HttpRouteIntegration) {
	for _, path := range mcpPaths {
		api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{Path: jsii.String(path),
			Methods: &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod_POST}, Integration: integ})
	}
}

// mcpPaths are the api function's MCP endpoints (internal/mcpserver; not imported, as above) and
// its imports of a remote MCP server's tools (internal/mcptools).
var mcpPaths = []string{"/agents/{agent_id}/mcp", "/sessions/{session_id}/mcp", "/agents/{agent_id}/tools/mcp", "/tasks/{task_id}/tools/mcp"}

// mcpMetadataPath is mcpserver.MetadataPath (not imported: it would bring the MCP SDK into this module).
const mcpMetadataPath = "/.well-known/oauth-protected-resource"

// preflightRoute answers browsers' preflight requests without the authorizer: $default catches
// every method, OPTIONS too, and a preflight carries no token, so behind the JWT authorizer it
// would get 401. API Gateway answers a preflight from the CORS configuration on this route.
func (s *Sinew) preflightRoute(api awsapigatewayv2.HttpApi, integ awsapigatewayv2.HttpRouteIntegration) {
	for _, r := range *api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
		Path: jsii.String("/{proxy+}"), Methods: &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod_OPTIONS},
		Integration: integ, Authorizer: awsapigatewayv2.NewHttpNoneAuthorizer(),
	}) {
		nag(r, "AwsSolutions-APIG4", "CORS preflight (OPTIONS) requests carry no token by the browsers' rules; API Gateway answers them from the CORS configuration.")
	}
}

// chatThrottle gives the chat route, which spends model tokens, a throttle of its own below the
// API's.
func (s *Sinew) chatThrottle(stage awsapigatewayv2.HttpStage, routes map[string]awsapigatewayv2.HttpRoute) {
	settings := map[string]any{}
	for key, r := range routes {
		settings[key] = map[string]any{"ThrottlingRateLimit": s.settings.ChatThrottleRate, "ThrottlingBurstLimit": s.settings.ChatThrottleBurst}
		stage.Node().AddDependency(r) // a stage's route settings name routes that must exist
	}
	stage.Node().DefaultChild().(awsapigatewayv2.CfnStage).AddPropertyOverride(jsii.String("RouteSettings"), settings)
}
