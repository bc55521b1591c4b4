package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// TestWirePhases: a DynamoDB request's time on the wire is split into its phases, and a server
// that takes its time before answering shows as the wait for the answer's first byte, in
// aws-wire.json as the load test reads it.
func TestWirePhases(t *testing.T) {
	const delay = 30 * time.Millisecond
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_, _ = w.Write([]byte(`{}`))
	}))
	defer hs.Close()
	wt := &wireTimes{}
	ddb := dynamodb.New(dynamodb.Options{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
		BaseEndpoint: aws.String(hs.URL), APIOptions: []func(*middleware.Stack) error{wt.Register}, RetryMaxAttempts: 1})
	for range 2 {
		if _, err := ddb.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String("sinew"), Key: ddbKey("a")}); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	if err := wt.write(dir, nil); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "aws-wire.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Phases wirePhases `json:"dynamodb_phases"`
		Ops    map[string]wireOp
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	ph := got.Phases
	if ph.N != 2 || ph.Answer < 2*delay || ph.Conn < 0 || ph.Write < 0 || ph.Read < 0 {
		t.Errorf("phases = %+v; want 2 requests whose wait for the answer holds the server's %v each", ph, delay)
	}
	if total := got.Ops["DynamoDB.GetItem"].Total; ph.Conn+ph.Write+ph.Answer+ph.Read > total {
		t.Errorf("phases add up to %v, more than the requests' %v on the wire", ph.Conn+ph.Write+ph.Answer+ph.Read, total)
	}
}
