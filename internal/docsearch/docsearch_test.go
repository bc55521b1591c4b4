package docsearch

import (
	"testing"

	"sinew/internal/jsonv"
)

func TestTokens(t *testing.T) {
	for in, want := range map[string]string{
		"Café OPENS at 9:00!":  `["cafe","opens","at","9","00"]`,
		"naïve—façade, Straße": `["naive","facade","straße"]`,
		"   ":                  `null`,
		"日本語 text":             `["日本語","text"]`,
	} {
		if got := jsonv.EncodeString(tokens(in)); got != want {
			t.Errorf("tokens(%q) = %s, want %s", in, got, want)
		}
	}
}
