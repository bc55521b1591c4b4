package taskflow

// prune removes the states no path reaches from start (the steps after a return or an error,
// Done when every path fails), recursively in Map and Parallel: Step Functions refuses a
// definition with unreachable states.
func prune(start string, states map[string]any) {
	seen := map[string]bool{}
	todo := []string{start}
	for len(todo) > 0 {
		n := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if seen[n] {
			continue
		}
		seen[n] = true
		st, _ := states[n].(map[string]any)
		todo = append(todo, targets(st)...)
	}
	for n, v := range states {
		if !seen[n] {
			delete(states, n)
			continue
		}
		st, _ := v.(map[string]any)
		if p, ok := st["ItemProcessor"].(map[string]any); ok {
			prune(p["StartAt"].(string), p["States"].(map[string]any))
		}
		if bs, ok := st["Branches"].([]any); ok {
			for _, b := range bs {
				bm := b.(map[string]any)
				prune(bm["StartAt"].(string), bm["States"].(map[string]any))
			}
		}
	}
}

// targets are the states st may go to next.
func targets(st map[string]any) []string {
	var out []string
	for _, k := range []string{"Next", "Default"} {
		if s, ok := st[k].(string); ok {
			out = append(out, s)
		}
	}
	if cs, ok := st["Choices"].([]any); ok {
		for _, c := range cs {
			if s, ok := c.(map[string]any)["Next"].(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}
