package rotate_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/merge"
	"sinew/internal/secrets/envelope"
	"sinew/internal/secrets/rotate"
	"sinew/internal/secrets/secretstest"
	"sinew/internal/store"
	"sinew/internal/testenv/ddblocal"
	"sinew/internal/tool"
)

func TestMain(m *testing.M) { ddblocal.Main(m) }

func bg() context.Context { return context.Background() }

// versions is the local-KMS key version of every sealed value in the table (local KMS's ciphertext
// layout: format (1) | key id (16) | version (4, big endian), localaws/kms/blob.go).
func versions(t *testing.T, db *dynamodb.Client, table string) map[string]uint32 {
	t.Helper()
	out := map[string]uint32{}
	res, err := db.Scan(bg(), &dynamodb.ScanInput{TableName: &table})
	if err != nil {
		t.Fatal(err)
	}
	add := func(id string, b []byte) {
		kb, err := envelope.KeyBlob(b)
		if err != nil || len(kb) < 21 {
			t.Fatalf("%s: not an envelope blob: %v", id, err)
		}
		out[id] = binary.BigEndian.Uint32(kb[17:21])
	}
	for _, it := range res.Items {
		id := it["pk"].(*types.AttributeValueMemberS).Value + "|" + it["sk"].(*types.AttributeValueMemberS).Value
		if m, ok := it["sealed"].(*types.AttributeValueMemberM); ok {
			for k, v := range m.Value {
				add(id+"|"+k, v.(*types.AttributeValueMemberB).Value)
			}
		}
		if k, ok := it["kind"].(*types.AttributeValueMemberS); ok && k.Value == "secret" {
			add(id, it["data"].(*types.AttributeValueMemberB).Value)
		}
	}
	return out
}

func TestRotateAfterKeyRotation(t *testing.T) {
	k := secretstest.StartKMS(t)
	env := k.Envelope(t)
	db := ddblocal.Client(t)
	table := ddblocal.NewTable(t, db)
	st := store.New(db, table, env)
	const dev = "dev-rot"

	a, err := st.CreateAgent(bg(), dev, store.Agent{Name: "a", Metadata: map[string]any{
		merge.KeyIntegrationSetup: map[string]any{"send": map[string]any{"password": "smtp-pw"}},
		merge.KeyAPICallSetup:     map[string]any{"call": map[string]any{"headers": map[string]any{"X-Key": "k1"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	tl, err := st.CreateTool(bg(), dev, store.Owner{Kind: store.OwnerAgent, ID: a.ID}, tool.Tool{Name: "send", Type: tool.TypeIntegration,
		Integration: &tool.IntegrationDef{Provider: "email", Setup: map[string]any{"user": "alice"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.PutSecret(bg(), dev, "API_KEY", []byte("sk-123")); err != nil {
		t.Fatal(err)
	}
	before := versions(t, db, table)
	if len(before) != 4 {
		t.Fatalf("%d sealed values, want 4", len(before))
	}
	for id, v := range before {
		if v != 1 {
			t.Fatalf("%s sealed under version %d", id, v)
		}
	}

	if v, err := k.Service.Rotate(bg(), k.KeyID); err != nil || v != 2 {
		t.Fatalf("rotate the key: %d, %v", v, err)
	}
	// The command, configured from the environment as local mode and AWS configure it.
	t.Setenv("SINEW_TABLE", table)
	t.Setenv("SINEW_SECRETS_KEY", k.KeyID)
	t.Setenv("AWS_ENDPOINT_URL_KMS", k.URL)
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", ddblocal.Endpoint(t))
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "local")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	var out bytes.Buffer
	if err := rotate.Run(bg(), &out, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	var c store.ResealCounts
	if err := json.Unmarshal(out.Bytes(), &c); err != nil {
		t.Fatalf("output %q: %v", out.String(), err)
	}
	if c != (store.ResealCounts{Items: 3, Values: 4, Resealed: 4}) {
		t.Errorf("counts %+v", c)
	}
	for id, v := range versions(t, db, table) {
		if v != 2 {
			t.Errorf("%s still under version %d", id, v)
		}
	}
	// Every value opens, and new writes use version 2 too.
	src, err := st.MergeSources(bg(), dev, store.MergeRef{AgentID: a.ID, Tool: "send", ToolID: tl.ID})
	if err != nil {
		t.Fatal(err)
	}
	if src.Agent[merge.KeyIntegrationSetup]["password"] != "smtp-pw" || src.ToolSetup["user"] != "alice" {
		t.Errorf("sources %+v", src)
	}
	if v, err := st.OpenSecret(bg(), dev, "API_KEY"); err != nil || string(v) != "sk-123" {
		t.Errorf("secret %q, %v", v, err)
	}

	// Running it again is harmless: the same values, still version 2.
	c2, err := rotate.Rotate(bg(), db, table, env, slog.New(slog.DiscardHandler))
	if err != nil || c2.Resealed != 4 {
		t.Errorf("second run: %+v, %v", c2, err)
	}
}

func TestRotateReportsFailures(t *testing.T) {
	k := secretstest.StartKMS(t)
	db := ddblocal.Client(t)
	table := ddblocal.NewTable(t, db)
	st := store.New(db, table, k.Envelope(t))
	if _, err := st.PutSecret(bg(), "dev", "GOOD", []byte("v")); err != nil {
		t.Fatal(err)
	}
	// A value sealed under a context that does not match its place (as a corrupted or copied item
	// would be) fails alone; the command reports it and still reseals the rest.
	other, err := k.Envelope(t).Seal(bg(), map[string]string{"developer": "elsewhere"}, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.PutSecret(bg(), "dev", "BAD", []byte("y")); err != nil {
		t.Fatal(err)
	}
	_, err = db.UpdateItem(bg(), &dynamodb.UpdateItemInput{TableName: &table,
		Key:                       map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "DEV#dev"}, "sk": &types.AttributeValueMemberS{Value: "SECRET#BAD"}},
		UpdateExpression:          strp("SET #d = :b"),
		ExpressionAttributeNames:  map[string]string{"#d": "data"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":b": &types.AttributeValueMemberB{Value: other}}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := rotate.Rotate(bg(), db, table, k.Envelope(t), slog.New(slog.DiscardHandler))
	if err == nil || c.Failed != 1 || c.Resealed != 1 {
		t.Fatalf("counts %+v, err %v", c, err)
	}
	if msg := err.Error(); !strings.Contains(msg, "SECRET#BAD") || !strings.Contains(msg, "1 of 2 values failed") {
		t.Errorf("error %q does not name the item and the count", msg)
	}
}

func strp(s string) *string { return &s }
