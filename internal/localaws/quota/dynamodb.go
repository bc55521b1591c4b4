package quota

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"

	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// ErrorCode, ErrorMessage and ErrorFault make a Throttle a smithy API error, so an AWS SDK's
// retryer sees the throttle it names, and fault.FromAWS its code.
func (e *Throttle) ErrorCode() string    { return e.Code }
func (e *Throttle) ErrorMessage() string { return e.Message }

// ErrorFault is the client's: the caller is to slow down.
func (e *Throttle) ErrorFault() int { return 1 }

// Doer is an HTTP client as the AWS SDK takes one (aws.HTTPClient).
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

type doerFunc func(*http.Request) (*http.Response, error)

func (f doerFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }

// DynamoDBClient wraps an HTTP client (an AWS SDK's, or the engine's DynamoDB tasks') with l's
// per-partition throughput: items sharing the value of pkAttr in a table share a partition. Each
// request is charged before it goes out, and one past its partition's capacity comes back as
// DynamoDB answers it, HTTP 400 ProvisionedThroughputExceededException, without reaching
// DynamoDB: an SDK retries it with its back-off, a state machine's Retry names it. Single-item
// reads and writes and Queries are charged (a write one unit per started KB of its item, a read or
// Query one unit); batches, transactions and scans are not.
func (l *Limits) DynamoDBClient(pkAttr string, next Doer) Doer {
	if l == nil || (l.p.PartitionRead <= 0 && l.p.PartitionWrite <= 0) {
		return next
	}
	return doerFunc(func(r *http.Request) (*http.Response, error) {
		op, ok := strings.CutPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810.")
		if !ok || r.Body == nil {
			return next.Do(r)
		}
		body, err := io.ReadAll(r.Body)
		_ = r.Body.Close()
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if c, ok := chargeOf(op, body, pkAttr); ok {
			if th := l.Partition(c.table, c.key, c.write, c.units); th != nil {
				return throttledResponse(r, th), nil
			}
		}
		return next.Do(r)
	})
}

// Transport is DynamoDBClient as an http.RoundTripper (for an *http.Client).
func (l *Limits) Transport(pkAttr string, next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	d := l.DynamoDBClient(pkAttr, doerFunc(next.RoundTrip))
	return roundTripper(d.Do)
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func throttledResponse(r *http.Request, th error) *http.Response {
	t := th.(*Throttle)
	body, _ := json.Marshal(map[string]string{"__type": "com.amazonaws.dynamodb.v20120810#" + t.Code, "message": t.Message})
	h := http.Header{}
	h.Set("Content-Type", "application/x-amz-json-1.0")
	h.Set("X-Amzn-ErrorType", t.Code)
	return &http.Response{Status: "400 Bad Request", StatusCode: http.StatusBadRequest, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: r}
}

// charge is a DynamoDB request's draw on one partition.
type charge struct {
	table, key string
	write      bool
	units      float64
}

// request is the part of a DynamoDB request's JSON that names its partition.
type request struct {
	TableName                 string
	IndexName                 string
	Key, Item                 map[string]json.RawMessage
	KeyConditionExpression    string
	ExpressionAttributeNames  map[string]string
	ExpressionAttributeValues map[string]json.RawMessage
}

// chargeOf reads a DynamoDB request's partition and capacity.
func chargeOf(op string, body []byte, pk string) (charge, bool) {
	var q request
	if json.Unmarshal(body, &q) != nil || q.TableName == "" {
		return charge{}, false
	}
	c := charge{table: q.TableName, units: 1}
	var key json.RawMessage
	switch op {
	case "GetItem":
		key = q.Key[pk]
	case "UpdateItem", "DeleteItem":
		key, c.write = q.Key[pk], true
	case "PutItem":
		key, c.write = q.Item[pk], true
		c.units = float64((itemSize(q.Item) + 1023) / 1024)
	case "Query":
		if q.IndexName != "" {
			return charge{}, false // an index has partitions of its own
		}
		key = queryKey(q, pk)
	default:
		return charge{}, false
	}
	if len(key) == 0 {
		return charge{}, false
	}
	c.key = string(key)
	return c, true
}

// itemSize approximates an item's size: its names and the length of its values' JSON.
func itemSize(item map[string]json.RawMessage) int {
	n := 0
	for k, v := range item {
		n += len(k) + len(v)
	}
	return n
}

var eqRE = regexp.MustCompile(`([#A-Za-z_][A-Za-z0-9_]*)\s*=\s*(:[A-Za-z0-9_]+)`)

// queryKey finds the partition key's value in a Query's key condition (pk = :v, or #n = :v with
// #n naming pk).
func queryKey(q request, pk string) json.RawMessage {
	for _, m := range eqRE.FindAllStringSubmatch(q.KeyConditionExpression, -1) {
		name := m[1]
		if strings.HasPrefix(name, "#") {
			name = q.ExpressionAttributeNames[name]
		}
		if name == pk {
			return q.ExpressionAttributeValues[m[2]]
		}
	}
	return nil
}

// DynamoDBMiddleware is DynamoDBClient for an AWS SDK client's stack (whose HTTP client the SDK
// must be able to configure): each attempt is charged inside the retry loop, and one past its
// partition's capacity fails with the Throttle, which the SDK's retryer backs off and retries as
// it does DynamoDB's own ProvisionedThroughputExceededException.
func (l *Limits) DynamoDBMiddleware(pkAttr string) func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		if l == nil || (l.p.PartitionRead <= 0 && l.p.PartitionWrite <= 0) {
			return nil
		}
		return stack.Finalize.Insert(middleware.FinalizeMiddlewareFunc("sinew.quota.partition",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				req, ok := in.Request.(*smithyhttp.Request)
				if !ok {
					return next.HandleFinalize(ctx, in)
				}
				op, ok := strings.CutPrefix(req.Header.Get("X-Amz-Target"), "DynamoDB_20120810.")
				if !ok || req.GetStream() == nil {
					return next.HandleFinalize(ctx, in)
				}
				body, err := io.ReadAll(req.GetStream())
				if err != nil {
					return middleware.FinalizeOutput{}, middleware.Metadata{}, err
				}
				if req, err = req.SetStream(bytes.NewReader(body)); err != nil {
					return middleware.FinalizeOutput{}, middleware.Metadata{}, err
				}
				in.Request = req
				if c, ok := chargeOf(op, body, pkAttr); ok {
					if th := l.Partition(c.table, c.key, c.write, c.units); th != nil {
						return middleware.FinalizeOutput{}, middleware.Metadata{}, th
					}
				}
				return next.HandleFinalize(ctx, in)
			}), "Retry", middleware.After)
	}
}
