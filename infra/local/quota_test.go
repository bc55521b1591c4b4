package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go/middleware"

	"sinew/internal/localaws/quota"
)

// The quota load: twice each emulated quota at once, through the real local mode.
//
//	StartExecution  2 × the bucket's size, all at once, by an SDK whose retryer backs off
//	Lambda          an inline Map of 2 × the account concurrency of calls at once, each a
//	                DynamoDB putItem to one partition and a call POSTing to the test's server,
//	                retried by the state machine on TooManyRequestsException and
//	                ProvisionedThroughputExceededException, as AWS's retry shape would
//	DynamoDB        2 × a partition's write capacity of PutItems at once, through the SDK
//
// Every call must come through delayed, none lost (every execution, call and item is there) and
// none doubled (each call's side effect and each item exactly once).
const (
	quotaCallsDef = `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.ids","MaxConcurrency":0,"End":true,
  "ItemSelector":{"id.$":"$$.Map.Item.Value","url.$":"$.url"},
  "ItemProcessor":{"StartAt":"Call","States":{
    "Call":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","OutputPath":"$.Payload.id","End":true,
      "Parameters":{"FunctionName":"sinew-test-post","Payload":{"id.$":"$.id","url.$":"$.url","sleepMs":500,"execution.$":"$$.Execution.Name"}},
      "Retry":[{"ErrorEquals":["Lambda.TooManyRequestsException"],"IntervalSeconds":1,"BackoffRate":1.5,"MaxAttempts":20,"MaxDelaySeconds":5,"JitterStrategy":"FULL"}]}}}}}}`
	quotaPutsDef = `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.ids","MaxConcurrency":0,"End":true,
  "ItemProcessor":{"StartAt":"Put","States":{
    "Put":{"Type":"Task","Resource":"arn:aws:states:::dynamodb:putItem","ResultPath":null,"End":true,
      "Parameters":{"TableName":"quota_load","Item":{"pk":{"S":"hot"},"sk":{"S.$":"States.Format('task-{}', $)"}}},
      "Retry":[{"ErrorEquals":["DynamoDB.ProvisionedThroughputExceededException"],"IntervalSeconds":1,"BackoffRate":1.5,"MaxAttempts":20,"MaxDelaySeconds":5,"JitterStrategy":"FULL"}]}}}}}}`
)

const quotaStartDef = `{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`

// quotaShape is how one kind of call fared: attempts per call, and each call's time to success.
type quotaShape struct {
	attempts []int
	delays   []time.Duration
}

func (s *quotaShape) add(attempts int, d time.Duration) {
	s.attempts = append(s.attempts, attempts)
	s.delays = append(s.delays, d)
}

// String is the shape: calls, how many needed a retry, attempts by count, delay p50/p99/max.
func (s *quotaShape) String() string {
	if len(s.attempts) == 0 {
		return "no calls"
	}
	by := map[int]int{}
	retried := 0
	for _, a := range s.attempts {
		by[a]++
		if a > 1 {
			retried++
		}
	}
	keys := make([]int, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d×%d", by[k], k))
	}
	d := slices.Clone(s.delays)
	slices.Sort(d)
	q := func(p float64) time.Duration { return d[min(len(d)-1, int(p*float64(len(d))))] }
	return fmt.Sprintf("%d calls, %d retried; attempts (calls×attempts) %s; time to success p50 %v, p99 %v, max %v",
		len(s.attempts), retried, strings.Join(parts, " "), q(0.5).Round(time.Millisecond), q(0.99).Round(time.Millisecond), d[len(d)-1].Round(time.Millisecond))
}

// quotaResult is one load round's shapes.
type quotaResult struct {
	start, lambda, putTask, put quotaShape
}

// quotaScale is the profile the load runs against: AWS's quotas at a hundredth (tens of calls
// reach them), or at a tenth under make soak (SINEW_SOAK=1).
func quotaScale() string {
	if os.Getenv("SINEW_SOAK") != "" {
		return "aws*0.1"
	}
	return "aws*0.01"
}

