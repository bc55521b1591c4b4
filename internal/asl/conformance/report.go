package conformance

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
)

// RunAll replays every case of the manifest, in manifest order.
func (m *Manifest) RunAll(ctx context.Context, root string) []Result {
	var out []Result
	for i := range m.Cases {
		out = append(out, m.Cases[i].Run(ctx, root)...)
	}
	return out
}

// Report prints pass/fail per area and in all over the usable set, then every failing case with
// its reason. Results outside the usable set are counted apart (they would move the denominator).
func Report(w io.Writer, results []Result, usable map[string]bool) {
	type tally struct{ pass, total int }
	areas := map[string]*tally{}
	var all tally
	var failing, extra []Result
	seen := map[string]bool{}
	for _, r := range results {
		if !usable[r.Key] {
			extra = append(extra, r)
			continue
		}
		seen[r.Key] = true
		a := areas[r.Area]
		if a == nil {
			a = &tally{}
			areas[r.Area] = a
		}
		a.total++
		all.total++
		if r.Passed() {
			a.pass++
			all.pass++
		} else {
			failing = append(failing, r)
		}
	}
	var missing []string
	for k := range usable {
		if !seen[k] {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	names := make([]string, 0, len(areas))
	for a := range areas {
		names = append(names, a)
	}
	sort.Strings(names)
	fmt.Fprintf(w, "%-24s %6s %6s %7s\n", "area", "pass", "total", "%")
	for _, a := range names {
		t := areas[a]
		fmt.Fprintf(w, "%-24s %6d %6d %6.1f%%\n", a, t.pass, t.total, pct(t.pass, t.total))
	}
	// Usable keys the manifest no longer produces count as failures: the denominator is fixed.
	total := all.total + len(missing)
	fmt.Fprintf(w, "%-24s %6d %6d %6.1f%%\n", "ALL (usable set)", all.pass, total, pct(all.pass, total))
	if len(failing)+len(missing) > 0 {
		fmt.Fprintf(w, "\nfailing (%d):\n", len(failing)+len(missing))
	}
	for _, r := range failing {
		fmt.Fprintf(w, "  %s\n      %s\n", r.Key, r.Why())
	}
	for _, k := range missing {
		fmt.Fprintf(w, "  %s\n      in usable.txt but not produced by manifest.json\n", k)
	}
	if len(extra) > 0 {
		fmt.Fprintf(w, "\nnot in the usable set (%d; add to usable.txt deliberately):\n", len(extra))
		for _, r := range extra {
			fmt.Fprintf(w, "  %s pass=%v\n", r.Key, r.Passed())
		}
	}
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// WriteKeys writes a key list file body: a header comment, then the keys sorted.
func WriteKeys(w io.Writer, header string, keys []string) {
	sort.Strings(keys)
	for _, l := range strings.Split(header, "\n") {
		fmt.Fprintf(w, "# %s\n", l)
	}
	for _, k := range keys {
		fmt.Fprintln(w, k)
	}
}
