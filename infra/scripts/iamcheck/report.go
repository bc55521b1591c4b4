package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"sinew/internal/iamrec"
)

// report prints the summary line, the statements no request used, what was not checked and every
// denial, and gives the exit code.
func report(w io.Writer, pols *policies, pl *planned, results map[string]result) int {
	used, notes := map[string]bool{}, map[string]int{}
	var denied []int
	var invalid []string
	deniedN := 0
	for i, j := range pl.jobs {
		r := results[j.ID]
		for _, g := range r.Grants {
			if len(g) == 2 {
				used[fmt.Sprintf("%v#%v", g[0], g[1])] = true
			}
		}
		for _, n := range r.Notes {
			notes[j.Action+": "+n] += pl.counts[i]
		}
		if len(r.Errors) > 0 {
			invalid = append(invalid, fmt.Sprintf("%s on %s by %s: the simulator refuses the request: %s", j.Action, j.Resource, pl.reqs[i].Principal, strings.Join(r.Errors, "; ")))
		}
		if r.Result != "Allowed" {
			denied = append(denied, i)
			deniedN += pl.counts[i]
		}
	}
	var unused []statement
	for _, st := range pols.stmts {
		if st.counted && !used[st.id()] {
			unused = append(unused, st)
		}
	}
	by := principalsPhrase(pl.principals)
	if deniedN == 0 {
		fmt.Fprintf(w, "%d AWS requests by %s allowed; %d statements no request used\n", pl.total, by, len(unused))
	} else {
		fmt.Fprintf(w, "%d of %d AWS requests by %s DENIED; %d statements no request used\n", deniedN, pl.total, by, len(unused))
	}
	for _, src := range pl.sources {
		fmt.Fprintln(w, src)
	}
	printUnused(w, unused)
	printNotChecked(w, pl, pols)
	for _, n := range sortedKeys(notes) {
		fmt.Fprintf(w, "note: %s (%d of the requests)\n", n, notes[n])
	}
	for _, i := range denied {
		printDenial(w, pl.reqs[i], pl.counts[i], results[pl.jobs[i].ID])
	}
	invalid = append(invalid, pl.invalid...)
	for _, s := range uniqStrings(invalid) {
		fmt.Fprintln(w, "CANNOT CHECK:", s)
	}
	switch {
	case deniedN > 0:
		return exitDenied
	case len(invalid) > 0:
		return exitUncheckable
	}
	return exitOK
}

func principalsPhrase(p map[string]map[string]bool) string {
	var parts []string
	for _, t := range []struct{ typ, one, many string }{
		{iamrec.PrincipalFunction, "function", "functions"},
		{iamrec.PrincipalStateMachine, "state machine", "state machines"},
		{iamrec.PrincipalService, "service principal", "service principals"},
	} {
		switch n := len(p[t.typ]); n {
		case 0:
		case 1:
			parts = append(parts, "1 "+t.one)
		default:
			parts = append(parts, fmt.Sprintf("%d %s", n, t.many))
		}
	}
	if len(parts) > 1 {
		return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
	}
	return strings.Join(parts, "")
}

func printUnused(w io.Writer, unused []statement) {
	if len(unused) == 0 {
		return
	}
	fmt.Fprintln(w, "statements no request used (holder, policy, Sid or index, actions, resources):")
	// Those local mode could have used first; those only AWS's services use after, with the reason.
	slices.SortStableFunc(unused, func(a, b statement) int { return boolInt(a.note != "") - boolInt(b.note != "") })
	for _, st := range unused {
		name := st.sid
		if name == "" {
			name = fmt.Sprintf("#%d", st.index)
		}
		line := fmt.Sprintf("  %s  %s %s  %s  on %s", st.owner, st.policy, name, strings.Join(st.actions, ","), strings.Join(st.resources, ","))
		if st.note != "" {
			line += "  (" + st.note + ")"
		}
		fmt.Fprintln(w, line)
	}
}

func printNotChecked(w io.Writer, pl *planned, pols *policies) {
	if len(pl.foreign) > 0 {
		var parts []string
		for _, k := range sortedKeys(pl.foreign) {
			parts = append(parts, fmt.Sprintf("%s: %d", k, pl.foreign[k]))
		}
		fmt.Fprintf(w, "not checked: requests by principals the stack does not define (test fixtures): %s\n", strings.Join(parts, ", "))
	}
	if len(pl.unnamed) > 0 {
		var parts []string
		for _, k := range sortedKeys(pl.unnamed) {
			parts = append(parts, fmt.Sprintf("%s: %d", k, pl.unnamed[k]))
		}
		fmt.Fprintf(w, "not checked: requests whose resource local mode could not name (a task token of an ended execution, a key that does not exist): %s\n", strings.Join(parts, ", "))
	}
	for _, warn := range pols.warnings {
		fmt.Fprintln(w, "warning:", warn)
	}
}

func printDenial(w io.Writer, r iamrec.Request, n int, res result) {
	ctx := []byte("none")
	if len(r.Context) > 0 {
		ctx, _ = json.Marshal(r.Context)
	}
	times := "once"
	if n > 1 {
		times = fmt.Sprintf("%d times", n)
	}
	fmt.Fprintf(w, "DENIED: %s on %s by %s %s (%s, %s)\n  context: %s\n", r.Action, r.Resource, r.PrincipalType, r.Principal, r.Operation, times, ctx)
	for _, line := range strings.Split(res.Explain, "\n") {
		fmt.Fprintln(w, "  "+line)
	}
}

func uniqStrings(ss []string) []string {
	slices.Sort(ss)
	return slices.Compact(ss)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
