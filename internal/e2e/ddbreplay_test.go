package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"sinew/internal/store"
	"sinew/internal/testenv/ddblocal"
)

// DynamoDB Local's ceiling for the load's own requests: local mode records every DynamoDB request
// its functions send (SINEW_LOCAL_DYNAMODB_RECORD), and the test sends them again, bodies and
// headers as recorded, to a fresh table of sinew's schema in the same DynamoDB Local: the setup's
// requests one at a time, then the load's in their recorded order with a number in flight, timed.
// DynamoDB Local checks that a request has an Authorization header but neither its signature nor
// its date, so the recorded headers serve with a rewritten body.

// recordedReq is one line of local mode's recording (infra/local's ddbRecordLine).
type recordedReq struct {
	Time   int64             `json:"time_ns"`
	Op     string            `json:"op"`
	Header map[string]string `json:"header"`
	Body   string            `json:"body"`
	Status int               `json:"status"`
	Wire   int64             `json:"wire_ns"` // its time on the wire in the load
}

// readRecording reads local mode's recording, in the order the requests were sent.
func readRecording(t testing.TB, path string) []recordedReq {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("local mode's recording of its DynamoDB requests: %v", err)
	}
	defer f.Close()
	var out []recordedReq
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var r recordedReq
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s line %d: %v", path, len(out)+1, err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	// Lines are written as answers come back; a request's place is when it was sent.
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time < out[j].Time })
	return out
}

// marshalJSON is json.Marshal without HTML escaping, so that a rewritten body keeps the recorded
// bytes of everything it does not rewrite.
func marshalJSON(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// retable rewrites a DynamoDB request body's table names to table: TableName, the keys of
// RequestItems (BatchGetItem, BatchWriteItem) and each TransactItems entry's TableName
// (TransactWriteItems, TransactGetItems). A ClientRequestToken, which the SDK gives every
// TransactWriteItems, becomes token: the recorded one, sent again with other parameters, would be
// refused as an idempotent request that changed.
func retable(body []byte, table, token string) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, err
	}
	name, _ := marshalJSON(table)
	var err error
	if _, ok := m["TableName"]; ok {
		m["TableName"] = name
	}
	if _, ok := m["ClientRequestToken"]; ok {
		m["ClientRequestToken"], _ = marshalJSON(token)
	}
	if raw, ok := m["RequestItems"]; ok {
		var items map[string]json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, fmt.Errorf("RequestItems: %w", err)
		}
		if len(items) > 1 {
			return nil, fmt.Errorf("RequestItems of %d tables, want one", len(items))
		}
		out := map[string]json.RawMessage{}
		for _, v := range items {
			out[table] = v
		}
		if m["RequestItems"], err = marshalJSON(out); err != nil {
			return nil, err
		}
	}
	if raw, ok := m["TransactItems"]; ok {
		var items []map[string]map[string]json.RawMessage // [{"Put": {"TableName": ..., ...}}, ...]
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, fmt.Errorf("TransactItems: %w", err)
		}
		for _, it := range items {
			for _, op := range it {
				op["TableName"] = name
			}
		}
		if m["TransactItems"], err = marshalJSON(items); err != nil {
			return nil, err
		}
	}
	return marshalJSON(m)
}

// maxClientRequestToken is the longest ClientRequestToken DynamoDB takes; a longer one is a
// ValidationException.
const maxClientRequestToken = 36

// replayReq is a recorded request made ready for one replay.
type replayReq struct {
	op     string
	header http.Header
	body   []byte
	status int   // the recorded answer's
	at     int64 // when the load sent it, Unix nanoseconds
	wire   int64 // its time on the wire in the load, nanoseconds
}

// prepareReplay makes recs ready to send to table, each with its own ClientRequestToken: run, which
// no other replay has, and the request's index from first.
func prepareReplay(recs []recordedReq, table, run string, first int) ([]replayReq, error) {
	out := make([]replayReq, len(recs))
	for i, r := range recs {
		token := fmt.Sprintf("%s-%d", run, first+i)
		if len(token) > maxClientRequestToken {
			return nil, fmt.Errorf("the token %q is longer than DynamoDB takes (%d)", token, maxClientRequestToken)
		}
		body, err := retable([]byte(r.Body), table, token)
		if err != nil {
			return nil, fmt.Errorf("recorded %s %d: %w", r.Op, first+i, err)
		}
		h := http.Header{}
		for k, v := range r.Header {
			h.Set(k, v)
		}
		out[i] = replayReq{op: r.Op, header: h, body: body, status: r.Status, at: r.Time, wire: r.Wire}
	}
	return out, nil
}

