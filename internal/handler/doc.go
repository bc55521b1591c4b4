// Package handler is what every Lambda is built from, and package handler/<name> is each of the
// nine Lambdas: its handler and its wiring together.
//
// Each Lambda package exports New, a Constructor: from an Env (the function's environment, its
// process's logger and redactor) it reads the configuration and the AWS SDK's configuration
// (Env.Load; endpoints found through AWS_ENDPOINT_URL_* as the SDKs do, so local mode needs no
// switch of its own; the bootstraps, built with lambda.norpc, read it from the environment alone,
// awsenv.go), builds the function's dependencies and answers its handler behind the Lambda error
// boundary (package lambdaboundary). A functions/<name>/main.go is Start(<name>.New); local mode
// (infra/local) builds the same constructors in process from the table of package all. A binary
// links every package its imports reach and runs their initialisation at each cold start, so each
// function imports only its own package: api (the routes and the integration catalogue), chat (the
// chat service), model (the model clients and tool schemas), prepare (the Lambda client it hands
// calls on with), function (the EventBridge client it announces pending calls with), settle,
// integration (every provider), apicall and system (the executors of package executor); sealer
// builds the KMS sealer of setup secrets for the four functions that hold the key (api, system,
// integration, apicall).
//
//   - api: every HTTP route but chat (package app's router);
//   - chat: POST /sessions/{session_id}/chat (package chat);
//   - prepare, function, settle: tool_call's steps for a request naming the tool (which prepare
//     hands on to its executor when Dispatch invoked it with its token), a function call and a
//     failure, and settle also the target of the status-change events (package workflow);
//   - integration, apicall, system: the executors of tool calls (package executor);
//   - model: agent_loop's model step (package agentloop).
package handler
