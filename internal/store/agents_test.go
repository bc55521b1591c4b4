package store_test

import (
	"net"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"sinew/internal/fault"
	"sinew/internal/jsonv"
	"sinew/internal/store"
	"sinew/internal/testenv/ddblocal"
)

func TestAgentRoundTripRedactsSetup(t *testing.T) {
	e := newEnv(t)
	in := store.Agent{
		Name: "a", Model: "m", Instructions: []any{"be brief"},
		DefaultSettings: map[string]any{"temperature": 0.5, "max_tokens": int64(10)},
		Metadata: map[string]any{
			"team":                "x",
			"x-integration-args":  map[string]any{"wx": map[string]any{"units": "metric"}},
			"x-integration-setup": map[string]any{"wx": map[string]any{"api_key": "sk-secret"}},
		},
	}
	a := must[*store.Agent](t)(e.s.CreateAgent(ctx(), "dev1", in))
	if in.Metadata["x-integration-setup"].(map[string]any)["wx"].(map[string]any)["api_key"] != "sk-secret" {
		t.Fatal("CreateAgent changed the caller's metadata")
	}
	got := must[*store.Agent](t)(e.s.GetAgent(ctx(), "dev1", a.ID))
	want := map[string]any{
		"team":                "x",
		"x-integration-args":  map[string]any{"wx": map[string]any{"units": "metric"}},
		"x-integration-setup": map[string]any{"wx": map[string]any{"api_key": store.Redacted}},
	}
	if !jsonv.Equal(got.Metadata, want) {
		t.Errorf("metadata %s, want %s", jsonv.EncodeString(got.Metadata), jsonv.EncodeString(want))
	}
	if v := got.DefaultSettings["max_tokens"]; v != int64(10) {
		t.Errorf("max_tokens came back as %T %v, want int64 10", v, v)
	}
	if got.CreatedAt.IsZero() || !got.CreatedAt.Equal(a.CreatedAt) {
		t.Errorf("created_at %v, want %v", got.CreatedAt, a.CreatedAt)
	}

	// Writing the redacted value back keeps the secret; a new key is added; merge sees both.
	up := must[*store.Agent](t)(e.s.UpdateAgent(ctx(), "dev1", a.ID, func(x *store.Agent) error {
		x.Metadata["x-integration-setup"].(map[string]any)["wx"].(map[string]any)["region"] = "eu"
		x.Name = "renamed"
		return nil
	}))
	if up.Name != "renamed" || up.ID != a.ID {
		t.Errorf("update gave %+v", up)
	}
	src := must[*mergeSources](t)(mergeSrc(e, "dev1", store.MergeRef{AgentID: a.ID, Tool: "wx"}))
	wantSetup := map[string]any{"api_key": "sk-secret", "region": "eu"}
	if !jsonv.Equal(src.Agent["x-integration-setup"], wantSetup) {
		t.Errorf("setup %v, want %v", src.Agent["x-integration-setup"], wantSetup)
	}

	// A redacted value with nothing stored under it is refused, naming the field.
	_, err := e.s.UpdateAgent(ctx(), "dev1", a.ID, func(x *store.Agent) error {
		x.Metadata["x-integration-setup"].(map[string]any)["wx"].(map[string]any)["nope"] = store.Redacted
		return nil
	})
	wantKind(t, err, fault.InvalidInput)
	if f := fault.FieldOf(err); f != "metadata.x-integration-setup.wx.nope" {
		t.Errorf("field %q", f)
	}
}

func TestAgentBadInput(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name  string
		dev   string
		agent store.Agent
		field string
	}{
		{"no name", "d", store.Agent{}, "name"},
		{"no developer", "", store.Agent{Name: "a"}, "developer_id"},
		{"setup not an object", "d", store.Agent{Name: "a", Metadata: map[string]any{"x-integration-setup": "k"}}, "metadata.x-integration-setup"},
		{"setup entry not an object", "d", store.Agent{Name: "a", Metadata: map[string]any{"x-api_call-args": map[string]any{"t": int64(1)}}}, "metadata.x-api_call-args.t"},
		{"redacted on create", "d", store.Agent{Name: "a", Metadata: map[string]any{"x-api_call-setup": map[string]any{"t": map[string]any{"k": store.Redacted}}}}, "metadata.x-api_call-setup.t.k"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.s.CreateAgent(ctx(), tc.dev, tc.agent)
			wantKind(t, err, fault.InvalidInput)
			if f := fault.FieldOf(err); f != tc.field {
				t.Errorf("field %q, want %q", f, tc.field)
			}
		})
	}
	_, err := e.s.GetAgent(ctx(), "d", "not-a-uuid")
	wantKind(t, err, fault.InvalidInput)
	_, err = e.s.GetAgent(ctx(), "d", "0190a0a0-0000-7000-8000-000000000000")
	wantKind(t, err, fault.NotFound)
}

func TestOversizedRecordIsTooLarge(t *testing.T) {
	e := newEnv(t)
	_, err := e.s.CreateAgent(ctx(), "d", store.Agent{Name: "a", Instructions: strings.Repeat("x", 420_000)})
	wantKind(t, err, fault.TooLarge)
	agent := e.agent(t, "d")
	sess := must[*store.Session](t)(e.s.CreateSession(ctx(), "d", store.Session{AgentID: agent.ID}))
	_, err = e.s.AppendMessages(ctx(), "d", sess.ID, []store.Message{{Role: "user", Content: strings.Repeat("x", 420_000)}})
	wantKind(t, err, fault.TooLarge)
}

func TestUnreachableDynamoDBIsTransient(t *testing.T) {
	// A port nothing listens on: bind one, then close it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	db := ddblocal.NewClient("http://"+addr, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
	s := store.New(db, "t", nil)
	_, err = s.GetAgent(ctx(), "d", "0190a0a0-0000-7000-8000-000000000000")
	wantKind(t, err, fault.Transient)
}
