package taskflow

import (
	"slices"
	"strconv"
)

// mapStep compiles foreach (one item at a time, Julep's order) and map/reduce (parallelism items
// at a time) into a Map whose iteration is the step, with `_` the item.
func (c *compiler) mapStep(sc scope, s *Step) error {
	var over, do any
	concurrency := 1
	if s.Kind == KindForeach {
		m, ok := s.Fields["foreach"].(map[string]any)
		if !ok {
			return errAt(sc.path+".foreach", "foreach is {in, do}")
		}
		over, do = m["in"], m["do"]
	} else {
		over, do = s.Fields["over"], s.Fields["map"]
		if p, ok := number(s.Fields["parallelism"]); ok {
			if p < 1 || p > 100 || p != float64(int(p)) {
				return errAt(sc.path+".parallelism", "parallelism is a whole number from 1 to 100")
			}
			concurrency = int(p)
		}
	}
	items, err := c.expr(sc.path+".in", over, names("$states.input"))
	if err != nil {
		return err
	}
	inner := map[string]any{}
	path := sc.path + ".do"
	if s.Kind == KindMap {
		path = sc.path + ".map"
	}
	// State names are unique across the whole machine, nested ones included.
	item := sc.name + ".item"
	lvl := &mapLevel{v: "iter" + strconv.Itoa(len(sc.maps)+1)}
	if err := c.branch(scope{states: inner, maps: append(slices.Clip(sc.maps), lvl)}, path, item, do, ""); err != nil {
		return err
	}
	start := item
	if lvl.used {
		// An iteration that starts children holds its index where they can read it, nested Maps
		// and Parallels included (the context's Map.Item.Index is the innermost Map's alone).
		start = sc.name + ".index"
		inner[start] = map[string]any{"Type": "Pass", "Comment": "the iteration's index, which names the executions it starts",
			"Assign": map[string]any{lvl.v: "{% $states.context.Map.Item.Index %}"}, "Next": item}
	}
	out := "$states.result"
	if r, ok := s.Fields["reduce"].(string); ok && r != "" {
		n := names("$x")
		n["results"] = "$results"
		e, err := c.expr(sc.path+".reduce", r, n)
		if err != nil {
			return err
		}
		initial := "[]"
		if iv, ok := s.Fields["initial"]; ok && iv != nil {
			if initial, err = c.expr(sc.path+".initial", iv, names("$states.input")); err != nil {
				return err
			}
		}
		out = "$reduce($states.result, function($results, $x) {" + e + "}, " + initial + ")"
	}
	st := map[string]any{"Type": "Map", "Comment": label(s), "Items": "{% " + items + " %}", "MaxConcurrency": concurrency,
		"ItemProcessor": map[string]any{"ProcessorConfig": map[string]any{"Mode": "INLINE"}, "StartAt": start, "States": inner}}
	c.put(sc, sc.name, finish(sc, st, out))
	return nil
}

// parallel compiles a parallel step: a branch per step, each given the step's input.
func (c *compiler) parallel(sc scope, s *Step) error {
	steps, ok := s.Fields["parallel"].([]any)
	if !ok || len(steps) == 0 {
		return errAt(sc.path+".parallel", "parallel is a list of steps")
	}
	var branches []any
	for i, raw := range steps {
		inner := map[string]any{}
		name := sc.name + ".branch" + strconv.Itoa(i)
		if err := c.branch(scope{states: inner, maps: sc.maps}, sc.path+".parallel["+strconv.Itoa(i)+"]", name, raw, ""); err != nil {
			return err
		}
		branches = append(branches, map[string]any{"StartAt": name, "States": inner})
	}
	st := map[string]any{"Type": "Parallel", "Comment": label(s), "Branches": branches}
	c.put(sc, sc.name, finish(sc, st, "$states.result"))
	return nil
}
