// Package ddbtask is the engine's optimised DynamoDB integration: Task states with Resource
// arn:aws:states:::dynamodb:getItem, putItem, updateItem or deleteItem. Their Parameters are
// already DynamoDB's JSON request (attribute values as {"S": ...}), so the request goes out as it
// is, signed with SigV4, and the response comes back as AWS's integration returns it: the
// response fields plus SdkHttpMetadata and SdkResponseMetadata. Errors are named as the optimised
// integration names them (DynamoDB.ResourceNotFoundException, DynamoDB.ConditionalCheckFailedException,
// ...), with the Java SDK's cause text (recorded in v2/error_handling/test_task_service_dynamodb).
package ddbtask

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"sinew/internal/asl"
	"sinew/internal/jsonv"
)

// API is DynamoDB's JSON protocol: op is e.g. "GetItem", body and answer are its JSON documents.
type API interface {
	Call(ctx context.Context, op string, body []byte) (*Response, error)
}

// Response is a successful answer.
type Response struct {
	Body      []byte
	RequestID string
	Headers   http.Header
}

// ServiceError is DynamoDB's error answer.
type ServiceError struct {
	Code      string // e.g. ResourceNotFoundException
	Message   string
	Status    int
	RequestID string
}

func (e *ServiceError) Error() string { return e.Code + ": " + e.Message }

// HTTP calls a DynamoDB endpoint (AWS's, or DynamoDB Local's) over HTTP with SigV4.
type HTTP struct {
	Endpoint    string // e.g. https://dynamodb.us-east-1.amazonaws.com or http://127.0.0.1:8000
	Region      string
	Credentials aws.CredentialsProvider
	Client      *http.Client // default http.DefaultClient
	signer      *v4.Signer
}

// Call implements API.
func (h *HTTP) Call(ctx context.Context, op string, body []byte) (*Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(h.Endpoint, "/")+"/", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("dynamodb %s: %w", op, err)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
	creds, err := h.Credentials.Retrieve(ctx)
	if err != nil {
		return nil, fmt.Errorf("dynamodb %s: credentials: %w", op, err)
	}
	sum := sha256.Sum256(body)
	if h.signer == nil {
		h.signer = v4.NewSigner()
	}
	if err := h.signer.SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "dynamodb", h.Region, time.Now()); err != nil {
		return nil, fmt.Errorf("dynamodb %s: sign: %w", op, err)
	}
	client := h.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("dynamodb %s: %w", op, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("dynamodb %s: read: %w", op, err)
	}
	rid := resp.Header.Get("x-amzn-RequestId")
	if resp.StatusCode != http.StatusOK {
		se := &ServiceError{Status: resp.StatusCode, RequestID: rid, Code: "AmazonDynamoDBException", Message: strings.TrimSpace(string(data))}
		if v, err := jsonv.Decode(data); err == nil {
			if m, ok := v.(map[string]any); ok {
				if t, ok := m["__type"].(string); ok {
					se.Code = t[strings.LastIndex(t, "#")+1:]
				}
				for _, k := range []string{"message", "Message"} {
					if s, ok := m[k].(string); ok {
						se.Message = s
					}
				}
			}
		}
		return nil, se
	}
	return &Response{Body: data, RequestID: rid, Headers: resp.Header}, nil
}

// Integration runs the four optimised APIs.
type Integration struct {
	API API
}

// Register adds the integration to an engine configuration's registry.
func Register(into map[string]asl.Integration, api API) map[string]asl.Integration {
	if into == nil {
		into = map[string]asl.Integration{}
	}
	in := &Integration{API: api}
	for api := range operations {
		into["dynamodb:"+api] = in
	}
	return into
}

var operations = map[string]string{"getItem": "GetItem", "putItem": "PutItem", "updateItem": "UpdateItem", "deleteItem": "DeleteItem"}

// Invoke implements asl.Integration.
func (in *Integration) Invoke(ctx context.Context, call *asl.TaskCall) (any, error) {
	op, ok := operations[call.API]
	if !ok {
		return nil, asl.TaskFailure("States.Runtime", fmt.Sprintf("The resource 'dynamodb:%s' is not supported", call.API))
	}
	if _, ok := call.Parameters.(map[string]any); !ok {
		return nil, asl.TaskFailure("States.Runtime", "The Parameters of a DynamoDB task must be an object")
	}
	body, err := jsonv.Encode(call.Parameters)
	if err != nil {
		return nil, asl.TaskFailure("States.Runtime", "The Parameters cannot be encoded: "+err.Error())
	}
	resp, err := in.API.Call(ctx, op, body)
	if err != nil {
		if se, ok := err.(*ServiceError); ok {
			return nil, asl.TaskFailure("DynamoDB."+se.Code, fmt.Sprintf("%s (Service: AmazonDynamoDBv2; Status Code: %d; Error Code: %s; Request ID: %s; Proxy: null)",
				se.Message, se.Status, se.Code, se.RequestID))
		}
		return nil, asl.TaskFailure("DynamoDB.SdkClientException", err.Error())
	}
	out := map[string]any{}
	if len(bytes.TrimSpace(resp.Body)) > 0 {
		v, err := jsonv.Decode(resp.Body)
		if err != nil {
			return nil, asl.TaskFailure("DynamoDB.SdkClientException", "unreadable response: "+err.Error())
		}
		if m, ok := v.(map[string]any); ok {
			out = m
		}
	}
	all, flat := map[string]any{}, map[string]any{}
	for k, vs := range resp.Headers {
		arr := make([]any, len(vs))
		for i, v := range vs {
			arr[i] = v
		}
		all[k] = arr
		flat[k] = strings.Join(vs, ",")
	}
	out["SdkHttpMetadata"] = map[string]any{"AllHttpHeaders": all, "HttpHeaders": flat, "HttpStatusCode": int64(200)}
	out["SdkResponseMetadata"] = map[string]any{"RequestId": resp.RequestID}
	return out, nil
}
