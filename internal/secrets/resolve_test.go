package secrets_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"sinew/internal/fault"
	"sinew/internal/secrets"
	"sinew/internal/secrets/secretstest"
	"sinew/internal/tool"
)

// counting is the store, counting the secrets it opens.
type counting struct {
	secrets.SecretReader
	n int
}

func (c *counting) OpenSecret(ctx context.Context, dev, name string) ([]byte, error) {
	c.n++
	return c.SecretReader.OpenSecret(ctx, dev, name)
}

const (
	smtpPW = "smtp-pw-7f3a9c21"
	apiKey = "api-key-Q9xZ2mW8"
)

func putSecrets(t *testing.T, e *env, dev string) {
	t.Helper()
	for name, v := range map[string]string{"SMTP_PW": smtpPW, "API_KEY": apiKey} {
		if _, err := e.st.PutSecret(bg(), dev, name, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestResolveReferences(t *testing.T) {
	e := newEnv(t)
	putSecrets(t, e, "dev-1")
	tests := []struct {
		name  string
		in    any
		want  any
		opens int
	}{
		{"object reference", map[string]any{"password": map[string]any{"secret": "SMTP_PW"}}, map[string]any{"password": smtpPW}, 1},
		{"expression", map[string]any{"k": "$ secrets.API_KEY"}, map[string]any{"k": apiKey}, 1},
		{"expression without a space", map[string]any{"k": "$secrets.API_KEY"}, map[string]any{"k": apiKey}, 1},
		{"subscript, single quotes", map[string]any{"k": "$ secrets['API_KEY']"}, map[string]any{"k": apiKey}, 1},
		{"subscript, double quotes", map[string]any{"k": `$ secrets["API_KEY"]`}, map[string]any{"k": apiKey}, 1},
		{"f-string", map[string]any{"Authorization": "$ f'Bearer {secrets.API_KEY}'"}, map[string]any{"Authorization": "Bearer " + apiKey}, 1},
		{"f-string, two fields", map[string]any{"a": `$ f"{secrets.API_KEY}:{ secrets['SMTP_PW'] }"`}, map[string]any{"a": apiKey + ":" + smtpPW}, 2},
		{"nested and repeated: read once", map[string]any{
			"a": []any{map[string]any{"secret": "API_KEY"}, "$ secrets.API_KEY", int64(3)},
			"b": map[string]any{"c": map[string]any{"secret": "API_KEY"}},
		}, map[string]any{
			"a": []any{apiKey, apiKey, int64(3)},
			"b": map[string]any{"c": apiKey},
		}, 1},
		{"no references", map[string]any{"host": "smtp.example.com", "port": int64(587), "tls": true, "x": nil, "e": "$ 1 + 1"},
			map[string]any{"host": "smtp.example.com", "port": int64(587), "tls": true, "x": nil, "e": "$ 1 + 1"}, 0},
		{"an object with more keys is not a reference", map[string]any{"o": map[string]any{"secret": "API_KEY", "other": 1}},
			map[string]any{"o": map[string]any{"secret": "API_KEY", "other": 1}}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &counting{SecretReader: e.st}
			r := secrets.NewRedactor()
			sc := r.Scope()
			defer sc.Close()
			res := secrets.NewResolver(c, "dev-1", sc)
			if got := secrets.HasRefs(tc.in); got != (tc.opens > 0) {
				t.Errorf("HasRefs = %v", got)
			}
			got, err := res.Resolve(bg(), "setup", tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v\nwant %#v", got, tc.want)
			}
			if c.n != tc.opens {
				t.Errorf("%d secrets opened, want %d", c.n, tc.opens)
			}
			if tc.opens > 0 && !strings.Contains(r.Redact(smtpPW+apiKey), secrets.RedactedText) {
				t.Error("resolved values not registered with the scope")
			}
		})
	}
}

func TestResolveMapNeverTakesTheMapForAReference(t *testing.T) {
	e := newEnv(t)
	putSecrets(t, e, "dev-1")
	r := secrets.NewResolver(e.st, "dev-1", nil)
	setup := map[string]any{"secret": "API_KEY"} // a provider setting named "secret"
	got, err := r.ResolveMap(bg(), "setup", setup)
	if err != nil || !reflect.DeepEqual(got, setup) {
		t.Errorf("setup %v, %v", got, err)
	}
	_, meta, err := secrets.ResolveAPICall(bg(), r, nil, map[string]any{
		"headers": map[string]any{"secret": "API_KEY"}, // one header named secret
		"json":    map[string]any{"k": map[string]any{"secret": "API_KEY"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"headers": map[string]any{"secret": "API_KEY"}, "json": map[string]any{"k": apiKey}}
	if !reflect.DeepEqual(meta, want) {
		t.Errorf("api_call setup %v", meta)
	}
}

func TestResolveDoesNotChangeItsInput(t *testing.T) {
	e := newEnv(t)
	putSecrets(t, e, "dev-1")
	in := map[string]any{"a": map[string]any{"secret": "API_KEY"}, "l": []any{"$ secrets.SMTP_PW"}}
	if _, err := secrets.NewResolver(e.st, "dev-1", nil).ResolveMap(bg(), "setup", in); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, map[string]any{"a": map[string]any{"secret": "API_KEY"}, "l": []any{"$ secrets.SMTP_PW"}}) {
		t.Errorf("input changed: %v", in)
	}
}

func TestResolveErrors(t *testing.T) {
	e := newEnv(t)
	putSecrets(t, e, "dev-1")
	putSecrets(t, e, "dev-2")
	tests := []struct {
		name     string
		dev      string
		in       map[string]any
		field    string
		mentions []string
	}{
		{"unknown name", "dev-1", map[string]any{"smtp": map[string]any{"password": map[string]any{"secret": "NOPE"}}},
			"setup.smtp.password", []string{`"NOPE"`, "PUT /secrets/NOPE"}},
		{"unknown name in an expression", "dev-1", map[string]any{"h": []any{"ok", "$ secrets.MISSING"}}, "setup.h[1]", []string{`"MISSING"`}},
		{"another developer's secret is unknown", "dev-3", map[string]any{"k": "$ secrets.API_KEY"}, "setup.k", []string{`"API_KEY"`}},
		{"a bad name", "dev-1", map[string]any{"k": map[string]any{"secret": "1bad name"}}, "setup.k", []string{"secret reference"}},
		{"a reference to a number", "dev-1", map[string]any{"k": map[string]any{"secret": int64(4)}}, "setup.k", []string{"secret reference"}},
		{"python we do not run", "dev-1", map[string]any{"k": "$ secrets.API_KEY + secrets.SMTP_PW"}, "setup.k", []string{"evaluates no other Python"}},
		{"an f-string with other fields", "dev-1", map[string]any{"k": "$ f'{secrets.API_KEY}{os.environ}'"}, "setup.k", []string{"evaluates no other Python"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := secrets.NewResolver(e.st, tc.dev, nil).ResolveMap(bg(), "setup", tc.in)
			if !fault.Is(err, fault.InvalidInput) {
				t.Fatalf("err = %v (kind %s), want InvalidInput", err, fault.KindOf(err))
			}
			if got := fault.FieldOf(err); got != tc.field {
				t.Errorf("field %q, want %q", got, tc.field)
			}
			for _, m := range tc.mentions {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("message %q does not mention %s", err.Error(), m)
				}
			}
			secretstest.AssertNoLeak(t, map[string]string{"error": err.Error()}, []string{smtpPW, apiKey})
		})
	}
}

func TestResolveAPICall(t *testing.T) {
	e := newEnv(t)
	putSecrets(t, e, "dev-1")
	def := &tool.APICallDef{
		Method:  "GET",
		URL:     "https://api.example.com/v1",
		Headers: map[string]string{"Authorization": "$ f'Bearer {secrets.key}'", "X-Plain": "1", "X-Direct": "$ secrets.SMTP_PW"},
		Secrets: map[string]tool.SecretRef{"key": {Name: "API_KEY"}},
	}
	setup := map[string]any{"headers": map[string]any{"X-Setup": map[string]any{"secret": "API_KEY"}}}
	r := secrets.NewRedactor()
	sc := r.Scope()
	gotDef, gotSetup, err := secrets.ResolveAPICall(bg(), secrets.NewResolver(e.st, "dev-1", sc), def, setup)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"Authorization": "Bearer " + apiKey, "X-Plain": "1", "X-Direct": smtpPW}
	if !reflect.DeepEqual(gotDef.Headers, want) {
		t.Errorf("headers %v", gotDef.Headers)
	}
	if def.Headers["Authorization"] != "$ f'Bearer {secrets.key}'" {
		t.Error("the definition was changed")
	}
	if h, _ := gotSetup["headers"].(map[string]any); h["X-Setup"] != apiKey {
		t.Errorf("setup %v", gotSetup)
	}
	if got := r.Redact("Bearer " + apiKey); got != "Bearer <redacted>" {
		t.Errorf("not registered: %q", got)
	}
	sc.Close()
}
