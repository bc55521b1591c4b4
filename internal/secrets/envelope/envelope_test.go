package envelope_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/kms"

	"sinew/internal/fault"
	"sinew/internal/secrets/envelope"
	"sinew/internal/secrets/secretstest"
)

func bg() context.Context { return context.Background() }

var toolCtx = map[string]string{"developer": "dev-1", "owner": "agent/0190", "tool": "send_email", "field": "x-integration-setup"}

func TestSealOpenRoundTrip(t *testing.T) {
	k := secretstest.StartKMS(t)
	e := k.Envelope(t)
	tests := []struct {
		name string
		pt   []byte
		ctx  map[string]string
	}{
		{"empty value", []byte{}, toolCtx},
		{"json setup", []byte(`{"password":"hunter2-but-longer"}`), toolCtx},
		{"developer secret", []byte("sk-live-0123456789"), map[string]string{"developer": "dev-1", "owner": "secret", "tool": "OPENAI_KEY"}},
		{"64 KiB", bytes.Repeat([]byte{0xa5}, 64<<10), toolCtx},
		{"unicode context", []byte("v"), map[string]string{"developer": "dév/ü#1", "owner": "task/x", "tool": "t"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sealed, err := e.Seal(bg(), tc.ctx, tc.pt)
			if err != nil {
				t.Fatal(err)
			}
			if sealed[0] != envelope.Format {
				t.Errorf("format byte %d", sealed[0])
			}
			if len(tc.pt) >= 8 && bytes.Contains(sealed, tc.pt) {
				t.Error("the plaintext appears in the sealed blob")
			}
			got, err := e.Open(bg(), tc.ctx, sealed)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tc.pt) {
				t.Errorf("opened %d bytes, want %d", len(got), len(tc.pt))
			}
		})
	}
}

func TestEachSealHasItsOwnDataKey(t *testing.T) {
	e := secretstest.StartKMS(t).Envelope(t)
	a, err := e.Seal(bg(), toolCtx, []byte("same"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.Seal(bg(), toolCtx, []byte("same"))
	if err != nil {
		t.Fatal(err)
	}
	ka, _ := envelope.KeyBlob(a)
	kb, _ := envelope.KeyBlob(b)
	if bytes.Equal(ka, kb) || bytes.Equal(a, b) {
		t.Error("two seals share a data key or a blob")
	}
}

func TestOpenRefusesAnotherContext(t *testing.T) {
	e := secretstest.StartKMS(t).Envelope(t)
	secret := []byte("smtp-password-0042")
	sealed, err := e.Seal(bg(), toolCtx, secret)
	if err != nil {
		t.Fatal(err)
	}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range toolCtx {
			m[a] = b
		}
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name string
		ctx  map[string]string
	}{
		{"another developer", with("developer", "dev-2")},
		{"another owner", with("owner", "agent/0191")},
		{"another tool", with("tool", "other")},
		{"another field", with("field", "x-api_call-setup")},
		{"a missing pair", with("field", "")},
		{"an extra pair", with("extra", "1")},
		{"no context", map[string]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pt, err := e.Open(bg(), tc.ctx, sealed)
			if err == nil {
				t.Fatalf("opened under another context: %q", pt)
			}
			if !fault.Is(err, fault.Internal) {
				t.Errorf("kind %s, want Internal: %v", fault.KindOf(err), err)
			}
			if strings.Contains(err.Error(), string(secret)) {
				t.Error("the error carries the value")
			}
		})
	}
}

func TestOpenRefusesTamperedBlobs(t *testing.T) {
	e := secretstest.StartKMS(t).Envelope(t)
	sealed, err := e.Seal(bg(), toolCtx, []byte("a value worth tampering with"))
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := envelope.KeyBlob(sealed)
	keyStart := len(sealed) - len(kb) - 12 - 16 - len("a value worth tampering with") // where the key blob starts
	tests := []struct {
		name string
		blob func() []byte
	}{
		{"empty", func() []byte { return nil }},
		{"another format", func() []byte { c := bytes.Clone(sealed); c[0] = 1; return c }},
		{"truncated", func() []byte { return sealed[:len(sealed)-20] }},
		{"key blob changed", func() []byte { c := bytes.Clone(sealed); c[keyStart+30]++; return c }},
		{"nonce changed", func() []byte { c := bytes.Clone(sealed); c[keyStart+len(kb)]++; return c }},
		{"ciphertext changed", func() []byte { c := bytes.Clone(sealed); c[len(c)-20]++; return c }},
		{"tag changed", func() []byte { c := bytes.Clone(sealed); c[len(c)-1]++; return c }},
		{"huge length prefix", func() []byte { return append([]byte{envelope.Format, 0xff, 0xff, 0xff, 0xff, 0x0f}, sealed[2:]...) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := e.Open(bg(), toolCtx, tc.blob()); !fault.Is(err, fault.Internal) {
				t.Fatalf("err = %v, want an Internal fault", err)
			}
		})
	}
}

