// Package reliability holds sinew's load and fault tests: they run local mode
// (./infra/local) as a real subprocess against DynamoDB Local, drive it with aws-sdk-go-v2 and its
// HTTP API, and check that nothing is lost and each side effect happens once.
//
//	go test ./internal/reliability/                          the short versions (make test)
//	SINEW_SOAK=1 go test -run TestLoad -v ./internal/reliability/   full size: 1,000 executions, 200 function calls
//
// The package has no code of its own beyond these tests.
package reliability