// sdkRetryer retries throttles with the SDK's back-off, unrationed, as a caller that must not lose
// a call configures it.
func sdkRetryer() aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = 30
		o.MaxBackoff = 5 * time.Second
		o.RateLimiter = noRateLimit{}
	})
}

type noRateLimit struct{}

func (noRateLimit) GetToken(context.Context, uint) (func() error, error) {
	return func() error { return nil }, nil
}
func (noRateLimit) AddTokens(uint) error { return nil }

func attemptsOf(md middleware.Metadata) int {
	r, ok := retry.GetAttemptResults(md)
	if !ok {
		return 1
	}
	return len(r.Results)
}

// runQuotaLoad runs one round of the load against local mode p (started with --quotas=scale).
func runQuotaLoad(t testing.TB, p *proc, dir string, prof *quota.Profile, round int) quotaResult {
	t.Helper()
	ctx := context.Background()
	var res quotaResult
	fx := &sideEffects{count: map[string]int{}, by: map[string][]string{}}
	srv := httptest.NewServer(fx)
	defer srv.Close()
	c := sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String(p.Endpoints["stepfunctions"]), Credentials: p.Credentials(), Retryer: sdkRetryer()})
	ddb := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(p.Endpoints["aws"]), Credentials: p.Credentials(), Retryer: sdkRetryer()})
	startArn, callsArn, putsArn := setUpQuotaLoad(t, c, ddb, round)
	pk := fmt.Sprintf("hot-%d", round)

	var wg sync.WaitGroup
	var mu sync.Mutex
	fail := func(format string, args ...any) { mu.Lock(); t.Errorf(format, args...); mu.Unlock() }
	// StartExecution: twice the bucket, at once.
	nStart := int(2 * prof.StartExecution.Size)
	for i := range nStart {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := time.Now()
			out, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(startArn), Name: aws.String(fmt.Sprintf("r%d-s%03d", round, i))})
			if err != nil {
				fail("StartExecution %d lost: %v", i, err)
				return
			}
			mu.Lock()
			res.start.add(attemptsOf(out.ResultMetadata), time.Since(t0))
			mu.Unlock()
		}()
	}
	// DynamoDB: twice a partition's write capacity, at once, to one partition.
	nPut := int(2 * prof.PartitionWrite)
	for i := range nPut {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := time.Now()
			out, err := ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("quota_load"), Item: map[string]ddbtypes.AttributeValue{
				"pk": &ddbtypes.AttributeValueMemberS{Value: pk}, "sk": &ddbtypes.AttributeValueMemberS{Value: fmt.Sprintf("put-%03d", i)}}})
			if err != nil {
				fail("PutItem %d lost: %v", i, err)
				return
			}
			mu.Lock()
			res.put.add(attemptsOf(out.ResultMetadata), time.Since(t0))
			mu.Unlock()
		}()
	}
	// Lambda: twice the account concurrency of calls at once, and twice a partition's write
	// capacity of putItem tasks at once, in inline Maps of at most 40 (AWS's bound on an inline
	// Map's concurrency).
	ids := make([]string, 2*prof.LambdaConcurrency)
	for i := range ids {
		ids[i] = fmt.Sprintf("r%d-c%03d", round, i)
	}
	taskIDs := make([]string, int(2*prof.PartitionWrite))
	for i := range taskIDs {
		taskIDs[i] = fmt.Sprintf("r%d-c%03d", round, i)
	}
	var execs []*sfn.StartExecutionOutput
	var batches [][]string
	for kind, all := range map[string][]string{callsArn: ids, putsArn: taskIDs} {
		for b := 0; b*40 < len(all); b++ {
			batch := all[b*40 : min(len(all), (b+1)*40)]
			in, _ := json.Marshal(map[string]any{"ids": batch, "url": srv.URL})
			x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(kind), Input: aws.String(string(in))})
			if err != nil {
				t.Fatal(err)
			}
			execs = append(execs, x)
			if kind == callsArn {
				batches = append(batches, batch)
			} else {
				batches = append(batches, nil)
			}
		}
	}
	wg.Wait()
	for i, x := range execs {
		d := waitEnd(t, c, aws.ToString(x.ExecutionArn))
		if d.Status != types.ExecutionStatusSucceeded {
			t.Fatalf("a Map's execution: %s %s %s", d.Status, aws.ToString(d.Error), aws.ToString(d.Cause))
		}
		if batches[i] != nil {
			var out []string
			if err := json.Unmarshal([]byte(aws.ToString(d.Output)), &out); err != nil || !slices.Equal(out, batches[i]) {
				t.Errorf("the calls' output %s (%v), want every id in order", aws.ToString(d.Output), err)
			}
		}
		taskShapes(t, c, aws.ToString(x.ExecutionArn), &res)
	}
	checkQuotaLoad(t, c, ddb, fx, startArn, round, nStart, ids, pk, nPut, len(taskIDs))
	return res
}

