//go:build !lambda.norpc

package handler

import (
	"context"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
)

// AWSOptions are added to the AWS SDK's default configuration of every function built in this
// process. Local mode, which runs every function in one process under concurrent load, gives them
// one HTTP client that keeps enough idle connections to its loopback endpoints, and its request
// recorders. It is not part of Env because the bootstraps' build cannot name its type without
// linking the default chain.
var AWSOptions []func(*awsconfig.LoadOptions) error

// loadAWS is the SDK's default configuration: builds other than the Lambda bootstraps (local
// mode, tests, tools) may use profiles, SSO and the rest of the default chain, which reads the
// process's environment.
func loadAWS(ctx context.Context, _ func(string) string) (awsv2.Config, error) {
	return awsconfig.LoadDefaultConfig(ctx, AWSOptions...)
}
