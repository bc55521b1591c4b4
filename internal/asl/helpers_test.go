package asl_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"sinew/internal/asl"
)

var epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func mustParse(t *testing.T, def string) *asl.Machine {
	t.Helper()
	m, err := asl.Parse([]byte(def), asl.Options{})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return m
}

// run executes def on input to the end with a virtual clock.
func run(t *testing.T, eng *asl.Engine, def, input string) (asl.Description, *asl.Execution) {
	t.Helper()
	x, err := eng.Start(context.Background(), asl.StartInput{Machine: mustParse(t, def), Input: input})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	d, err := x.Wait(ctx)
	if err != nil {
		t.Fatalf("execution did not end: %v", err)
	}
	return d, x
}

func types(x *asl.Execution) []string {
	var out []string
	for _, e := range x.History() {
		out = append(out, e.Type)
	}
	return out
}

// waitFor polls cond: the engine runs executions on their own goroutines.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// tokenLambda is a Lambda whose invocations hand their task token to the test.
type tokenLambda struct {
	mu     sync.Mutex
	tokens chan string
	calls  int
}

func (l *tokenLambda) Invoke(_ context.Context, req asl.LambdaRequest) (*asl.LambdaResponse, error) {
	l.mu.Lock()
	l.calls++
	l.mu.Unlock()
	if l.tokens != nil {
		var p struct{ Token string }
		_ = jsonUnmarshal(req.Payload, &p)
		l.tokens <- p.Token
	}
	return &asl.LambdaResponse{Payload: []byte(`{"ok":true}`)}, nil
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
