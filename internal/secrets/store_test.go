package secrets_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/merge"
	"sinew/internal/secrets/envelope"
	"sinew/internal/secrets/secretstest"
	"sinew/internal/store"
	"sinew/internal/tool"
)

// TestStoreSealsWithTheEnvelope wires the store with the KMS envelope: setup written through agent
// metadata and a tool's integration.setup comes back redacted, is stored as envelope blobs, reads
// back opened through the merge lookup, and "<redacted>" written back keeps the stored value.
func TestStoreSealsWithTheEnvelope(t *testing.T) {
	e := newEnv(t)
	const dev = "dev-store"
	a, err := e.st.CreateAgent(bg(), dev, store.Agent{Name: "a", Metadata: map[string]any{
		merge.KeyIntegrationSetup: map[string]any{"send": map[string]any{"password": "pw-one", "user": "alice"}},
		"plain":                   "visible",
	}})
	if err != nil {
		t.Fatal(err)
	}
	if s := a.Metadata[merge.KeyIntegrationSetup].(map[string]any)["send"].(map[string]any); s["password"] != store.Redacted || s["user"] != store.Redacted || a.Metadata["plain"] != "visible" {
		t.Errorf("answered metadata %v", a.Metadata)
	}
	tl, err := e.st.CreateTool(bg(), dev, store.Owner{Kind: store.OwnerAgent, ID: a.ID}, tool.Tool{Name: "send", Type: tool.TypeIntegration,
		Integration: &tool.IntegrationDef{Provider: "email", Setup: map[string]any{"host": "smtp.example.com", "port": int64(587)}}})
	if err != nil {
		t.Fatal(err)
	}
	if tl.Integration.Setup["host"] != store.Redacted {
		t.Errorf("answered tool setup %v", tl.Integration.Setup)
	}

	// Raw items: the sealed values are envelope blobs under the key's first version.
	res, err := e.db.Scan(bg(), &dynamodb.ScanInput{TableName: &e.table})
	if err != nil {
		t.Fatal(err)
	}
	blobs := 0
	for _, it := range res.Items {
		var vals [][]byte
		if m, ok := it["sealed"].(*types.AttributeValueMemberM); ok {
			for _, v := range m.Value {
				vals = append(vals, v.(*types.AttributeValueMemberB).Value)
			}
		}
		if b, ok := it["data"].(*types.AttributeValueMemberB); ok {
			vals = append(vals, b.Value)
		}
		for _, v := range vals {
			blobs++
			if v[0] != envelope.Format || secretstest.KeyVersion(t, v) != 1 {
				t.Errorf("a stored value is not an envelope blob of version 1")
			}
		}
	}
	if blobs != 4 { // each setting sealed alone
		t.Errorf("%d sealed values stored, want 4", blobs)
	}

	// Keep on write: the answer written back changes nothing; a new value replaces one setting.
	if _, err := e.st.UpdateAgent(bg(), dev, a.ID, func(x *store.Agent) error {
		x.Metadata[merge.KeyIntegrationSetup].(map[string]any)["send"].(map[string]any)["user"] = "bob"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	src, err := e.st.MergeSources(bg(), dev, store.MergeRef{AgentID: a.ID, Tool: "send", ToolID: tl.ID})
	if err != nil {
		t.Fatal(err)
	}
	_, setup := merge.Integration(nil, &tool.IntegrationDef{Provider: "email"}, *src)
	want := map[string]any{"host": "smtp.example.com", "port": int64(587), "password": "pw-one", "user": "bob"}
	for k, v := range want {
		if setup[k] != v {
			t.Errorf("setup[%s] = %v, want %v", k, setup[k], v)
		}
	}
}
