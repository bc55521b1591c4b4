package store_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"syscall"
	"testing"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"sinew/internal/fault"
	"sinew/internal/httpapi"
	"sinew/internal/store"
	"sinew/internal/store/seal"
)

// failingDynamoDB answers every request with status and an AWS JSON error of type code, as
// DynamoDB (or DynamoDB Local on a full disk) does.
func failingDynamoDB(t *testing.T, status int, code string) *store.Store {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.Header().Set("X-Amzn-Errortype", code)
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"__type": "com.amazonaws.dynamodb.v20120810#%s", "message": "injected"}`, code)
	}))
	t.Cleanup(srv.Close)
	db := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: awsv2.String(srv.URL), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")})
	sl, err := seal.NewAESGCM(bytes.Repeat([]byte{42}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return store.New(db, "t", sl)
}

// Storage failures a retry may cure (throttling, DynamoDB's own 5xx, a full disk) are answered as
// 503 Sinew.Transient with Retry-After, never as a 500; a refusal of the request stays a 4xx.
func TestStorageErrorsARetryMayCureAre503(t *testing.T) {
	for _, tc := range []struct {
		status int
		code   string
		want   int
	}{
		{400, "ThrottlingException", 503},
		{400, "ProvisionedThroughputExceededException", 503},
		{400, "RequestLimitExceeded", 503},
		{500, "InternalServerError", 503},
		{500, "InternalFailure", 503},
		{500, "SQLiteFull", 503}, // any code: DynamoDB's own 5xx
		{503, "ServiceUnavailable", 503},
		{400, "AccessDeniedException", 500},
	} {
		t.Run(tc.code, func(t *testing.T) {
			s := failingDynamoDB(t, tc.status, tc.code)
			_, err := s.GetSession(ctx(), "dev-1", "0190f6a2-1111-7000-8000-000000000001")
			status, body, hdr := httpapi.ErrorResponse(err)
			if status != tc.want {
				t.Fatalf("%s (HTTP %d): answered %d %+v (error %v), want %d", tc.code, tc.status, status, body, err, tc.want)
			}
			if tc.want == 503 && (body.Error.Type != string(fault.Transient) || hdr["retry-after"] == "") {
				t.Errorf("%s: %+v %v, want Sinew.Transient with Retry-After", tc.code, body, hdr)
			}
		})
	}
	// A full disk met by a file write (local mode's own files), however wrapped.
	err := fmt.Errorf("saving: %w", &os.PathError{Op: "write", Path: "journal", Err: syscall.ENOSPC})
	status, body, hdr := httpapi.ErrorResponse(err)
	if n, _ := strconv.Atoi(hdr["retry-after"]); status != 503 || body.Error.Type != string(fault.Transient) || n < 1 {
		t.Errorf("ENOSPC: %d %+v %v, want 503 Sinew.Transient with Retry-After", status, body, hdr)
	}
}
