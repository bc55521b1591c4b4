package store_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"sinew/internal/awscount"
	"sinew/internal/fault"
	"sinew/internal/merge"
	"sinew/internal/store"
	"sinew/internal/store/seal"
	"sinew/internal/testenv/ddblocal"
)

func TestMain(m *testing.M) { ddblocal.Main(m) }

// env is one test's store over its own table, with a request counter in front of the client.
type env struct {
	s     *store.Store
	db    *dynamodb.Client
	table string
	n     *awscount.Counter
	clock *clock
}

type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newEnv(t testing.TB) *env {
	t.Helper()
	n := &awscount.Counter{}
	db := ddblocal.Client(t, func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, n.Register) })
	table := ddblocal.NewTable(t, db)
	sl, err := seal.NewAESGCM(bytes.Repeat([]byte{42}, 32))
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Now().UTC()}
	n.Reset()
	return &env{s: store.New(db, table, sl, store.WithClock(c.now)), db: db, table: table, n: n, clock: c}
}

func ctx() context.Context { return context.Background() }

func must[T any](t testing.TB) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func wantKind(t testing.TB, err error, kind fault.Kind) {
	t.Helper()
	if !fault.Is(err, kind) {
		t.Fatalf("error %v (kind %s), want %s", err, fault.KindOf(err), kind)
	}
}

type mergeSources = merge.Sources

func mergeSrc(e *env, dev string, ref store.MergeRef) (*merge.Sources, error) {
	return e.s.MergeSources(ctx(), dev, ref)
}
