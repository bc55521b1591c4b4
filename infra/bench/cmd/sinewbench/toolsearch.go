package main

import (
	"context"
	"fmt"
	"regexp"
)

// Tool search: the recall of internal/toolsearch's ranking on its labelled queries
// (TestRecallAt5), the set the synonyms were written against and one written after.

var recallLine = regexp.MustCompile(`(\w+): (\d+) tools, (\d+) queries: recall@1 ([0-9.]+), recall@5 ([0-9.]+)`)

func partToolSearch(ctx context.Context, o options, r *report) error {
	out, err := runCmd(ctx, []string{"go", "test", "-run", "^TestRecallAt5$", "-v", "-count=1", "./internal/toolsearch/"}, nil)
	if err != nil {
		return err
	}
	rows := recallLine.FindAllStringSubmatch(string(out), -1)
	if len(rows) == 0 {
		return fmt.Errorf("TestRecallAt5 printed no recall lines (run with -v): %s", trim(string(out), 500))
	}
	r.printf("toolsearch", "How often `sinew_search_tools`' ranking (`internal/toolsearch`: BM25 over each tool's name, description and "+
		"parameter names, stemmed, with a small synonym table) puts a right tool among the first five, on realistic tool "+
		"catalogues (`internal/toolsearch/testdata/tools.json`: 59 services' operations as their APIs describe them) and labelled "+
		"queries as users phrase them (a query counts when one of the tools labelled right for it is among the five). \"queries\" is "+
		"the set the synonym table was written against; \"heldout\" was written after the ranking was frozen. A chat or an MCP "+
		"client of an agent past `SINEW_TOOL_SEARCH_THRESHOLD` tools sees the search tool and the tools ranked best for the turn "+
		"(`go test -run '^TestRecallAt5$' -v ./internal/toolsearch/`).\n\n")
	r.printf("toolsearch", "| query set | tools | queries | recall@1 | recall@5 | goal |\n|---|---|---|---|---|---|\n")
	for _, m := range rows {
		r.printf("toolsearch", "| %s | %s | %s | %s | %s | ≥ 0.9 |\n", m[1], m[2], m[3], m[4], m[5])
		if m[1] == "heldout" {
			r.headline("Tool search recall@5 (held-out queries over %s tools): %s", m[2], m[5])
		}
	}
	return nil
}
