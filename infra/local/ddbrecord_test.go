package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// echoAWS answers a DynamoDB GetItem with an empty item, a ConditionCheckFailed for a PutItem, and
// anything else with {}; it keeps the bodies it was sent, by X-Amz-Target.
type echoAWS struct{ bodies map[string]string }

func (e *echoAWS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	target := r.Header.Get("X-Amz-Target")
	e.bodies[target] = string(b)
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	if target == "DynamoDB_20120810.PutItem" {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","message":"no"}`))
		return
	}
	_, _ = w.Write([]byte(`{}`))
}

// TestDDBRecorder: with envDDBRecord set, the DynamoDB requests sent through the recorder's client
// are appended as JSON lines with their operation, headers, body (as DynamoDB received it) and
// status, in a file only its owner reads; another service's request is not; after close nothing is.
func TestDDBRecorder(t *testing.T) {
	srv := &echoAWS{bodies: map[string]string{}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	path := filepath.Join(t.TempDir(), "ddb.jsonl")
	t.Setenv(envDDBRecord, path)
	rec, err := openDDBRecorder()
	if err != nil || rec == nil {
		t.Fatalf("openDDBRecorder = %v, %v; want a recorder", rec, err)
	}
	creds := credentials.NewStaticCredentialsProvider("local", "local", "")
	api := []func(*middleware.Stack) error{rec.Register}
	ddb := dynamodb.New(dynamodb.Options{Region: "us-east-1", Credentials: creds, BaseEndpoint: aws.String(hs.URL), APIOptions: api, RetryMaxAttempts: 1})
	sf := sfn.New(sfn.Options{Region: "us-east-1", Credentials: creds, BaseEndpoint: aws.String(hs.URL), APIOptions: api})
	ctx := context.Background()
	if _, err := ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("sinew"), Key: ddbKey("a")}); err != nil {
		t.Fatal(err)
	}
	if _, err := sf.ListStateMachines(ctx, &sfn.ListStateMachinesInput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("sinew"), Item: ddbKey("b")}); err == nil {
		t.Fatal("PutItem: want the server's ConditionalCheckFailed")
	}
	if err := rec.close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ddb.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("sinew"), Key: ddbKey("c")}); err != nil {
		t.Fatal(err)
	}

	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("the recording's mode is %v, want 0600", fi.Mode().Perm())
	}
	lines := readRecording(t, path)
	want := []struct {
		op     string
		status int
	}{{"GetItem", 200}, {"PutItem", 400}}
	if len(lines) != len(want) {
		t.Fatalf("recorded %d requests (%+v), want %d", len(lines), lines, len(want))
	}
	for i, w := range want {
		l := lines[i]
		if l.Op != w.op || l.Status != w.status || l.Time == 0 || l.Wire <= 0 {
			t.Errorf("line %d: %s %d at %d after %d ns, want %s %d at a time, after some time", i, l.Op, l.Status, l.Time, l.Wire, w.op, w.status)
		}
		if got := srv.bodies[ddbTargetPrefix+w.op]; l.Body != got || !strings.Contains(got, `"TableName":"sinew"`) {
			t.Errorf("line %d: body %q, DynamoDB got %q", i, l.Body, got)
		}
		for _, h := range ddbRecordHeaders {
			if l.Header[h] == "" {
				t.Errorf("line %d: no %s header in %v", i, h, l.Header)
			}
		}
	}
}

// TestDDBRecorderUnset: without envDDBRecord there is no recorder and it adds no middleware.
func TestDDBRecorderUnset(t *testing.T) {
	t.Setenv(envDDBRecord, "")
	rec, err := openDDBRecorder()
	if err != nil || rec != nil {
		t.Fatalf("openDDBRecorder = %v, %v; want none", rec, err)
	}
	stack := middleware.NewStack("t", smithyhttp.NewStackRequest)
	if err := rec.Register(stack); err != nil || len(stack.Deserialize.List()) != 0 {
		t.Errorf("Register = %v, the Deserialize step %v; want nothing added", err, stack.Deserialize.List())
	}
	if err := rec.close(); err != nil {
		t.Errorf("closing no recorder: %v", err)
	}
}

func readRecording(t *testing.T, path string) []ddbRecordLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []ddbRecordLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var l ddbRecordLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func ddbKey(pk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: "META"}}
}
