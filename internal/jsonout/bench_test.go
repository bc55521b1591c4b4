package jsonout

import (
	"strings"
	"testing"
)

// benchStrings are the kinds of strings the engine's encoder writes for every state's input,
// output and history event.
var benchStrings = []struct{ name, s string }{
	{"key", "StatusCode"},
	{"arn", "arn:aws:states:us-east-1:111111111111:execution:machine:6f1c2a4e-8d2b-4b1e-9c3a"},
	{"ascii-1k", strings.Repeat("The quick brown fox jumps over the lazy dog. ", 23)},
	{"quoted-json", strings.Repeat(`{"id":"a1","tags":["x","y"],"n":12}`+"\n", 8)},
	{"non-ascii", strings.Repeat("café, naïve, 東京, emoji 😀; ", 8)},
}

// BenchmarkGoJSON: the engine writes every string of its JSON with AppendString and measures
// every state's output with StringLen against the payload limit.
func BenchmarkGoJSON(b *testing.B) {
	buf := make([]byte, 0, 4096)
	for _, bs := range benchStrings {
		b.Run("append/"+bs.name, func(b *testing.B) {
			b.SetBytes(int64(len(bs.s)))
			for b.Loop() {
				buf = AppendString(buf[:0], bs.s, GoJSON)
			}
		})
		b.Run("len/"+bs.name, func(b *testing.B) {
			b.SetBytes(int64(len(bs.s)))
			for b.Loop() {
				_ = StringLen(bs.s, GoJSON)
			}
		})
	}
}