func TestSealRefusesEmptyContextAndNoKey(t *testing.T) {
	k := secretstest.StartKMS(t)
	if _, err := k.Envelope(t).Seal(bg(), nil, []byte("x")); !fault.Is(err, fault.Internal) {
		t.Errorf("empty context: err = %v", err)
	}
	if _, err := envelope.NewEnvelope(k.Client, ""); !fault.Is(err, fault.Internal) || !strings.Contains(err.Error(), "SINEW_SECRETS_KEY") {
		t.Errorf("no key: err = %v", err)
	}
	e, err := envelope.NewEnvelope(k.Client, "alias/no-such-key")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Seal(bg(), toolCtx, []byte("x")); !fault.Is(err, fault.Internal) || !strings.Contains(err.Error(), "NotFoundException") {
		t.Errorf("unknown key: err = %v", err)
	}
}

// zeroCheck is the real client, keeping the data keys it handed out so the test can see that the
// envelope wiped them.
type zeroCheck struct {
	envelope.KMS
	keys [][]byte
}

func (z *zeroCheck) GenerateDataKey(ctx context.Context, in *kms.GenerateDataKeyInput, o ...func(*kms.Options)) (*kms.GenerateDataKeyOutput, error) {
	out, err := z.KMS.GenerateDataKey(ctx, in, o...)
	if err == nil {
		z.keys = append(z.keys, out.Plaintext)
	}
	return out, err
}

func (z *zeroCheck) Decrypt(ctx context.Context, in *kms.DecryptInput, o ...func(*kms.Options)) (*kms.DecryptOutput, error) {
	out, err := z.KMS.Decrypt(ctx, in, o...)
	if err == nil {
		z.keys = append(z.keys, out.Plaintext)
	}
	return out, err
}

func TestDataKeysAreZeroedAfterUse(t *testing.T) {
	k := secretstest.StartKMS(t)
	z := &zeroCheck{KMS: k.Client}
	e, err := envelope.NewEnvelope(z, k.KeyID)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := e.Seal(bg(), toolCtx, []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Open(bg(), toolCtx, sealed); err != nil {
		t.Fatal(err)
	}
	if len(z.keys) != 2 {
		t.Fatalf("%d data keys seen, want 2", len(z.keys))
	}
	for i, dk := range z.keys {
		if len(dk) != 32 || !bytes.Equal(dk, make([]byte, 32)) {
			t.Errorf("data key %d not zeroed after use", i)
		}
	}
}

func TestResealMovesToTheNewestKeyVersion(t *testing.T) {
	k := secretstest.StartKMS(t)
	e := k.Envelope(t)
	sealed, err := e.Seal(bg(), toolCtx, []byte("rotate me please"))
	if err != nil {
		t.Fatal(err)
	}
	if v := secretstest.KeyVersion(t, sealed); v != 1 {
		t.Fatalf("sealed under version %d", v)
	}
	if _, err := k.Service.Rotate(bg(), k.KeyID); err != nil {
		t.Fatal(err)
	}
	re, err := e.Reseal(bg(), toolCtx, sealed)
	if err != nil {
		t.Fatal(err)
	}
	if v := secretstest.KeyVersion(t, re); v != 2 {
		t.Errorf("resealed under version %d, want 2", v)
	}
	for name, blob := range map[string][]byte{"old": sealed, "resealed": re} {
		pt, err := e.Open(bg(), toolCtx, blob)
		if err != nil || string(pt) != "rotate me please" {
			t.Errorf("%s blob: %q, %v", name, pt, err)
		}
	}
	// The context still binds: a reseal under another context fails and changes nothing.
	if _, err := e.Reseal(bg(), map[string]string{"developer": "dev-2"}, sealed); !fault.Is(err, fault.Internal) {
		t.Errorf("reseal under another context: %v", err)
	}
}
