package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// envDDBRecord names a file local mode appends every DynamoDB request of its in-process functions
// to (every attempt, retries included), one JSON line each (ddbRecordLine), from the start until
// SIGUSR1 or shutdown, whichever comes first, as the CPU profile: a load test replays them to
// measure what DynamoDB Local serves for the load's own requests. The lines hold the requests'
// bodies (the table's items, sealed secrets as sealed) and their signed headers, so the file is
// written 0600 and only when this names it; unset, nothing is recorded and nothing is wrapped.
const envDDBRecord = "SINEW_LOCAL_DYNAMODB_RECORD"

// ddbTargetPrefix starts the X-Amz-Target of every DynamoDB request; other services' requests
// going through the same HTTP client are not recorded.
const ddbTargetPrefix = "DynamoDB_20120810."

// ddbRecordHeaders are the headers DynamoDB Local reads. It requires an Authorization header but
// checks neither its signature nor X-Amz-Date, so the recorded ones serve a replay as they are,
// with its own body.
var ddbRecordHeaders = []string{"Content-Type", "X-Amz-Target", "X-Amz-Date", "Authorization"}

// ddbRecordLine is one recorded request.
type ddbRecordLine struct {
	Time   int64             `json:"time_ns"` // when it was sent, Unix nanoseconds
	Op     string            `json:"op"`      // the operation, X-Amz-Target's suffix
	Header map[string]string `json:"header"`
	Body   string            `json:"body"`
	Status int               `json:"status"` // the answer's HTTP status; 0 for no answer
}

// ddbRecorder appends the lines to its file through a buffer; close flushes it and ends the
// recording.
type ddbRecorder struct {
	mu     sync.Mutex
	f      *os.File
	w      *bufio.Writer
	err    error // the first write error
	closed bool
}

// openDDBRecorder opens the file envDDBRecord names for appending; nil when it is unset.
func openDDBRecorder() (*ddbRecorder, error) {
	path := os.Getenv(envDDBRecord)
	if path == "" {
		return nil, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", envDDBRecord, err)
	}
	return &ddbRecorder{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

// client is hc recording the DynamoDB requests it sends; hc itself when r is nil.
func (r *ddbRecorder) client(hc aws.HTTPClient) aws.HTTPClient {
	if r == nil {
		return hc
	}
	return &recordingClient{next: hc, rec: r}
}

func (r *ddbRecorder) add(l ddbRecordLine) {
	data, err := json.Marshal(l)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	if err == nil {
		_, err = r.w.Write(append(data, '\n'))
	}
	if err != nil && r.err == nil {
		r.err = err
	}
}

// close flushes the buffer and closes the file; later requests are not recorded. It answers the
// first error of the recording.
func (r *ddbRecorder) close() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return r.err
	}
	r.closed = true
	if err := r.w.Flush(); err != nil && r.err == nil {
		r.err = err
	}
	if err := r.f.Close(); err != nil && r.err == nil {
		r.err = err
	}
	if r.err != nil {
		return fmt.Errorf("%s: %w", envDDBRecord, r.err)
	}
	return nil
}

// recordingClient is an HTTP client that records each DynamoDB request it sends with its answer's
// status.
type recordingClient struct {
	next aws.HTTPClient
	rec  *ddbRecorder
}

func (c *recordingClient) Do(req *http.Request) (*http.Response, error) {
	op, ok := strings.CutPrefix(req.Header.Get("X-Amz-Target"), ddbTargetPrefix)
	if !ok {
		return c.next.Do(req)
	}
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("reading the DynamoDB request to record it: %w", err)
		}
		body = b
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	l := ddbRecordLine{Time: time.Now().UnixNano(), Op: op, Header: map[string]string{}, Body: string(body)}
	for _, h := range ddbRecordHeaders {
		if v := req.Header.Get(h); v != "" {
			l.Header[h] = v
		}
	}
	resp, err := c.next.Do(req)
	if resp != nil {
		l.Status = resp.StatusCode
	}
	c.rec.add(l)
	return resp, err
}
