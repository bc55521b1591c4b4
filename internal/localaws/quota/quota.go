// Package quota emulates the AWS quotas sinew meets first under load, with AWS's errors.
//
// Local mode throttles where AWS would: Step Functions' StartExecution and state-transition token
// buckets (ThrottlingException; transitions are delayed, as AWS delays them), Lambda's account
// concurrency (TooManyRequestsException) and DynamoDB's per-partition throughput
// (ProvisionedThroughputExceededException). The token buckets are golang.org/x/time/rate's. See
// README.md for the figures, their sources, and which quota bounds sinew first.
package quota

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// Bucket is a token bucket: Size tokens at most, refilled at Refill tokens a second.
type Bucket struct {
	Size   float64
	Refill float64
}

// Profile is a set of quotas. A zero Bucket or count is no quota.
type Profile struct {
	Name              string
	StartExecution    Bucket  // Step Functions StartExecution (Standard), per account and Region
	StateTransition   Bucket  // Step Functions state transitions (Standard), per account and Region
	LambdaConcurrency int     // Lambda's unreserved account concurrency
	PartitionRead     float64 // DynamoDB read capacity units a second, per partition
	PartitionWrite    float64 // DynamoDB write capacity units a second, per partition
}

// AWS's default quotas in us-east-1 (Step Functions' figures for Standard workflows; other Regions
// have smaller buckets), an account's Lambda concurrency by default, and DynamoDB's partition
// throughput.
var awsDefault = Profile{
	Name:              "aws",
	StartExecution:    Bucket{Size: 1300, Refill: 300},
	StateTransition:   Bucket{Size: 5000, Refill: 5000},
	LambdaConcurrency: 1000,
	PartitionRead:     3000,
	PartitionWrite:    1000,
}

// Profiles by name. "new-account" is a new account's Lambda concurrency (10), AWS's other
// defaults. "off" (or "") applies none.
func profile(name string) (Profile, bool) {
	switch name {
	case "aws":
		return awsDefault, true
	case "new-account":
		p := awsDefault
		p.Name, p.LambdaConcurrency = "new-account", 10
		return p, true
	}
	return Profile{}, false
}

// Parse reads a --quotas value: off, aws or new-account, optionally scaled as NAME*FACTOR (every
// bucket, rate and count times FACTOR, at least 1: aws*0.01 lets a test reach the quotas with
// tens of calls, not thousands). It gives nil for off.
func Parse(s string) (*Profile, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "off" {
		return nil, nil
	}
	name, factor := s, 1.0
	if n, f, ok := strings.Cut(s, "*"); ok {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || v <= 0 || v > 1000 {
			return nil, fmt.Errorf("quotas %q: the factor after * must be a number above 0 and at most 1000", s)
		}
		name, factor = n, v
	}
	p, ok := profile(name)
	if !ok {
		return nil, fmt.Errorf("quotas %q: want off, aws or new-account (optionally scaled, as aws*0.01)", s)
	}
	if factor != 1 {
		p = p.scaled(factor)
		p.Name = s
	}
	return &p, nil
}

func (p Profile) scaled(f float64) Profile {
	at1 := func(v float64) float64 { return max(1, v*f) }
	p.StartExecution = Bucket{Size: at1(p.StartExecution.Size), Refill: at1(p.StartExecution.Refill)}
	p.StateTransition = Bucket{Size: at1(p.StateTransition.Size), Refill: at1(p.StateTransition.Refill)}
	p.LambdaConcurrency = int(at1(float64(p.LambdaConcurrency)))
	p.PartitionRead, p.PartitionWrite = at1(p.PartitionRead), at1(p.PartitionWrite)
	return p
}

// Limits applies a Profile. Its methods are safe for concurrent use; a nil *Limits applies none.
type Limits struct {
	p           Profile
	start       *rate.Limiter
	transitions *rate.Limiter
	lambda      chan struct{}

	mu         sync.Mutex
	partitions map[string]*partition

	// Throttled counts the requests each quota refused (or, for transitions, delayed).
	Throttled struct {
		StartExecution, StateTransition, Lambda, DynamoDB atomic.Int64
	}
}

type partition struct {
	read, write *rate.Limiter
	used        time.Time
}

