// Package handler holds the handler of each of sinew's nine Lambdas, a file each, and what they
// share: env.go reads the configuration and the AWS SDK's configuration (endpoints found through
// AWS_ENDPOINT_URL_* as the SDKs do, so local mode needs no switch of its own; the Lambda
// bootstraps, built with lambda.norpc, read it from the environment alone, awsenv.go) and builds
// the store; executor.go is the run of one tool call that the integration and apicall executors
// share (once per call id, setup opened only inside the run, every value it learns redacted, a
// large output stored by reference).
//
// Each Lambda has a constructor from its dependencies (NewPrepare, NewAPICall, ...) and a builder
// of those dependencies from the environment (SettleFromEnv, functionenv.Deps, ...): a main under
// functions/ only joins the two behind the Lambda error boundary, and local mode (infra/local)
// builds the same handlers in process the same way. The builders that need heavy packages live
// in packages of their own, because a binary links every package its imports reach and runs their
// initialisation at each cold start: apienv (the routes and the integration catalogue),
// integrationenv (every provider), apicallenv (the apicall executor), modelenv (the model clients
// and tool schemas), chatenv (the chat service), prepareenv (the Lambda client prepare hands
// calls on with), functionenv (the EventBridge client the function executor announces pending
// calls with) and systemenv (the system executor, its chat service built at first use); sealer
// builds the KMS sealer of setup secrets for the four functions that hold the key (api, system,
// integration, apicall).
//
//   - api: every HTTP route but chat (package app's router);
//   - chat: POST /sessions/{session_id}/chat (package chat);
//   - prepare, function, settle: tool_call's steps for a request naming the tool (which prepare
//     hands on to its executor when Dispatch invoked it with its token), a function call and a
//     failure, and settle also the target of the status-change events (package workflow);
//   - integration, apicall, system: the executors of tool calls;
//   - model: agent_loop's model step (package agentloop; its handler and builder are in modelenv).
package handler
