package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"sinew/internal/localaws/lambdaapi"
)

// Test functions, registered with --test-functions, so the end-to-end tests can drive state
// machines whose Lambda tasks record what ran (in <dir>/test-invocations.jsonl, which survives a
// kill -9) without depending on the real handlers.
//
//	sinew-test-echo    answers its payload
//	sinew-test-record  appends its payload to the file, then: fails with Test.Flaky while the
//	                   payload's "id" has been seen no more than "failTimes" times, sleeps
//	                   "sleepMs" ("sleepOnceMs" on the id's first call), and answers its payload
//	sinew-test-post    POSTs its payload to its "url" (loopback only: a test's own server, which
//	                   counts the side effects), sleeps "sleepMs", and answers the server's reply
const testInvocationsFile = "test-invocations.jsonl"

func registerTestFunctions(f *functions, dir string) error {
	if err := f.register("sinew-test-echo", lambdaapi.InvokerFunc(func(_ context.Context, p []byte) ([]byte, *lambdaapi.FunctionError, error) {
		return p, nil, nil
	})); err != nil {
		return err
	}
	if err := f.register("sinew-test-post", lambdaapi.InvokerFunc(postToLoopback)); err != nil {
		return err
	}
	var mu sync.Mutex
	path := filepath.Join(dir, testInvocationsFile)
	return f.register("sinew-test-record", lambdaapi.InvokerFunc(func(ctx context.Context, p []byte) ([]byte, *lambdaapi.FunctionError, error) {
		var in struct {
			ID        string `json:"id"`
			FailTimes int    `json:"failTimes"`
			SleepMs   int    `json:"sleepMs"`
			// SleepOnceMs sleeps on the id's first call only: a call a crash interrupts, whose
			// at-least-once re-run then ends at once.
			SleepOnceMs int `json:"sleepOnceMs"`
		}
		if err := json.Unmarshal(p, &in); err != nil {
			return nil, &lambdaapi.FunctionError{Type: "Test.BadPayload", Message: err.Error()}, nil
		}
		mu.Lock()
		seen, err := countID(path, in.ID)
		if err == nil {
			err = appendLine(path, stamp(p))
		}
		mu.Unlock()
		if err != nil {
			return nil, nil, err
		}
		if seen < in.FailTimes {
			return nil, &lambdaapi.FunctionError{Type: "Test.Flaky", Message: fmt.Sprintf("attempt %d of %s fails", seen+1, in.ID)}, nil
		}
		sleep := in.SleepMs
		if seen == 0 && in.SleepOnceMs > 0 {
			sleep = in.SleepOnceMs
		}
		if sleep > 0 {
			select {
			case <-time.After(time.Duration(sleep) * time.Millisecond):
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		}
		return p, nil, nil
	}))
}

// stamp adds "_at" (Unix milliseconds) to a payload object, so tests can order calls in time.
func stamp(p []byte) []byte {
	var m map[string]any
	if json.Unmarshal(p, &m) != nil || m == nil {
		return p
	}
	m["_at"] = time.Now().UnixMilli()
	out, err := json.Marshal(m)
	if err != nil {
		return p
	}
	return out
}

func countID(path, id string) (int, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, line := range splitLines(data) {
		var v struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(line, &v) == nil && v.ID == id {
			n++
		}
	}
	return n, nil
}

func splitLines(data []byte) [][]byte {
	var out [][]byte
	start := 0
	for i, b := range data {
		if b == '\n' {
			if i > start {
				out = append(out, data[start:i])
			}
			start = i + 1
		}
	}
	if start < len(data) {
		out = append(out, data[start:])
	}
	return out
}

func appendLine(path string, p []byte) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	line := append(append([]byte(nil), p...), '\n')
	if _, err := f.Write(line); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// postToLoopback is sinew-test-post: a call with a side effect outside local mode, which a test's
// HTTP server counts (by the payload's "id"), so a test sees every call that ran, even one whose
// result a crash lost.
func postToLoopback(ctx context.Context, p []byte) ([]byte, *lambdaapi.FunctionError, error) {
	var in struct {
		URL     string `json:"url"`
		SleepMs int    `json:"sleepMs"`
	}
	if err := json.Unmarshal(p, &in); err != nil {
		return nil, &lambdaapi.FunctionError{Type: "Test.BadPayload", Message: err.Error()}, nil
	}
	u, err := url.Parse(in.URL)
	if err != nil || u.Scheme != "http" || !isLoopback(u.Hostname()) {
		return nil, &lambdaapi.FunctionError{Type: "Test.BadPayload", Message: "url must be http:// on a loopback address"}, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, in.URL, bytes.NewReader(p))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &lambdaapi.FunctionError{Type: "Test.HTTP", Message: resp.Status}, nil
	}
	if in.SleepMs > 0 {
		select {
		case <-time.After(time.Duration(in.SleepMs) * time.Millisecond):
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
	return body, nil, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
