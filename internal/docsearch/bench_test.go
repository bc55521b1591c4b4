package docsearch

import (
	"fmt"
	"testing"

	"sinew/internal/store"
)

// BenchmarkRank scores a query against the most docs one search reads (MaxDocs), each about
// 200 words: the CPU cost of a search once its docs are read.
func BenchmarkRank(b *testing.B) {
	words := []string{"rain", "cafe", "opening", "hours", "tax", "april", "menu", "soup", "bread", "umbrella", "nine", "five"}
	docs := make([]store.Doc, MaxDocs)
	for i := range docs {
		text := ""
		for j := 0; j < 200; j++ {
			text += words[(i*7+j*3)%len(words)] + " w" + fmt.Sprint(i%97) + " "
		}
		docs[i] = store.Doc{Title: fmt.Sprintf("doc %d", i), Content: text}
	}
	in := &Input{Text: "cafe opening hours april", Limit: DefaultLimit}
	b.ReportAllocs()
	for b.Loop() {
		if hits := Rank(docs, in); len(hits) == 0 {
			b.Fatal("no hits")
		}
	}
}
