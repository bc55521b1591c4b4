package resources

import (
	"fmt"
	"testing"

	"sinew/internal/store"
)

// BenchmarkRank scores a query against the most docs one search reads (MaxSearchDocs), each about
// 200 words: the CPU cost of a search once its docs are read.
func BenchmarkRank(b *testing.B) {
	words := []string{"rain", "cafe", "opening", "hours", "tax", "april", "menu", "soup", "bread", "umbrella", "nine", "five"}
	docs := make([]store.Doc, MaxSearchDocs)
	for i := range docs {
		text := ""
		for j := 0; j < 200; j++ {
			text += words[(i*7+j*3)%len(words)] + " w" + fmt.Sprint(i%97) + " "
		}
		docs[i] = store.Doc{Title: fmt.Sprintf("doc %d", i), Content: text}
	}
	in := &SearchInput{Text: "cafe opening hours april", Limit: DefaultSearchLimit}
	b.ReportAllocs()
	for b.Loop() {
		if hits := rank(docs, in); len(hits) == 0 {
			b.Fatal("no hits")
		}
	}
}
