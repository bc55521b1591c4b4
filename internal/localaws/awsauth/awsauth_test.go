package awsauth

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/smithy-go"

	"sinew/internal/localaws/awsrouter"
)

const testRegion = "us-east-1"

var testCreds = Credentials{AccessKeyID: "AKIAIOSFODNN7EXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// recorder stands in for local mode's services: it answers each with an empty answer of a valid
// shape and keeps the bodies it was passed.
type recorder struct {
	mu     sync.Mutex
	bodies []string
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	rec.mu.Lock()
	rec.bodies = append(rec.bodies, string(body))
	rec.mu.Unlock()
	if awsrouter.Service(r) == awsrouter.Lambda {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_, _ = w.Write([]byte(`{}`))
}

func (rec *recorder) seen() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]string(nil), rec.bodies...)
}

// serve runs a Verifier with o (quiet, test credentials) around a recorder on loopback.
func serve(t *testing.T, o Options) (*recorder, *httptest.Server) {
	t.Helper()
	if o.Logger == nil {
		o.Logger = quiet()
	}
	rec := &recorder{}
	srv := httptest.NewServer(New(testCreds, o).Wrap(rec))
	t.Cleanup(srv.Close)
	return rec, srv
}

// tamperingClient sends the SDK's requests through mutate after they are signed.
type tamperingClient struct {
	client *http.Client
	mutate func(*http.Request)
}

func (c tamperingClient) Do(r *http.Request) (*http.Response, error) {
	if c.mutate != nil {
		c.mutate(r)
	}
	return c.client.Do(r)
}

// sdkConfig is a config for the SDK clients signing with creds (and session token, if any).
func sdkConfig(srv *httptest.Server, creds aws.CredentialsProvider, region string, mutate func(*http.Request)) aws.Config {
	return aws.Config{
		Region:           region,
		Credentials:      creds,
		BaseEndpoint:     aws.String(srv.URL),
		HTTPClient:       tamperingClient{client: srv.Client(), mutate: mutate},
		RetryMaxAttempts: 1,
	}
}

func static(c Credentials, token string) aws.CredentialsProvider {
	return credentials.NewStaticCredentialsProvider(c.AccessKeyID, c.SecretAccessKey, token)
}

// calls are one operation per service local mode serves, each with a marker its body carries.
var calls = []struct {
	service string
	marker  string
	call    func(context.Context, aws.Config) error
}{
	{awsrouter.StepFunctions, "sfn-marker", func(ctx context.Context, cfg aws.Config) error {
		_, err := sfn.NewFromConfig(cfg).StartExecution(ctx, &sfn.StartExecutionInput{
			StateMachineArn: aws.String("arn:aws:states:us-east-1:000000000000:stateMachine:m"),
			Input:           aws.String(`{"sfn-marker":true}`),
		})
		return err
	}},
	{awsrouter.Lambda, "lambda-marker", func(ctx context.Context, cfg aws.Config) error {
		// An ARN puts ':' in the path, which SigV4 encodes twice.
		_, err := lambda.NewFromConfig(cfg).Invoke(ctx, &lambda.InvokeInput{
			FunctionName: aws.String("arn:aws:lambda:us-east-1:000000000000:function:f"),
			Payload:      []byte(`{"lambda-marker":"a b+c/d"}`),
		})
		return err
	}},
	{awsrouter.KMS, "kms-marker", func(ctx context.Context, cfg aws.Config) error {
		_, err := kms.NewFromConfig(cfg).Encrypt(ctx, &kms.EncryptInput{KeyId: aws.String("alias/kms-marker"), Plaintext: []byte("x")})
		return err
	}},
	{awsrouter.EventBridge, "events-marker", func(ctx context.Context, cfg aws.Config) error {
		_, err := eventbridge.NewFromConfig(cfg).PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{{
			Source: aws.String("sinew.test"), DetailType: aws.String("t"), Detail: aws.String(`{"events-marker":1}`),
		}}})
		return err
	}},
	{awsrouter.DynamoDB, "dynamodb-marker", func(ctx context.Context, cfg aws.Config) error {
		_, err := dynamodb.NewFromConfig(cfg).GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String("dynamodb-marker"),
			Key:       map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: "k"}},
		})
		return err
	}},
}

func TestSDKClientsPass(t *testing.T) {
	for _, c := range calls {
		t.Run(c.service, func(t *testing.T) {
			rec, srv := serve(t, Options{Region: testRegion})
			if err := c.call(t.Context(), sdkConfig(srv, static(testCreds, ""), testRegion, nil)); err != nil {
				t.Fatalf("signed call refused: %v", err)
			}
			bodies := rec.seen()
			if len(bodies) != 1 || !strings.Contains(bodies[0], c.marker) {
				t.Fatalf("handler saw bodies %q, want one holding %q", bodies, c.marker)
			}
		})
	}
}