// setUpQuotaLoad makes the load's table and machines on the first round and gives the machines.
func setUpQuotaLoad(t testing.TB, c *sfn.Client, ddb *dynamodb.Client, round int) (startArn, callsArn, putsArn string) {
	t.Helper()
	ctx := context.Background()
	if round == 0 {
		if _, err := ddb.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String("quota_load"), BillingMode: ddbtypes.BillingModePayPerRequest,
			AttributeDefinitions: []ddbtypes.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: ddbtypes.ScalarAttributeTypeS},
				{AttributeName: aws.String("sk"), AttributeType: ddbtypes.ScalarAttributeTypeS}},
			KeySchema: []ddbtypes.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: ddbtypes.KeyTypeHash},
				{AttributeName: aws.String("sk"), KeyType: ddbtypes.KeyTypeRange}}}); err != nil {
			t.Fatal(err)
		}
	}
	arn := func(name, def string) string {
		// Created again each round: the same definition gives the same machine, as in AWS.
		out, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String(name), RoleArn: aws.String(role), Definition: aws.String(def)})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(out.StateMachineArn)
	}
	return arn("quota-start", quotaStartDef), arn("quota-calls", quotaCallsDef), arn("quota-puts", quotaPutsDef)
}

var callIDRE = regexp.MustCompile(`r[0-9]+-c[0-9]+`)

// taskShapes reads the calls' execution history: each call's attempts of its putItem and its
// Lambda task (TaskScheduled events, by the call id in their parameters) and the time from its
// first attempt to its last.
func taskShapes(t testing.TB, c *sfn.Client, arn string, res *quotaResult) {
	t.Helper()
	type key struct {
		put bool
		id  string
	}
	n := map[key]int{}
	first, last := map[key]time.Time{}, map[key]time.Time{}
	p := sfn.NewGetExecutionHistoryPaginator(c, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Events {
			d := e.TaskScheduledEventDetails
			if d == nil {
				continue
			}
			k := key{put: aws.ToString(d.ResourceType) == "dynamodb", id: callIDRE.FindString(aws.ToString(d.Parameters))}
			n[k]++
			at := aws.ToTime(e.Timestamp)
			if _, ok := first[k]; !ok {
				first[k] = at
			}
			last[k] = at
		}
	}
	for k, a := range n {
		s := &res.lambda
		if k.put {
			s = &res.putTask
		}
		s.add(a, last[k].Sub(first[k]))
	}
}

