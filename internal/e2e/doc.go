// Package e2e holds sinew's end-to-end tests, the ones that span packages.
//
// The load and fault tests run local mode (./infra/local, built by internal/testenv/localmode) as a
// real subprocess against DynamoDB Local, drive it with aws-sdk-go-v2 and its HTTP API, and check
// that nothing is lost and each side effect happens once; the bad-input tests send every Lambda's
// event spoiled one way at a time and expect a named 4xx error and no write.
//
//	go test ./internal/e2e/                                  the short versions (make test)
//	SINEW_SOAK=1 go test -run TestLoad -v ./internal/e2e/    the full size: 1,000 executions, 200 function calls
//	SINEW_SOAK=1 go test -run TestChatKill9DuringHandOff -v ./internal/e2e/    150 chats and 150 tool calls at the crash
//
// The package has no code of its own beyond these tests.
package e2e