// New makes the limits of p (nil p: nil, no limits).
func New(p *Profile) *Limits {
	if p == nil {
		return nil
	}
	l := &Limits{p: *p, partitions: map[string]*partition{}}
	if b := p.StartExecution; b.Size > 0 {
		l.start = rate.NewLimiter(rate.Limit(b.Refill), int(b.Size))
	}
	if b := p.StateTransition; b.Size > 0 {
		l.transitions = rate.NewLimiter(rate.Limit(b.Refill), int(b.Size))
	}
	if p.LambdaConcurrency > 0 {
		l.lambda = make(chan struct{}, p.LambdaConcurrency)
	}
	return l
}

// Profile is the profile l applies.
func (l *Limits) Profile() Profile { return l.p }

// Throttle is the error a quota answers with: Code is AWS's error code.
type Throttle struct {
	Code    string // ThrottlingException, TooManyRequestsException, ProvisionedThroughputExceededException
	Reason  string // Lambda's reason (ConcurrentInvocationLimitExceeded), else ""
	Message string
}

func (e *Throttle) Error() string { return e.Code + ": " + e.Message }

// StartExecution takes a token for a StartExecution call, or answers ThrottlingException (the API
// refuses at once; the caller's SDK retries with back-off).
func (l *Limits) StartExecution() error {
	if l == nil || l.start == nil {
		return nil
	}
	if !l.start.Allow() {
		l.Throttled.StartExecution.Add(1)
		return &Throttle{Code: "ThrottlingException", Message: "Rate exceeded"}
	}
	return nil
}

// Transition waits for a state-transition token: Step Functions delays throttled transitions of
// a running execution rather than failing it.
func (l *Limits) Transition(ctx context.Context) error {
	if l == nil || l.transitions == nil {
		return nil
	}
	r := l.transitions.Reserve()
	d := r.Delay()
	if d == 0 {
		return nil
	}
	l.Throttled.StateTransition.Add(1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		r.Cancel()
		return ctx.Err()
	}
}

// Lambda takes a slot of the account's concurrency for one invocation, or answers
// TooManyRequestsException when every slot is taken; queued (an Event invocation, which Lambda's
// own queue retries) waits for one instead. release gives the slot back.
func (l *Limits) Lambda(ctx context.Context, queued bool) (release func(), err error) {
	if l == nil || l.lambda == nil {
		return func() {}, nil
	}
	select {
	case l.lambda <- struct{}{}:
		return func() { <-l.lambda }, nil
	default:
	}
	l.Throttled.Lambda.Add(1)
	if !queued {
		return nil, &Throttle{Code: "TooManyRequestsException", Reason: "ConcurrentInvocationLimitExceeded", Message: "Rate Exceeded."}
	}
	select {
	case l.lambda <- struct{}{}:
		return func() { <-l.lambda }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Partition charges units of read (write false) or write capacity to a DynamoDB partition (its
// table and partition key value), or answers ProvisionedThroughputExceededException when the
// partition has spent its second's capacity.
func (l *Limits) Partition(table, key string, write bool, units float64) error {
	if l == nil || (l.p.PartitionRead <= 0 && l.p.PartitionWrite <= 0) {
		return nil
	}
	now := time.Now()
	l.mu.Lock()
	p := l.partitions[table+"\x00"+key]
	if p == nil {
		l.sweepLocked(now)
		p = &partition{read: bucketOf(l.p.PartitionRead), write: bucketOf(l.p.PartitionWrite)}
		l.partitions[table+"\x00"+key] = p
	}
	p.used = now
	lim := p.read
	if write {
		lim = p.write
	}
	l.mu.Unlock()
	if lim == nil {
		return nil
	}
	n := int(max(1, units))
	if n > lim.Burst() {
		n = lim.Burst() // an item larger than a second's capacity still goes through, alone
	}
	if !lim.AllowN(now, n) {
		l.Throttled.DynamoDB.Add(1)
		return &Throttle{Code: "ProvisionedThroughputExceededException",
			Message: "The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API."}
	}
	return nil
}

// bucketOf is a partition's bucket: a second's capacity, refilled over the second.
func bucketOf(perSecond float64) *rate.Limiter {
	if perSecond <= 0 {
		return nil
	}
	return rate.NewLimiter(rate.Limit(perSecond), int(perSecond))
}

// sweepLocked drops partitions idle for a minute (their buckets are full again): a store of
// per-key state must not grow with every key ever written. l.mu is held.
func (l *Limits) sweepLocked(now time.Time) {
	if len(l.partitions) < 4096 {
		return
	}
	for k, p := range l.partitions {
		if now.Sub(p.used) > time.Minute {
			delete(l.partitions, k)
		}
	}
}
