package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// envDDBRecord names a file local mode appends every DynamoDB request of its in-process functions
// to (every attempt, retries included), one JSON line each (ddbRecordLine), from the start until
// SIGUSR1 or shutdown, whichever comes first, as the CPU profile: a load test replays them to
// measure what DynamoDB Local serves for the load's own requests. The lines hold the requests'
// bodies (the table's items, sealed secrets as sealed) and their signed headers, so the file is
// written 0600 and only when this names it; unset, no middleware is added and nothing is recorded.
const envDDBRecord = "SINEW_LOCAL_DYNAMODB_RECORD"

// ddbTargetPrefix starts the X-Amz-Target of every DynamoDB request; other services' requests
// passing the same middleware are not recorded.
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
	Status int               `json:"status"`  // the answer's HTTP status; 0 for no answer
	Wire   int64             `json:"wire_ns"` // from sending it to its answer (or error), nanoseconds
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

// Register adds the recording to a client's stack, in the Deserialize step inside the wire
// timing (after signing and the retry loop: each attempt as sent); it passes other services'
// requests through. Nothing is added when r is nil.
func (r *ddbRecorder) Register(stack *middleware.Stack) error {
	if r == nil {
		return nil
	}
	return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("sinew.ddbrecord",
		func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
			req, ok := in.Request.(*smithyhttp.Request)
			if !ok {
				return next.HandleDeserialize(ctx, in)
			}
			op, ok := strings.CutPrefix(req.Header.Get("X-Amz-Target"), ddbTargetPrefix)
			if !ok {
				return next.HandleDeserialize(ctx, in)
			}
			l, req, err := recordOf(req, op)
			if err != nil {
				return middleware.DeserializeOutput{}, middleware.Metadata{}, err
			}
			in.Request = req
			out, md, err := next.HandleDeserialize(ctx, in)
			l.Wire = time.Now().UnixNano() - l.Time
			if resp, ok := out.RawResponse.(*smithyhttp.Response); ok && resp != nil {
				l.Status = resp.StatusCode
			}
			r.add(l)
			return out, md, err
		}), middleware.After)
}

// recordOf is req's line, but for its status, and req ready to send: its body read for the line
// and rewound (or set again, when its stream cannot seek).
func recordOf(req *smithyhttp.Request, op string) (ddbRecordLine, *smithyhttp.Request, error) {
	l := ddbRecordLine{Time: time.Now().UnixNano(), Op: op, Header: map[string]string{}}
	for _, h := range ddbRecordHeaders {
		if v := req.Header.Get(h); v != "" {
			l.Header[h] = v
		}
	}
	stream := req.GetStream()
	if stream == nil {
		return l, req, nil
	}
	body, err := io.ReadAll(stream)
	if err != nil {
		return l, req, fmt.Errorf("reading the DynamoDB request to record it: %w", err)
	}
	l.Body = string(body)
	if req.IsStreamSeekable() {
		err = req.RewindStream()
	} else {
		req, err = req.SetStream(bytes.NewReader(body))
	}
	if err != nil {
		return l, req, fmt.Errorf("rewinding the DynamoDB request after recording it: %w", err)
	}
	return l, req, nil
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