// replayRun is what one replay found.
type replayRun struct {
	Conc        int
	N           int              // the load's requests replayed
	Took        time.Duration    // their time
	Mix         map[string]int64 // the load's requests by operation
	ReqPerSec   float64          // N / Took
	PerExec     float64          // N / the load's executions
	ExecsPerSec float64          // ReqPerSec / PerExec
	Differ      map[string]int   // answers whose status differs from the recording's, by "Op recorded→replayed [error type]"
	Setup       int              // the setup's requests, sent first one at a time
	mu          sync.Mutex       // guards Differ while the replay runs
	failed      atomic.Int64     // requests that got no answer
	firstErr    atomic.Pointer[string]
	cpuFrom     cpuSnap // around the timed part, when measured
	cpuTo       cpuSnap
}

// differ is how many answers differed from the recording.
func (r *replayRun) differ() int {
	n := 0
	for _, v := range r.Differ {
		n += v
	}
	return n
}

func (r *replayRun) String() string {
	ops := make([]string, 0, len(r.Mix))
	for k, v := range r.Mix {
		ops = append(ops, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(ops)
	changes := make([]string, 0, len(r.Differ))
	for k, v := range r.Differ {
		changes = append(changes, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(changes)
	differ := "every status as recorded"
	switch n := r.differ(); {
	case n == 1:
		differ = fmt.Sprintf("1 status differs from the recording (%s)", strings.Join(changes, ", "))
	case n > 1:
		differ = fmt.Sprintf("%d statuses differ from the recording (%s)", n, strings.Join(changes, ", "))
	}
	return fmt.Sprintf("%.0f requests/s for the load's %d recorded requests (%s) in %.1f s, %.2f requests per execution: %.0f executions/s; %s",
		r.ReqPerSec, r.N, strings.Join(ops, ", "), r.Took.Seconds(), r.PerExec, r.ExecsPerSec, differ)
}

// measureReplay replays recs (read by readRecording) to a fresh table in the DynamoDB Local at
// endpoint: those sent before loadBegan one at a time, untimed; the rest with conc in flight,
// timed, executions being the load's size; meter, unless nil, snapshots the processes' CPU around
// the timed part. The table is deleted afterwards.
func measureReplay(t testing.TB, endpoint string, recs []recordedReq, loadBegan time.Time, executions, conc int, meter *cpuMeter) *replayRun {
	t.Helper()
	var r *replayRun
	onReplayTable(t, endpoint, recs, loadBegan, strconv.Itoa(conc), func(setup, load []replayReq) {
		r = runReplay(t, endpoint, setup, load, executions, conc, meter)
	})
	return r
}

// onReplayTable makes a fresh table named for kind in the DynamoDB Local at endpoint, gives run
// recs ready for it (those sent before loadBegan as the setup, the rest as the load) and deletes
// the table after.
func onReplayTable(t testing.TB, endpoint string, recs []recordedReq, loadBegan time.Time, kind string, run func(setup, load []replayReq)) {
	t.Helper()
	ctx := context.Background()
	admin := ddblocal.NewClient(endpoint)
	id := strconv.FormatInt(time.Now().UnixNano(), 36)
	table := fmt.Sprintf("sinew-replay-%s-%s", kind, id)
	if err := store.CreateTable(ctx, admin, table); err != nil {
		t.Fatalf("the replay's table: %v", err)
	}
	defer func() {
		if _, err := admin.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(table)}); err != nil {
			t.Errorf("deleting the replay's table %s: %v", table, err)
		}
	}()
	split := sort.Search(len(recs), func(i int) bool { return recs[i].Time >= loadBegan.UnixNano() })
	setup, err := prepareReplay(recs[:split], table, id, 0)
	if err == nil {
		var load []replayReq
		if load, err = prepareReplay(recs[split:], table, id, split); err == nil {
			run(setup, load)
			return
		}
	}
	t.Fatalf("preparing the replay: %v", err)
}

// reorderable are the errors a replay in another order than the load's can meet where the load
// did not: a condition or a transaction meeting the items as another order left them. Any other
// refusal (a ValidationException, say) is the replay's own mistake, and a cheaper answer than the
// request's would have been.
var reorderable = map[string]bool{"ConditionalCheckFailedException": true, "TransactionCanceledException": true, "TransactionConflictException": true}

// runReplay sends setup one at a time, then load with conc in flight, each worker taking the
// next request in order.
func runReplay(t testing.TB, endpoint string, setup, load []replayReq, executions, conc int, meter *cpuMeter) *replayRun {
	if len(load) == 0 {
		t.Fatal("no DynamoDB requests recorded during the load")
	}
	ctx := context.Background()
	hc := pooledClient()
	r := &replayRun{Conc: conc, N: len(load), Setup: len(setup), Mix: map[string]int64{}, Differ: map[string]int{}}
	for _, q := range load {
		r.Mix[q.op]++
	}
	for _, q := range setup {
		r.count(q)(sendRecorded(ctx, hc, endpoint, q))
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	if meter != nil {
		r.cpuFrom = meter.snap()
	}
	began := time.Now()
	for range conc {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(load)); i = next.Add(1) - 1 {
				r.count(load[i])(sendRecorded(ctx, hc, endpoint, load[i]))
			}
		})
	}
	wg.Wait()
	r.Took = time.Since(began)
	if meter != nil {
		r.cpuTo = meter.snap()
	}
	// The window, in Unix seconds, lines the replay up with a CPU sampler's record of the processes.
	t.Logf("replay of the recorded requests, %d in flight, from %.1f to %.1f", conc, float64(began.UnixMilli())/1000, float64(time.Now().UnixMilli())/1000)
	r.check(t, len(setup)+len(load))
	r.ReqPerSec = float64(r.N) / r.Took.Seconds()
	r.PerExec = float64(r.N) / float64(executions)
	r.ExecsPerSec = r.ReqPerSec / r.PerExec
	return r
}

