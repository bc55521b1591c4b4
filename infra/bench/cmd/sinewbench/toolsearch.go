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
	return gatewayTimes(ctx, o, r)
}

// gatewayTimes are the gateway's own costs in time: an OpenAPI import of 300 operations (parse,
// resolve, make the tools; the writes are DynamoDB's) and a search over 500 tools.
func gatewayTimes(ctx context.Context, o options, r *report) error {
	t, n := bt(o, "", 5)
	imp := goBench{pkg: "./internal/openapitools", bench: "^BenchmarkImport300$", benchtime: t, count: n}
	search := goBench{pkg: "./internal/toolsearch", bench: "^BenchmarkSearch500$", benchtime: t, count: n}
	r.printf("toolsearch", "\n| figure | median ms | min–max ms |\n|---|---|---|\n")
	for _, g := range []struct {
		b     goBench
		name  string
		label string
	}{{imp, "BenchmarkImport300", "OpenAPI import of 300 operations (a real document)"},
		{search, "BenchmarkSearch500/index", "indexing 500 tools (once per turn)"},
		{search, "BenchmarkSearch500/search", "a search over 500 tools"}} {
		res, err := g.b.run(ctx)
		if err != nil {
			return err
		}
		ns := res.get(g.name, "ns/op")
		if len(ns) == 0 {
			return fmt.Errorf("%s gave no figures", g.name)
		}
		lo, hi := ns.spread()
		r.printf("toolsearch", "| %s | %.2f | %.2f–%.2f |\n", g.label, ns.median()/1e6, lo/1e6, hi/1e6)
		if g.name == "BenchmarkImport300" {
			r.headline("OpenAPI import of 300 operations (parse, resolve, make the tools): %.0f ms", ns.median()/1e6)
		}
	}
	r.printf("toolsearch", "\nCommands:\n\n```\n%s\n%s\n```\n", imp.command(), search.command())
	return nil
}
