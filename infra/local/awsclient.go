package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/smithy-go/middleware"

	"sinew/internal/awscount"
	"sinew/internal/handler"
	"sinew/internal/localaws/quota"
	"sinew/internal/store"
)

// maxIdlePerHost is how many idle connections the in-process functions keep to each loopback
// endpoint (DynamoDB Local, Step Functions, Lambda, KMS). The SDK's default keeps 10, so under
// more concurrent calls than that every request past the tenth opened and closed a connection of
// its own.
const maxIdlePerHost = 256

// writeCounts writes the AWS requests the in-process functions sent so far, by
// "Service.Operation" (every attempt, retries included), to dir's aws-requests.json: the request
// mix a load puts on DynamoDB Local.
func writeCounts(c *awscount.Counter, dir string) error {
	data, err := json.MarshalIndent(c.Ops(), "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "aws-requests.json"), append(data, '\n'), 0o600)
}

// configureAWSClients gives every in-process function's AWS SDK configuration one pooled HTTP
// client, an unrationed retryer, the request counter, gate's bound on the requests in flight to
// DynamoDB Local and the timing of each attempt on the wire (inside the gate: DynamoDB Local's own
// time), rec's recording of their DynamoDB requests and iam's of every request as IAM sees it, each
// when not nil. Their requests to
// local mode's own endpoints are served in-process once the endpoints are given to self.serve.
func configureAWSClients(counts *awscount.Counter, gate *ddbGate, rec *ddbRecorder, iam *iamRecorder, q *quota.Limits) (*wireTimes, *selfCalls) {
	hc := awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		tr.MaxIdleConns = 4 * maxIdlePerHost
		tr.MaxIdleConnsPerHost = maxIdlePerHost
		tr.IdleConnTimeout = 90 * time.Second
	})
	// Retries are not rationed: the SDK's retry quota protects an AWS service from a retry storm,
	// but here it turned DynamoDB Local's transient lock timeouts on a starved machine into failed
	// calls once a few dozen concurrent requests had timed out.
	retryer := func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) { o.RateLimiter = ratelimit.None })
	}
	wt := &wireTimes{}
	self := &selfCalls{}
	handler.AWSOptions = append(handler.AWSOptions, awsconfig.WithHTTPClient(hc), awsconfig.WithRetryer(retryer),
		awsconfig.WithAPIOptions([]func(*middleware.Stack) error{counts.Register, gate.Register, wt.Register, rec.Register, iam.Register, self.Register,
			q.DynamoDBMiddleware(store.AttrPK)}))
	return wt, self
}