// count is how r counts q's answer: a request with no answer, or a refusal no reordering
// explains, fails the replay; a status other than the recording's is counted.
func (r *replayRun) count(q replayReq) func(status int, kind string, err error) {
	return func(status int, kind string, err error) {
		if err != nil {
			r.failed.Add(1)
			msg := err.Error()
			r.firstErr.CompareAndSwap(nil, &msg)
		}
		if status == q.status {
			return
		}
		r.mu.Lock()
		r.Differ[strings.TrimSpace(fmt.Sprintf("%s %d→%d %s", q.op, q.status, status, kind))]++
		r.mu.Unlock()
		if err == nil && status >= 400 && status < 500 && !reorderable[kind] {
			r.failed.Add(1)
			msg := fmt.Sprintf("%s answered %d %s where the recording has %d", q.op, status, kind, q.status)
			r.firstErr.CompareAndSwap(nil, &msg)
		}
	}
}

// check fails t when any of the sent requests failed.
func (r *replayRun) check(t testing.TB, sent int) {
	t.Helper()
	if f := r.failed.Load(); f > 0 {
		t.Errorf("the replay of the recorded requests: %d of %d got no answer or were refused as no reordering explains, the first: %s",
			f, sent, *r.firstErr.Load())
	}
}

// sendRecorded sends one recorded request and answers its status, and for an error its type
// (the __type's name).
func sendRecorded(ctx context.Context, hc *http.Client, endpoint string, q replayReq) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint+"/", bytes.NewReader(q.body))
	if err != nil {
		return 0, "", err
	}
	req.Header = q.header
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", fmt.Errorf("%s: %w", q.op, err)
	}
	var kind string
	if resp.StatusCode >= 300 {
		var e struct {
			Type string `json:"__type"`
		}
		err = json.NewDecoder(resp.Body).Decode(&e)
		kind = e.Type[strings.LastIndex(e.Type, "#")+1:]
	}
	_, cerr := io.Copy(io.Discard, resp.Body)
	if err = errors.Join(err, cerr, resp.Body.Close()); err != nil {
		return resp.StatusCode, kind, fmt.Errorf("%s: reading the answer: %w", q.op, err)
	}
	return resp.StatusCode, kind, nil
}
