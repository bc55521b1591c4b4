package settle

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"sinew/internal/fault"
	"sinew/internal/store"
	"sinew/internal/workflow"
)

// emptyTable answers every Query with nothing and counts them; no other request is expected.
type emptyTable struct {
	store.API
	mu      sync.Mutex
	queries []string
}

func (e *emptyTable) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if in.IndexName != nil {
		e.queries = append(e.queries, *in.IndexName)
	}
	return &dynamodb.QueryOutput{}, nil
}

// TestSettleScheduledEvent: a schedule's event makes settle sweep the open index (one Query of
// each shard of GSI2 when nothing is open) and answer what it did; without a sweep configured the
// event is refused, not taken for a status change.
func TestSettleScheduledEvent(t *testing.T) {
	event := `{"version":"0","id":"x","detail-type":"Scheduled Event","source":"aws.events","detail":{}}`
	tests := []struct {
		name    string
		sweep   bool
		wantErr fault.Kind
		queries int
	}{
		{"sweeps", true, "", store.OpenShards},
		{"no sweep configured", false, fault.Internal, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := &emptyTable{}
			st := store.New(db, "t", nil)
			var sweep *workflow.Reconciler
			if tt.sweep {
				sweep = &workflow.Reconciler{Store: st, ARNs: map[string]string{}}
			}
			out, err := Handler(&workflow.Service{Store: st}, sweep)(context.Background(), json.RawMessage(event))
			if tt.wantErr != "" {
				if !fault.Is(err, tt.wantErr) {
					t.Fatalf("error %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st, ok := out.(workflow.SweepStats); !ok || st != (workflow.SweepStats{}) {
				t.Errorf("answer %#v, want empty SweepStats", out)
			}
			if len(db.queries) != tt.queries || db.queries[0] != store.GSI2 {
				t.Errorf("queries %v, want %d of %s", db.queries, tt.queries, store.GSI2)
			}
		})
	}
}