var (
	signatureParam = regexp.MustCompile(`, ?Signature=[0-9a-f]+`)
	signedHeaders  = regexp.MustCompile(`SignedHeaders=[^,]+`)
)

// editAuth rewrites the Authorization header the SDK signed.
func editAuth(f func(string) string) func(*http.Request) {
	return func(r *http.Request) { r.Header.Set("Authorization", f(r.Header.Get("Authorization"))) }
}

func dropSignedHeader(name string) func(*http.Request) {
	return editAuth(func(a string) string {
		return signedHeaders.ReplaceAllStringFunc(a, func(s string) string {
			return strings.Replace(strings.Replace(s, name+";", "", 1), ";"+name, "", 1)
		})
	})
}

// failures are requests local mode must refuse, each made with the KMS (JSON protocol) and the
// Lambda (REST protocol) client. status 0 is the protocol's own: 400 for JSON, 403 for Lambda.
var failures = []struct {
	name   string
	opts   Options
	creds  aws.CredentialsProvider
	region string
	mutate func(*http.Request)
	code   string
	status int
	msg    string
}{
	{name: "unsigned", creds: aws.AnonymousCredentials{}, code: codeMissing, msg: "Missing Authentication Token"},
	{name: "wrong secret", creds: static(Credentials{testCreds.AccessKeyID, "not-the-secret"}, ""), code: codeInvalid, msg: "does not match"},
	{name: "unknown access key", creds: static(Credentials{"AKIAAAAAAAAAAAAAAAAA", testCreds.SecretAccessKey}, ""), code: codeUnrecognized, msg: "security token"},
	{name: "session token", creds: static(testCreds, "token"), code: codeUnrecognized, msg: "security token"},
	{name: "other region", region: "eu-west-1", code: codeInvalid, msg: "valid region"},
	{name: "service not served", opts: Options{Services: []string{"states"}}, code: codeInvalid, msg: "correct service"},
	{name: "clock behind", opts: Options{Now: func() time.Time { return time.Now().Add(-10 * time.Minute) }}, code: codeInvalid, msg: "Signature not yet current"},
	{name: "clock ahead", opts: Options{Now: func() time.Time { return time.Now().Add(10 * time.Minute) }}, code: codeInvalid, msg: "Signature expired"},
	{name: "text/plain", mutate: func(r *http.Request) { r.Header.Set("Content-Type", "text/plain;charset=UTF-8") },
		code: codeMediaType, status: http.StatusUnsupportedMediaType, msg: "web page"},
	{name: "form, odd case", mutate: func(r *http.Request) {
		r.Header.Set("Content-Type", " Application/X-WWW-Form-Urlencoded ; charset=utf-8")
	},
		code: codeMediaType, status: http.StatusUnsupportedMediaType, msg: "web page"},
	{name: "multipart", mutate: func(r *http.Request) { r.Header.Set("Content-Type", "multipart/form-data; boundary=x") },
		code: codeMediaType, status: http.StatusUnsupportedMediaType, msg: "web page"},
	{name: "body changed after signing", mutate: func(r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		body[len(body)-2] ^= 1
		r.Body = io.NopCloser(bytes.NewReader(body))
	}, code: codeInvalid, msg: "does not match"},
	{name: "host rewritten", mutate: func(r *http.Request) { r.Host = strings.Replace(r.URL.Host, "127.0.0.1", "localhost", 1) },
		code: codeInvalid, msg: "does not match"},
	{name: "query added after signing", mutate: func(r *http.Request) { r.URL.RawQuery = "Qualifier=2" }, code: codeInvalid, msg: "does not match"},
	{name: "payload hash header lies", mutate: func(r *http.Request) { r.Header.Set("X-Amz-Content-Sha256", strings.Repeat("0", 64)) },
		code: codeInvalid, msg: "x-amz-content-sha256"},
	{name: "unsigned payload in a header", mutate: func(r *http.Request) { r.Header.Set("X-Amz-Content-Sha256", unsignedPayload) },
		code: codeInvalid, msg: "UNSIGNED-PAYLOAD"},
	{name: "no signature", mutate: editAuth(func(a string) string { return signatureParam.ReplaceAllString(a, "") }),
		code: codeIncomplete, msg: "requires 'Signature' parameter"},
	{name: "scope without terminator", mutate: editAuth(func(a string) string { return strings.Replace(a, "/aws4_request", "", 1) }),
		code: codeIncomplete, msg: "Credential must have the form"},
	{name: "other algorithm", mutate: editAuth(func(a string) string { return strings.Replace(a, "AWS4-HMAC-SHA256", "AWS4-HMAC-SHA512", 1) }),
		code: codeIncomplete, msg: "algorithm"},
	{name: "not key=value", mutate: editAuth(func(a string) string { return a + ", junk" }), code: codeIncomplete, msg: "key=value"},
	{name: "no date", mutate: func(r *http.Request) { r.Header.Del("X-Amz-Date") }, code: codeIncomplete, msg: "'X-Amz-Date' or a 'Date'"},
	{name: "bad date", mutate: func(r *http.Request) { r.Header.Set("X-Amz-Date", "2024-01-01T00:00:00Z") }, code: codeIncomplete, msg: "ISO8601"},
	{name: "bad HTTP date", mutate: func(r *http.Request) { r.Header.Del("X-Amz-Date"); r.Header.Set("Date", "yesterday") }, code: codeIncomplete, msg: "HTTP date"},
	{name: "scope date not the request's day", mutate: func(r *http.Request) {
		at, _ := time.Parse(amzDateLayout, r.Header.Get("X-Amz-Date"))
		r.Header.Set("X-Amz-Date", at.Add(24*time.Hour).Format(amzDateLayout))
	}, code: codeInvalid, msg: "Date in Credential scope"},
	{name: "host not signed", mutate: dropSignedHeader("host"), code: codeIncomplete, msg: "'Host' must be a 'SignedHeader'"},
	{name: "target not signed", mutate: func(r *http.Request) {
		if r.Header.Get("X-Amz-Target") == "" {
			r.Header.Set("X-Amz-Target", "TrentService.Decrypt")
		}
		dropSignedHeader("x-amz-target")(r)
	}, code: codeIncomplete, msg: "'X-Amz-Target' must be a 'SignedHeader'"},
	{name: "signed headers unsorted", mutate: editAuth(func(a string) string { return strings.Replace(a, "SignedHeaders=", "SignedHeaders=x-z;", 1) }),
		code: codeIncomplete, msg: "sorted"},
	{name: "header and query signature", mutate: func(r *http.Request) { r.URL.RawQuery = "X-Amz-Signature=00" }, code: codeIncomplete, msg: "both"},
	{name: "two Authorization headers", mutate: func(r *http.Request) { r.Header.Add("Authorization", r.Header.Get("Authorization")) },
		code: codeIncomplete, msg: "more than one"},
	{name: "body too large", opts: Options{MaxBody: 8}, code: codeTooLarge, status: http.StatusRequestEntityTooLarge, msg: "smaller than 8 bytes"},
}

