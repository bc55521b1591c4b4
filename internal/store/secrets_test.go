package store_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"sinew/internal/fault"
	"sinew/internal/store"
)

func TestSecrets(t *testing.T) {
	e := newEnv(t)
	first := must[*store.Secret](t)(e.s.PutSecret(ctx(), "d", "SMTP_PASSWORD", []byte("s3cret-value")))
	e.clock.advance(time.Minute)
	second := must[*store.Secret](t)(e.s.PutSecret(ctx(), "d", "SMTP_PASSWORD", []byte("n3w-value")))
	if !second.CreatedAt.Equal(first.CreatedAt) || !second.UpdatedAt.After(first.UpdatedAt) {
		t.Errorf("replaced secret: created %v→%v updated %v→%v", first.CreatedAt, second.CreatedAt, first.UpdatedAt, second.UpdatedAt)
	}
	if v := must[[]byte](t)(e.s.OpenSecret(ctx(), "d", "SMTP_PASSWORD")); string(v) != "n3w-value" {
		t.Errorf("opened %q", v)
	}
	for _, it := range e.scan(t) {
		if b, ok := it["data"].(*types.AttributeValueMemberB); ok && bytes.Contains(b.Value, []byte("n3w-value")) {
			t.Error("the secret is stored in the clear")
		}
	}
	l := must[*store.List[store.Secret]](t)(e.s.ListSecrets(ctx(), "d", store.Page{}))
	if len(l.Items) != 1 || l.Items[0].Name != "SMTP_PASSWORD" {
		t.Errorf("list %+v", l.Items)
	}
	_, err := e.s.PutSecret(ctx(), "d", "bad-name", []byte("x"))
	wantKind(t, err, fault.InvalidInput)
	if err := e.s.DeleteSecret(ctx(), "d", "SMTP_PASSWORD"); err != nil {
		t.Fatal(err)
	}
	_, err = e.s.OpenSecret(ctx(), "d", "SMTP_PASSWORD")
	wantKind(t, err, fault.NotFound)
	wantKind(t, e.s.DeleteSecret(ctx(), "d", "SMTP_PASSWORD"), fault.NotFound)
}

func TestFlags(t *testing.T) {
	e := newEnv(t)
	defaults := must[map[string]bool](t)(store.ParseFlagDefaults("auto_run_tools_chat=false, auto_tool_calls_prompt_step=true"))
	if err := e.s.SetFlag(ctx(), "d", "auto_run_tools_chat", true); err != nil {
		t.Fatal(err)
	}
	got := must[map[string]bool](t)(e.s.Flags(ctx(), "d", defaults))
	if !got["auto_run_tools_chat"] || !got["auto_tool_calls_prompt_step"] || len(got) != 2 {
		t.Errorf("flags %v", got)
	}
	if other := must[map[string]bool](t)(e.s.Flags(ctx(), "other", defaults)); other["auto_run_tools_chat"] {
		t.Error("another developer's flag leaked")
	}
	wantKind(t, e.s.SetFlag(ctx(), "d", "Bad Name", true), fault.InvalidInput)
}

func TestParseFlagDefaults(t *testing.T) {
	tests := []struct {
		in   string
		want map[string]bool
		ok   bool
	}{
		{"", map[string]bool{}, true},
		{"a=true", map[string]bool{"a": true}, true},
		{" a = false ,b=1,", map[string]bool{"a": false, "b": true}, true},
		{"a", nil, false},
		{"a=maybe", nil, false},
		{"A=true", nil, false},
	}
	for _, tc := range tests {
		got, err := store.ParseFlagDefaults(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("%q: error %v", tc.in, err)
			continue
		}
		if tc.ok && len(got) != len(tc.want) {
			t.Errorf("%q: %v, want %v", tc.in, got, tc.want)
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%q: %v, want %v", tc.in, got, tc.want)
			}
		}
	}
}