// checkQuotaLoad checks that nothing was lost or doubled: every started execution is listed once,
// every call ran once, every item written is there.
func checkQuotaLoad(t testing.TB, c *sfn.Client, ddb *dynamodb.Client, fx *sideEffects, startArn string, round, nStart int, ids []string, pk string, nPut, nTasks int) {
	t.Helper()
	ctx := context.Background()
	started := 0
	lp := sfn.NewListExecutionsPaginator(c, &sfn.ListExecutionsInput{StateMachineArn: aws.String(startArn)})
	for lp.HasMorePages() {
		page, err := lp.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range page.Executions {
			if strings.HasPrefix(aws.ToString(x.Name), fmt.Sprintf("r%d-s", round)) {
				started++
			}
		}
	}
	if started != nStart {
		t.Errorf("%d executions started, want %d", started, nStart)
	}
	fx.mu.Lock()
	for _, id := range ids {
		if fx.count[id] != 1 {
			t.Errorf("call %s ran %d times, want 1", id, fx.count[id])
		}
	}
	fx.mu.Unlock()
	count := func(pk, prefix string) int {
		q, err := ddb.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("quota_load"), Select: ddbtypes.SelectCount,
			KeyConditionExpression:    aws.String("pk = :p AND begins_with(sk, :s)"),
			ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":p": &ddbtypes.AttributeValueMemberS{Value: pk}, ":s": &ddbtypes.AttributeValueMemberS{Value: prefix}}})
		if err != nil {
			t.Fatal(err)
		}
		return int(q.Count)
	}
	if n := count(pk, "put-"); n != nPut {
		t.Errorf("%d items written by PutItem, want %d", n, nPut)
	}
	if n := count("hot", fmt.Sprintf("task-r%d-", round)); n != nTasks {
		t.Errorf("%d items written by the putItem tasks, want %d", n, nTasks)
	}
}

// Twice each quota at once through local mode with --quotas: every call comes through, delayed by
// the throttles' retries (some of each kind needed one), none lost and none doubled.
func TestQuotasThrottleWithoutLoss(t *testing.T) {
	scale := quotaScale()
	prof, err := quota.Parse(scale)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := startLocal(t, dir, "--in-memory", "--quotas="+scale)
	res := runQuotaLoad(t, p, dir, prof, 0)
	for _, k := range []struct {
		name string
		s    *quotaShape
	}{{"StartExecution (SDK retries ThrottlingException)", &res.start}, {"PutItem (SDK retries ProvisionedThroughputExceededException)", &res.put},
		{"Lambda task (Retry on Lambda.TooManyRequestsException)", &res.lambda}, {"dynamodb:putItem task (Retry on DynamoDB.ProvisionedThroughputExceededException)", &res.putTask}} {
		t.Logf("%s: %s", k.name, k.s)
		if k.s != &res.putTask && slices.Max(k.s.attempts) < 2 {
			t.Errorf("%s: no call was throttled at twice the quota", k.name)
		}
	}
	if !strings.Contains(p.Stderr.String(), "AWS quotas applied") {
		t.Error("local mode did not say which quotas it applies")
	}
}

// BenchmarkQuotaRetries reports the retries' shape under twice each quota (make bench's quotas
// part): attempts per call and the time from a call's first attempt to its success.
func BenchmarkQuotaRetries(b *testing.B) {
	scale := quotaScale()
	prof, err := quota.Parse(scale)
	if err != nil {
		b.Fatal(err)
	}
	p := startLocal(b, b.TempDir(), "--in-memory", "--quotas="+scale)
	var all quotaResult
	round := 0
	for b.Loop() {
		r := runQuotaLoad(b, p, "", prof, round)
		round++
		for _, pair := range [][2]*quotaShape{{&all.start, &r.start}, {&all.put, &r.put}, {&all.lambda, &r.lambda}, {&all.putTask, &r.putTask}} {
			pair[0].attempts = append(pair[0].attempts, pair[1].attempts...)
			pair[0].delays = append(pair[0].delays, pair[1].delays...)
		}
	}
	for _, m := range []struct {
		name string
		s    *quotaShape
	}{{"start", &all.start}, {"put", &all.put}, {"lambda", &all.lambda}, {"puttask", &all.putTask}} {
		a, d := m.s.attempts, slices.Clone(m.s.delays)
		slices.Sort(d)
		sum := 0
		for _, v := range a {
			sum += v
		}
		b.ReportMetric(float64(sum)/float64(len(a)), m.name+"-attempts/call")
		b.ReportMetric(float64(slices.Max(a)), m.name+"-max-attempts")
		b.ReportMetric(float64(d[len(d)/2].Milliseconds()), m.name+"-p50-ms")
		b.ReportMetric(float64(d[min(len(d)-1, len(d)*99/100)].Milliseconds()), m.name+"-p99-ms")
		b.Logf("%s: %s", m.name, m.s)
	}
}
