package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/store"
	"sinew/internal/testenv/ddblocal"
)

// A synthetic ceiling for a load: the requests per second DynamoDB Local serves for made-up
// requests in the load's mix of DynamoDB operations (the counts local mode's functions sent), with
// items of the size sinew writes, and the executions per second that rate allows at the load's
// DynamoDB requests per execution. It warms DynamoDB Local's JVM before the load, when there is
// no recording yet, and after it sits beside the ceiling proper, the replay of the load's own
// recorded requests (ddbreplay_test.go).

// ceilingPayload is the size of what the replay writes: about what a call or execution record holds.
var ceilingPayload = strings.Repeat("x", 600)

type ddbCeiling struct {
	ReqPerSec   float64 // DynamoDB requests per second served for the mix
	PerExec     float64 // DynamoDB requests per execution in the load
	ExecsPerSec float64 // ReqPerSec / PerExec
	Mix         map[string]int64
}

// measureDDBCeiling replays the DynamoDB part of mix ("DynamoDB.<Operation>" counts) for d with
// conc requests in flight, executions being the load's size.
func measureDDBCeiling(t testing.TB, endpoint string, mix map[string]int64, executions, conc int, d time.Duration) ddbCeiling {
	ctx := context.Background()
	c := ddblocal.NewClient(endpoint, func(o *dynamodb.Options) { o.HTTPClient = pooledClient() })
	ops, weights := []string{}, []int64{}
	var total int64
	out := ddbCeiling{Mix: map[string]int64{}}
	for k, v := range mix {
		if op, ok := strings.CutPrefix(k, "DynamoDB."); ok && v > 0 {
			ops, weights = append(ops, op), append(weights, v)
			total += v
			out.Mix[op] = v
		}
	}
	if total == 0 {
		t.Fatalf("no DynamoDB requests in the load's counts %v", mix)
	}
	out.PerExec = float64(total) / float64(executions)
	r := &ceilingRun{c: c, table: "sinew", run: fmt.Sprintf("ceiling-%d", time.Now().UnixNano())}
	r.seed(ctx, t, 64)
	pick := func(rng *rand.Rand) string {
		n := rng.Int64N(total)
		for i, w := range weights {
			if n < w {
				return ops[i]
			}
			n -= w
		}
		return ops[len(ops)-1]
	}
	var done, failed atomic.Int64
	var firstErr atomic.Value
	stop := time.Now().Add(d)
	var wg sync.WaitGroup
	began := time.Now()
	for w := range conc {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), uint64(began.UnixNano())))
			for i := 0; time.Now().Before(stop); i++ {
				if err := r.do(ctx, pick(rng), rng, fmt.Sprintf("%d-%d", w, i)); err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	took := time.Since(began)
	// The window, in Unix seconds, lines the replay up with a CPU sampler's record of the processes.
	t.Logf("replay of %d in flight from %.1f to %.1f", conc, float64(began.UnixMilli())/1000, float64(time.Now().UnixMilli())/1000)
	if f := failed.Load(); f > 0 {
		t.Errorf("the DynamoDB ceiling replay: %d of %d requests failed, the first: %v", f, f+done.Load(), firstErr.Load())
	}
	out.ReqPerSec = float64(done.Load()) / took.Seconds()
	out.ExecsPerSec = out.ReqPerSec / out.PerExec
	return out
}

func (c ddbCeiling) String() string {
	keys := make([]string, 0, len(c.Mix))
	for k := range c.Mix {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, c.Mix[k]))
	}
	return fmt.Sprintf("%.0f requests/s for the mix (%s), %.2f requests per execution: %.0f executions/s",
		c.ReqPerSec, strings.Join(parts, ", "), c.PerExec, c.ExecsPerSec)
}

// ceilingRun issues requests shaped like sinew's: reads of seeded items, conditional puts of new
// ones, updates of seeded ones, queries of a seeded partition, and two-item transactions.
type ceilingRun struct {
	c     *dynamodb.Client
	table string
	run   string
	keys  []map[string]types.AttributeValue
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func (r *ceilingRun) key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{store.AttrPK: s(pk), store.AttrSK: s(sk)}
}

func (r *ceilingRun) item(pk, sk string) map[string]types.AttributeValue {
	it := r.key(pk, sk)
	it[store.AttrGSI1PK], it[store.AttrGSI1SK] = s(r.run+"#g"), s(sk)
	it["payload"], it["status"] = s(ceilingPayload), s("pending")
	return it
}

func (r *ceilingRun) seed(ctx context.Context, t testing.TB, n int) {
	for i := range n {
		it := r.item(fmt.Sprintf("%s#%d", r.run, i), "META")
		if _, err := r.c.PutItem(ctx, &dynamodb.PutItemInput{TableName: &r.table, Item: it}); err != nil {
			t.Fatalf("seeding the DynamoDB ceiling replay: %v", err)
		}
		r.keys = append(r.keys, r.key(fmt.Sprintf("%s#%d", r.run, i), "META"))
	}
}

func (r *ceilingRun) do(ctx context.Context, op string, rng *rand.Rand, id string) error {
	i := rng.IntN(len(r.keys))
	k := r.keys[i]
	var err error
	switch op {
	case "GetItem":
		_, err = r.c.GetItem(ctx, &dynamodb.GetItemInput{TableName: &r.table, Key: k, ConsistentRead: aws.Bool(true)})
	case "BatchGetItem":
		keys := []map[string]types.AttributeValue{k, r.keys[(i+1+rng.IntN(len(r.keys)-1))%len(r.keys)]}
		_, err = r.c.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{r.table: {Keys: keys, ConsistentRead: aws.Bool(true)}}})
	case "PutItem":
		_, err = r.c.PutItem(ctx, &dynamodb.PutItemInput{TableName: &r.table, Item: r.item(r.run+"#new#"+id, "META"),
			ConditionExpression: aws.String("attribute_not_exists(pk)")})
	case "UpdateItem":
		_, err = r.c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &r.table, Key: k,
			UpdateExpression:          aws.String("SET #st = :s, #u = :u"),
			ExpressionAttributeNames:  map[string]string{"#st": "status", "#u": "updated"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":s": s("done"), ":u": s(id)}})
	case "Query":
		_, err = r.c.Query(ctx, &dynamodb.QueryInput{TableName: &r.table, IndexName: aws.String(store.GSI1), Limit: aws.Int32(100),
			KeyConditionExpression:    aws.String("#g = :g"),
			ExpressionAttributeNames:  map[string]string{"#g": store.AttrGSI1PK},
			ExpressionAttributeValues: map[string]types.AttributeValue{":g": s(r.run + "#g")}})
	case "TransactWriteItems":
		_, err = r.c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Put: &types.Put{TableName: &r.table, Item: r.item(r.run+"#tx#"+id, "A"), ConditionExpression: aws.String("attribute_not_exists(pk)")}},
			{Put: &types.Put{TableName: &r.table, Item: r.item(r.run+"#tx#"+id, "B"), ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		}})
	default:
		// An operation the replay has no shape for is read as a GetItem, the cheapest request.
		_, err = r.c.GetItem(ctx, &dynamodb.GetItemInput{TableName: &r.table, Key: k})
	}
	return err
}
