package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/testenv/ddblocal"
)

// slowDynamoDB answers every request with an empty item after release is closed, counting the
// requests it holds at once.
type slowDynamoDB struct {
	release        chan struct{}
	now, most, all atomic.Int64
}

func (s *slowDynamoDB) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := s.now.Add(1)
	for m := s.most.Load(); n > m && !s.most.CompareAndSwap(m, n); m = s.most.Load() {
	}
	s.all.Add(1)
	<-s.release
	s.now.Add(-1)
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	_, _ = w.Write([]byte(`{}`))
}

func gatedClient(t *testing.T, endpoint string, g *ddbGate) *dynamodb.Client {
	t.Helper()
	return ddblocal.NewClient(endpoint, func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, g.Register)
		o.RetryMaxAttempts = 1
	})
}

func getItem(ctx context.Context, c *dynamodb.Client) error {
	_, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("t"),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "k"}}})
	return err
}

// TestDDBGateBounds: of 12 concurrent requests, the gate lets 3 reach DynamoDB at once, holds the
// others until a slot frees, and every request is answered.
func TestDDBGateBounds(t *testing.T) {
	srv := &slowDynamoDB{release: make(chan struct{})}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	t.Setenv(envDDBInFlight, "3")
	g, err := newDDBGate()
	if err != nil {
		t.Fatal(err)
	}
	c := gatedClient(t, hs.URL, g)
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for range 12 {
		wg.Go(func() { errs <- getItem(context.Background(), c) })
	}
	// Every slot taken and the rest waiting: the server holds 3 and no more come.
	for deadline := time.Now().Add(10 * time.Second); srv.now.Load() < 3 || g.queued.Load() < 9; {
		if time.Now().After(deadline) {
			t.Fatalf("the server holds %d requests and %d wait for the gate, want 3 and 9", srv.now.Load(), g.queued.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	if n := srv.all.Load(); n != 3 {
		t.Fatalf("%d requests reached the server with 3 slots all held, want 3", n)
	}
	close(srv.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a gated request failed: %v", err)
		}
	}
	if most, all := srv.most.Load(), srv.all.Load(); most != 3 || all != 12 {
		t.Errorf("the server held at most %d requests at once and got %d in all, want 3 and 12", most, all)
	}
}

// TestDDBGateWaitEndsWithContext: a request waiting for a slot gives up when its context ends,
// and other services' requests pass a full gate.
func TestDDBGateWaitEndsWithContext(t *testing.T) {
	srv := &slowDynamoDB{release: make(chan struct{})}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer close(srv.release)
	g := &ddbGate{slots: make(chan struct{}, 1)}
	c := gatedClient(t, hs.URL, g)
	go func() { _ = getItem(context.Background(), c) }()
	for srv.now.Load() < 1 {
		time.Sleep(5 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := getItem(ctx, c); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a request waiting on a full gate past its deadline answered %v, want context.DeadlineExceeded", err)
	}
	if n := srv.all.Load(); n != 1 {
		t.Errorf("%d requests reached the server, want only the one holding the slot", n)
	}
}

func TestDDBGateFromEnv(t *testing.T) {
	for _, c := range []struct {
		env  string
		want int // -1: an error; 0: no gate
	}{{"", defaultDDBInFlight}, {"0", 0}, {"5", 5}, {"-1", -1}, {"many", -1}} {
		t.Setenv(envDDBInFlight, c.env)
		g, err := newDDBGate()
		switch {
		case c.want < 0 && err == nil:
			t.Errorf("%s=%q: no error", envDDBInFlight, c.env)
		case c.want == 0 && (err != nil || g != nil):
			t.Errorf("%s=%q: %v %v, want no gate", envDDBInFlight, c.env, g, err)
		case c.want > 0 && (err != nil || g == nil || cap(g.slots) != c.want):
			t.Errorf("%s=%q: %v %v, want %d slots", envDDBInFlight, c.env, g, err, c.want)
		}
	}
}
