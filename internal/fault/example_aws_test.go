package fault_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
)

// FromAWS types what an AWS SDK call answered: here DynamoDB, played by a loopback server, first
// throttles (Transient: the state machines retry it), then says the table is missing (Internal:
// sinew owns the table, so the fault is sinew's, never the caller's).
func ExampleFromAWS() {
	answers := []string{"ThrottlingException", "ResourceNotFoundException"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code := answers[0]
		answers = answers[1:]
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"__type": "com.amazonaws.dynamodb.v20120810#%s", "message": "no"}`, code)
	}))
	defer srv.Close()
	db := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")})

	for range 2 {
		_, err := db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String("sinew"),
			Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "DEV#d"}}})
		err = fault.FromAWS(err, "read the agent")
		fmt.Println(fault.KindOf(err), "|", fault.Message(err))
	}
	// Output:
	// Sinew.Transient | read the agent: DynamoDB is unavailable (ThrottlingException); try again
	// Sinew.Internal | read the agent: DynamoDB refused the request (ResourceNotFoundException)
}
