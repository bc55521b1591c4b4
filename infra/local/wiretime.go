package main

import (
	"context"
	"encoding/json"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// wireTimes times the in-process functions' AWS requests on the wire by "Service.Operation"
// (DynamoDB Local's, or local mode's own Step Functions, Lambda, KMS, EventBridge), and integrates
// each service's requests in flight over time. A load's figures then say where a request's time
// goes: DynamoDB Local, when it is the bottleneck, has many requests in flight all the time.
type wireTimes struct {
	mu     sync.Mutex
	ops    map[string]*wireOp
	svcs   map[string]*wireFlight
	phases wirePhases // DynamoDB's requests
}

// wirePhases splits requests' time on the wire (summed over N): taking a connection, writing the
// request, waiting for the answer's first byte (the server's time, and the reader's until it runs),
// and reading the answer's headers. Whether a request's time is the server's or the client's own
// is then measured, not guessed.
type wirePhases struct {
	N      int64         `json:"n"`
	Conn   time.Duration `json:"conn_ns"`
	Write  time.Duration `json:"write_ns"`
	Answer time.Duration `json:"answer_ns"`
	Read   time.Duration `json:"read_ns"`
}

// phaseTrace records one request's phases through net/http's client trace, each as the time since
// start (monotonic, as the request's whole time is) plus one nanosecond, 0 being unset. The
// transport calls the hooks from its own writer and reader goroutines, and the answer can reach
// the caller before the writer's hook has run, so the marks are atomic.
type phaseTrace struct {
	start              time.Time
	conn, wrote, first atomic.Int64
}

func (p *phaseTrace) trace() *httptrace.ClientTrace {
	mark := func(v *atomic.Int64) { v.Store(int64(time.Since(p.start)) + 1) }
	return &httptrace.ClientTrace{
		GotConn:              func(httptrace.GotConnInfo) { mark(&p.conn) },
		WroteRequest:         func(httptrace.WroteRequestInfo) { mark(&p.wrote) },
		GotFirstResponseByte: func() { mark(&p.first) },
	}
}

// wireOp is one operation's figures.
type wireOp struct {
	N     int64         `json:"n"`
	Total time.Duration `json:"total_ns"`
	Max   time.Duration `json:"max_ns"`
	Bytes int64         `json:"request_bytes"` // the requests' bodies
}

// wireFlight is one service's requests in flight over time.
type wireFlight struct {
	inFlight, maxIn int
	first, last     time.Time     // the first and the last change of inFlight
	area            time.Duration // ∫ inFlight dt: over the span, the mean requests in flight
	busy            time.Duration // the time with at least one request in flight
}

// Register adds the timing to a client's stack, innermost in the Deserialize step: it times the
// request's send and the answer's headers, each attempt on its own.
func (w *wireTimes) Register(stack *middleware.Stack) error {
	return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("sinew.wiretimes",
		func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
			svc := awsmiddleware.GetServiceID(ctx)
			start := time.Now()
			var pt *phaseTrace
			if svc == "DynamoDB" {
				pt = &phaseTrace{start: start}
				ctx = httptrace.WithClientTrace(ctx, pt.trace())
			}
			w.change(svc, start, +1)
			out, md, err := next.HandleDeserialize(ctx, in)
			end := time.Now()
			w.change(svc, end, -1)
			w.phase(pt, end)
			var size int64
			if r, ok := in.Request.(*smithyhttp.Request); ok {
				size = r.ContentLength
			}
			w.done(svc+"."+awsmiddleware.GetOperationName(ctx), end.Sub(start), size)
			return out, md, err
		}), middleware.After)
}

// phase adds a DynamoDB request's phases, when it got as far as an answer.
func (w *wireTimes) phase(p *phaseTrace, end time.Time) {
	if p == nil {
		return
	}
	conn, wrote, first := p.conn.Load(), p.wrote.Load(), p.first.Load()
	if conn == 0 || wrote == 0 || first == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.phases.N++
	w.phases.Conn += time.Duration(conn - 1)
	w.phases.Write += time.Duration(wrote - conn)
	w.phases.Answer += time.Duration(first - wrote)
	w.phases.Read += end.Sub(p.start) - time.Duration(first-1)
}

func (w *wireTimes) done(op string, d time.Duration, size int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ops == nil {
		w.ops = map[string]*wireOp{}
	}
	o := w.ops[op]
	if o == nil {
		o = &wireOp{}
		w.ops[op] = o
	}
	o.N++
	o.Total += d
	o.Max = max(o.Max, d)
	o.Bytes += size
}

func (w *wireTimes) change(svc string, now time.Time, by int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.svcs == nil {
		w.svcs = map[string]*wireFlight{}
	}
	f := w.svcs[svc]
	if f == nil {
		f = &wireFlight{first: now, last: now}
		w.svcs[svc] = f
	}
	f.area += time.Duration(f.inFlight) * now.Sub(f.last)
	if f.inFlight > 0 {
		f.busy += now.Sub(f.last)
	}
	f.last = now
	f.inFlight += by
	f.maxIn = max(f.maxIn, f.inFlight)
}

// write puts the figures in dir's aws-wire.json: per operation the requests and their time on the
// wire (nanoseconds), DynamoDB's requests' time by phase, per service the span from its first request to its last, the time with a
// request in flight and the mean and most requests in flight over the span; and the DynamoDB
// gate's bound, the requests that waited for it and their wait.
func (w *wireTimes) write(dir string, gate *ddbGate) error {
	w.mu.Lock()
	type svcOut struct {
		Span  time.Duration `json:"span_ns"`
		Busy  time.Duration `json:"busy_ns"`
		Mean  float64       `json:"mean_in_flight"`
		MaxIn int           `json:"max_in_flight"`
	}
	svcs := map[string]svcOut{}
	for k, f := range w.svcs {
		o := svcOut{Span: f.last.Sub(f.first), Busy: f.busy, MaxIn: f.maxIn}
		if o.Span > 0 {
			o.Mean = float64(f.area) / float64(o.Span)
		}
		svcs[k] = o
	}
	out := map[string]any{"services": svcs, "ops": w.ops, "dynamodb_phases": w.phases}
	if gate != nil {
		out["dynamodb_gate"] = map[string]any{"in_flight": cap(gate.slots), "queued": gate.queued.Load(), "waited_ns": gate.waited.Load()}
	}
	data, err := json.MarshalIndent(out, "", "  ")
	w.mu.Unlock()
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "aws-wire.json"), append(data, '\n'), 0o600)
}
