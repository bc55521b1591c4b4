//go:build lambda.norpc

package handler

import (
	"context"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
)

// loadAWS is the configuration from the Lambda environment (AWSFromEnv): the bootstraps, built
// with lambda.norpc, neither link nor run the default chain's shared-config, SSO, STS and IMDS
// code, which cost every cold start milliseconds.
func loadAWS(_ context.Context, getenv func(string) string) (awsv2.Config, error) {
	return AWSFromEnv(getenv)
}