func TestFailuresAsSDKErrors(t *testing.T) {
	clients := []struct {
		service string
		status  int
		call    func(context.Context, aws.Config) error
	}{
		{awsrouter.KMS, http.StatusBadRequest, calls[2].call},
		{awsrouter.Lambda, http.StatusForbidden, calls[1].call},
	}
	for _, tc := range failures {
		for _, cl := range clients {
			t.Run(tc.name+"/"+cl.service, func(t *testing.T) {
				opts := tc.opts
				opts.Region = testRegion
				rec, srv := serve(t, opts)
				creds, region := tc.creds, tc.region
				if creds == nil {
					creds = static(testCreds, "")
				}
				if region == "" {
					region = testRegion
				}
				err := cl.call(t.Context(), sdkConfig(srv, creds, region, tc.mutate))
				want := tc.status
				if want == 0 {
					want = cl.status
				}
				checkAPIError(t, err, tc.code, want, tc.msg)
				if seen := rec.seen(); len(seen) != 0 {
					t.Errorf("a refused request reached the handler: %q", seen)
				}
			})
		}
	}
}

// checkAPIError checks err is the AWS error the SDK parsed with code, HTTP status and a message
// holding msg, and that it shows no secret.
func checkAPIError(t *testing.T, err error, code string, status int, msg string) {
	t.Helper()
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("error %v is not an AWS API error", err)
	}
	if apiErr.ErrorCode() != code || !strings.Contains(apiErr.ErrorMessage(), msg) {
		t.Errorf("error %s %q, want %s with %q", apiErr.ErrorCode(), apiErr.ErrorMessage(), code, msg)
	}
	var respErr *awshttp.ResponseError
	if !errors.As(err, &respErr) || respErr.HTTPStatusCode() != status {
		t.Errorf("error %v, want HTTP status %d", err, status)
	}
	if strings.Contains(err.Error(), testCreds.SecretAccessKey) {
		t.Errorf("error shows the secret: %v", err)
	}
}
