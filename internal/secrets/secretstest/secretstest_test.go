package secretstest_test

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"

	"sinew/internal/secrets/secretstest"
)

func TestFindLeaksFindsEveryForm(t *testing.T) {
	const v = `pa"ss word/+?=`
	tests := []struct {
		name, hay, form string
	}{
		{"plain", "x " + v + " y", "plain"},
		{"json", `{"k": "pa\"ss word/+?="}`, "json"},
		{"base64", "B: " + base64.StdEncoding.EncodeToString([]byte(v)), "base64"},
		{"base64url", base64.RawURLEncoding.EncodeToString([]byte(v)), "base64"},
		{"url", "q=" + url.QueryEscape(v), "url"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := secretstest.FindLeaks(map[string]string{"h": tc.hay}, []string{"unrelated-value", v})
			if len(got) == 0 {
				t.Fatal("no leak found")
			}
			found := false
			for _, l := range got {
				found = found || (l.Value == 1 && l.Haystack == "h" && strings.HasPrefix(l.Form, tc.form))
			}
			if !found {
				t.Errorf("leaks %+v, want value 1 in %s form", got, tc.form)
			}
		})
	}
	if got := secretstest.FindLeaks(map[string]string{"h": "nothing here <redacted>"}, []string{v}); len(got) != 0 {
		t.Errorf("false hits: %+v", got)
	}
}

// A secret inside a larger binary value (a stored payload chunk) is found at every offset, in
// both base64 alphabets: its base64 at offset 1 or 2 shares no substring with its own base64.
func TestFindLeaksFindsASecretAtAnyOffsetInABinaryValue(t *testing.T) {
	const v = "sk-live-0123456789abcdef"
	rng := rand.New(rand.NewPCG(1, 2))
	for _, enc := range []struct {
		name string
		e    *base64.Encoding
	}{{"std", base64.StdEncoding}, {"url", base64.RawURLEncoding}} {
		for off := range 7 {
			for tail := range 3 {
				blob := make([]byte, off+len(v)+tail+40)
				for i := range blob {
					blob[i] = byte(rng.IntN(256))
				}
				copy(blob[off:], v)
				hay := `{"chunk":"` + enc.e.EncodeToString(blob) + `"}`
				if got := secretstest.FindLeaks(map[string]string{"item": hay}, []string{v}); len(got) == 0 {
					t.Errorf("%s: secret at offset %d (tail %d) of a binary value not found", enc.name, off, tail)
				}
			}
		}
	}
	blob := make([]byte, 200)
	for i := range blob {
		blob[i] = byte(rng.IntN(256))
	}
	if got := secretstest.FindLeaks(map[string]string{"item": base64.StdEncoding.EncodeToString(blob)}, []string{v}); len(got) != 0 {
		t.Errorf("false hits in a blob without the secret: %+v", got)
	}
}

// A failing AssertNoLeak reports without printing any value.
func TestAssertNoLeakMasksValues(t *testing.T) {
	rec := &recorder{TB: t}
	secretstest.AssertNoLeak(rec, map[string]string{"logs": "a=first-value-1234 b=second-value-5678"}, []string{"first-value-1234", "second-value-5678"})
	if len(rec.msgs) != 2 {
		t.Fatalf("%d failures, want 2: %q", len(rec.msgs), rec.msgs)
	}
	leaks := secretstest.FindLeaks(map[string]string{"report": rec.msgs[0] + rec.msgs[1]}, []string{"first-value-1234", "second-value-5678"})
	if len(leaks) != 0 {
		t.Errorf("the report carries values: %q", rec.msgs)
	}
}

type recorder struct {
	testing.TB
	msgs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}
