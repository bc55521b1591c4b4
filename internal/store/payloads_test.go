package store_test

import (
	"bytes"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/store"
)

func TestPayloadRoundTrip(t *testing.T) {
	e := newEnv(t)
	big := make([]byte, 1<<20)
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{0, 1, store.ChunkSize, store.ChunkSize + 1, 1 << 20} {
		ref := must[string](t)(e.s.PutPayload(ctx(), "d", big[:size], 0))
		got := must[[]byte](t)(e.s.GetPayload(ctx(), "d", ref))
		if !bytes.Equal(got, big[:size]) {
			t.Errorf("%d bytes came back as %d different ones", size, len(got))
		}
	}
	// Every chunk fits DynamoDB's item limit with room to spare.
	for _, it := range e.scan(t) {
		if b, ok := it["data"].(*types.AttributeValueMemberB); ok && len(b.Value) > store.ChunkSize {
			t.Errorf("a chunk of %d bytes", len(b.Value))
		}
	}

	// Values: small ones travel inline, large ones as a reference that reads back.
	small := map[string]any{"x": int64(1)}
	if v := must[any](t)(e.s.StoreValue(ctx(), "d", small, time.Hour)); !jsonv.Equal(v, small) {
		t.Errorf("small value became %v", v)
	}
	large := map[string]any{"text": strings.Repeat("é", store.InlineLimit), "n": int64(3)}
	v := must[any](t)(e.s.StoreValue(ctx(), "d", large, time.Hour))
	ref, ok := store.RefOf(v)
	if !ok || v.(map[string]any)["bytes"].(int64) <= store.InlineLimit {
		t.Fatalf("large value stored as %v", v)
	}
	back := must[any](t)(e.s.LoadValue(ctx(), "d", v))
	if !jsonv.Equal(back, large) {
		t.Error("large value did not read back equal")
	}
	raw := e.rawItem(t, "DEV#d#PAYLOAD#"+ref, "MANIFEST")
	if ttlOf(t, raw) != e.clock.t.Add(time.Hour).Unix() {
		t.Errorf("payload ttl %d", ttlOf(t, raw))
	}

	// A write that stopped before its manifest is not a value.
	if _, err := e.db.DeleteItem(ctx(), &dynamodb.DeleteItemInput{TableName: &e.table, Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "DEV#d#PAYLOAD#" + ref}, "sk": &types.AttributeValueMemberS{Value: "MANIFEST"},
	}}); err != nil {
		t.Fatal(err)
	}
	_, err := e.s.GetPayload(ctx(), "d", ref)
	wantKind(t, err, fault.NotFound)
	_, err = e.s.PutPayload(ctx(), "d", make([]byte, store.MaxPayload+1), 0)
	wantKind(t, err, fault.TooLarge)
}
