// Package sfnopt holds Step Functions client options sinew's clients share.
package sfnopt

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// NoHostPrefix is an sfn client option that stops StartSyncExecution from prefixing the endpoint
// host with `sync-`: a loopback endpoint (local mode) has no such host. Use it only there.
func NoHostPrefix(o *sfn.Options) {
	o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
		return st.Initialize.Add(middleware.InitializeMiddlewareFunc("sinewNoHostPrefix",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				return next.HandleInitialize(smithyhttp.DisableEndpointHostPrefix(ctx, true), in)
			}), middleware.Before)
	})
}

// ForEndpoint is the options of a client of cfg: NoHostPrefix when its Step Functions endpoint is
// configured (AWS_ENDPOINT_URL_SFN, AWS_ENDPOINT_URL, a base endpoint), as local mode's is, whose
// one host serves StartSyncExecution too; none for AWS's own endpoints, where sync- is needed.
func ForEndpoint(cfg aws.Config, getenv func(string) string) []func(*sfn.Options) {
	if strings.EqualFold(getenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"), "true") {
		return nil
	}
	if cfg.BaseEndpoint != nil || getenv("AWS_ENDPOINT_URL_SFN") != "" || getenv("AWS_ENDPOINT_URL") != "" {
		return []func(*sfn.Options){NoHostPrefix}
	}
	return nil
}
