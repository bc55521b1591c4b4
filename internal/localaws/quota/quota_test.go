package quota

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in      string
		nilP    bool
		err     bool
		lambda  int
		start   Bucket
		partRCU float64
	}{
		{in: "", nilP: true},
		{in: "off", nilP: true},
		{in: "aws", lambda: 1000, start: Bucket{1300, 300}, partRCU: 3000},
		{in: "new-account", lambda: 10, start: Bucket{1300, 300}, partRCU: 3000},
		{in: "aws*0.01", lambda: 10, start: Bucket{13, 3}, partRCU: 30},
		{in: "new-account*0.01", lambda: 1, start: Bucket{13, 3}, partRCU: 30}, // never below 1
		{in: "aws*0", err: true},
		{in: "aws*x", err: true},
		{in: "gcp", err: true},
	} {
		p, err := Parse(tc.in)
		switch {
		case tc.err:
			if err == nil {
				t.Errorf("Parse(%q) = %+v, want an error", tc.in, p)
			}
		case err != nil:
			t.Errorf("Parse(%q): %v", tc.in, err)
		case tc.nilP:
			if p != nil {
				t.Errorf("Parse(%q) = %+v, want none", tc.in, p)
			}
		case p.LambdaConcurrency != tc.lambda || p.StartExecution != tc.start || p.PartitionRead != tc.partRCU:
			t.Errorf("Parse(%q) = %+v", tc.in, p)
		}
	}
}

func mustLimits(t *testing.T, s string) *Limits {
	t.Helper()
	p, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return New(p)
}

// The StartExecution bucket lets its size through at once, then refuses with ThrottlingException.
func TestStartExecutionBucket(t *testing.T) {
	l := mustLimits(t, "aws*0.01") // 13 burst, 3/s
	ok := 0
	var last error
	for range 20 {
		if last = l.StartExecution(); last == nil {
			ok++
		}
	}
	var th *Throttle
	if ok < 13 || ok > 14 || !errors.As(last, &th) || th.Code != "ThrottlingException" {
		t.Errorf("%d of 20 went through (want the 13 of the bucket), last error %v", ok, last)
	}
	if got := l.Throttled.StartExecution.Load(); got != int64(20-ok) {
		t.Errorf("throttled count %d, want %d", got, 20-ok)
	}
	var none *Limits
	if none.StartExecution() != nil || none.Transition(context.Background()) != nil {
		t.Error("nil limits throttled")
	}
}

// A synchronous invocation past the concurrency is refused; an Event one waits for a slot.
func TestLambdaConcurrency(t *testing.T) {
	l := mustLimits(t, "new-account*0.2") // 2 slots
	ctx := context.Background()
	r1, err1 := l.Lambda(ctx, false)
	r2, err2 := l.Lambda(ctx, false)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	_, err := l.Lambda(ctx, false)
	var th *Throttle
	if !errors.As(err, &th) || th.Code != "TooManyRequestsException" || th.Reason != "ConcurrentInvocationLimitExceeded" {
		t.Fatalf("third synchronous invocation: %v", err)
	}
	got := make(chan error, 1)
	go func() {
		r, err := l.Lambda(ctx, true)
		if err == nil {
			r()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("the Event invocation did not wait: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	r1()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	r2()
}

// A partition's write capacity is its own: another key's is untouched.
func TestPartitionThroughput(t *testing.T) {
	l := mustLimits(t, "aws*0.01") // 10 WCU, 30 RCU a partition
	n := 0
	for range 15 {
		if l.Partition("t", "Sa", true, 1) == nil {
			n++
		}
	}
	if n < 10 || n > 11 {
		t.Errorf("%d of 15 writes to one partition went through, want its 10", n)
	}
	if err := l.Partition("t", "Sb", true, 1); err != nil {
		t.Errorf("another partition: %v", err)
	}
	if err := l.Partition("t", "Sa", false, 1); err != nil {
		t.Errorf("a read of the written partition: %v", err)
	}
	err := l.Partition("t", "Sa", true, 1)
	if !retry.IsErrorThrottles(retry.DefaultThrottles).IsErrorThrottle(err).Bool() {
		t.Errorf("the AWS SDK does not see %v as a throttle", err)
	}
}

func TestChargeOf(t *testing.T) {
	big := strings.Repeat("x", 2500)
	for _, tc := range []struct {
		name, op, body string
		want           charge
		ok             bool
	}{
		{"get", "GetItem", `{"TableName":"t","Key":{"pk":{"S":"a"},"sk":{"S":"1"}}}`, charge{table: "t", key: `{"S":"a"}`, units: 1}, true},
		{"put of 3 KB", "PutItem", `{"TableName":"t","Item":{"pk":{"S":"a"},"v":{"S":"` + big + `"}}}`,
			charge{table: "t", key: `{"S":"a"}`, write: true, units: 3}, true},
		{"query by name", "Query", `{"TableName":"t","KeyConditionExpression":"#p = :p AND begins_with(sk, :s)",
			"ExpressionAttributeNames":{"#p":"pk"},"ExpressionAttributeValues":{":p":{"S":"a"},":s":{"S":"x"}}}`,
			charge{table: "t", key: `{"S":"a"}`, units: 1}, true},
		{"query of an index", "Query", `{"TableName":"t","IndexName":"g","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"a"}}}`, charge{}, false},
		{"scan", "Scan", `{"TableName":"t"}`, charge{}, false},
		{"not JSON", "GetItem", `{`, charge{}, false},
	} {
		got, ok := chargeOf(tc.op, []byte(tc.body), "pk")
		if ok != tc.ok || got != tc.want {
			t.Errorf("%s: %+v %v, want %+v %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
