package awsrouter_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"sinew/internal/localaws/awsrouter"
)

// signed is a request signed by the SDK's SigV4 signer for service.
func signed(t *testing.T, service, target, path string) *http.Request {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:4599"+path, strings.NewReader("{}"))
	if target != "" {
		r.Header.Set("X-Amz-Target", target)
	}
	const emptySHA = "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
	creds := aws.Credentials{AccessKeyID: "local", SecretAccessKey: "local"}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, r, emptySHA, service, "us-east-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestService(t *testing.T) {
	tests := []struct {
		name string
		req  func(t *testing.T) *http.Request
		want string
	}{
		{"states signed", func(t *testing.T) *http.Request {
			return signed(t, "states", "AWSStepFunctions.ListStateMachines", "/")
		}, awsrouter.StepFunctions},
		{"lambda signed", func(t *testing.T) *http.Request {
			return signed(t, "lambda", "", "/2015-03-31/functions/f/invocations")
		}, awsrouter.Lambda},
		{"kms signed", func(t *testing.T) *http.Request { return signed(t, "kms", "TrentService.Encrypt", "/") }, awsrouter.KMS},
		{"events signed", func(t *testing.T) *http.Request { return signed(t, "events", "AWSEvents.PutEvents", "/") }, awsrouter.EventBridge},
		{"dynamodb signed", func(t *testing.T) *http.Request { return signed(t, "dynamodb", "DynamoDB_20120810.ListTables", "/") }, awsrouter.DynamoDB},
		// The signature wins over a target that says otherwise.
		{"signature over target", func(t *testing.T) *http.Request { return signed(t, "kms", "AWSEvents.PutEvents", "/") }, awsrouter.KMS},
		{"presigned", func(t *testing.T) *http.Request {
			q := url.Values{"X-Amz-Credential": {"local/20260101/us-east-1/states/aws4_request"}}
			return httptest.NewRequest(http.MethodGet, "/?"+q.Encode(), nil)
		}, awsrouter.StepFunctions},
		{"unsigned target", func(t *testing.T) *http.Request {
			r := httptest.NewRequest(http.MethodPost, "/", nil)
			r.Header.Set("X-Amz-Target", "TrentService.ListAliases")
			return r
		}, awsrouter.KMS},
		{"unsigned lambda path", func(t *testing.T) *http.Request {
			return httptest.NewRequest(http.MethodPost, "/2015-03-31/functions/f/invocations", nil)
		}, awsrouter.Lambda},
		{"nothing", func(t *testing.T) *http.Request { return httptest.NewRequest(http.MethodGet, "/", nil) }, ""},
		{"malformed scope", func(t *testing.T) *http.Request {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=local/states, SignedHeaders=host")
			return r
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := awsrouter.Service(tc.req(t)); got != tc.want {
				t.Errorf("service %q, want %q", got, tc.want)
			}
		})
	}
}

// A request goes to its service's handler; one for a service not served gets a 400 naming both.
func TestRouter(t *testing.T) {
	handler := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(name)) })
	}
	rt := awsrouter.New(map[string]http.Handler{awsrouter.KMS: handler("kms"), awsrouter.StepFunctions: handler("sfn")})
	for _, tc := range []struct{ service, target, want string }{
		{"kms", "TrentService.Encrypt", "kms"},
		{"states", "AWSStepFunctions.StartExecution", "sfn"},
	} {
		rec := httptest.NewRecorder()
		rt.ServeHTTP(rec, signed(t, tc.service, tc.target, "/"))
		if rec.Code != http.StatusOK || rec.Body.String() != tc.want {
			t.Errorf("%s: %d %q, want %q", tc.service, rec.Code, rec.Body, tc.want)
		}
	}
	rec := httptest.NewRecorder()
	rt.ServeHTTP(rec, signed(t, "sqs", "AmazonSQS.SendMessage", "/"))
	var body struct{ Type, Message string }
	_ = json.Unmarshal(rec.Body.Bytes(), &struct {
		Type    *string `json:"__type"`
		Message *string `json:"message"`
	}{&body.Type, &body.Message})
	if rec.Code != http.StatusBadRequest || !strings.Contains(body.Message, `"sqs"`) || !strings.Contains(body.Message, "kms, states") {
		t.Errorf("unserved service: %d %s", rec.Code, rec.Body)
	}
}
