package taskflow

import (
	"strconv"
)

// step compiles one step into its state(s), the first named sc.name. When some of its expressions
// need the evaluator, a Task named sc.name.eval evaluates them first (transitions into sc.name are
// redirected to it when the machine is complete).
func (c *compiler) step(sc scope, s *Step) error {
	outer := c.batch
	c.batch = &evalBatch{}
	defer func() { c.batch = outer }()
	if err := c.stepStates(sc, s); err != nil {
		return err
	}
	if b := c.batch; b.variable != "" {
		name := sc.name + evalSuffix
		for n, st := range c.evalStates(s, b, name, sc.name) {
			c.put(sc, n, st)
		}
		c.evalAt[sc.name] = name
	}
	return nil
}

func (c *compiler) stepStates(sc scope, s *Step) error {
	switch s.Kind {
	case KindEvaluate, KindReturn, KindSet, KindGet, KindLog:
		return c.pass(sc, s)
	case KindSleep:
		return c.sleep(sc, s)
	case KindError:
		msg, ok := s.Fields["error"].(string)
		if !ok {
			return errAt(sc.path+".error", "error is the message, a string")
		}
		c.put(sc, sc.name, map[string]any{"Type": "Fail", "Comment": label(s), "Error": StepErrorName, "Cause": msg})
		return nil
	case KindIfElse:
		return c.ifElse(sc, s)
	case KindSwitch:
		return c.switchStep(sc, s)
	case KindForeach, KindMap:
		return c.mapStep(sc, s)
	case KindParallel:
		return c.parallel(sc, s)
	case KindToolCall, KindWaitForInput:
		return c.toolCall(sc, s)
	case KindPrompt:
		return c.prompt(sc, s)
	case KindYield:
		return c.yield(sc, s)
	}
	return errAt(sc.path, "steps of kind %s are not supported", s.Kind)
}

func label(s *Step) string {
	if s.Label != "" {
		return s.Kind + ": " + s.Label
	}
	return s.Kind
}

func (c *compiler) pass(sc scope, s *Step) error {
	n := names("$states.input")
	st := map[string]any{"Type": "Pass", "Comment": label(s)}
	var out string
	switch s.Kind {
	case KindEvaluate, KindReturn, KindSet:
		m, ok := s.Fields[s.Kind].(map[string]any)
		if !ok {
			return errAt(sc.path+"."+s.Kind, "%s is an object of names to expressions", s.Kind)
		}
		e, err := c.expr(sc.path+"."+s.Kind, m, n)
		if err != nil {
			return err
		}
		out = e
	case KindGet:
		k, ok := s.Fields["get"].(string)
		if !ok {
			return errAt(sc.path+".get", "get is the name of a value a set step stored")
		}
		out = "$lookup($state, " + quote(k) + ")"
	case KindLog:
		e, err := c.expr(sc.path+".log", s.Fields["log"], n)
		if err != nil {
			return err
		}
		out = e
	}
	finish(sc, st, out)
	if s.Kind == KindSet {
		a, _ := st["Assign"].(map[string]any)
		if a == nil {
			a = map[string]any{}
			st["Assign"] = a
		}
		a["state"] = "{% $merge([$state, " + out + "]) %}"
	}
	if s.Kind == KindReturn {
		delete(st, "Next")
		st["Next"] = "Done"
		if sc.states != nil {
			delete(st, "Next")
			st["End"] = true
		}
	}
	c.put(sc, sc.name, st)
	return nil
}

func (c *compiler) sleep(sc scope, s *Step) error {
	m, ok := s.Fields["sleep"].(map[string]any)
	if !ok {
		return errAt(sc.path+".sleep", "sleep is {seconds, minutes, hours, days}")
	}
	total := 0.0
	for k, mult := range map[string]float64{"seconds": 1, "minutes": 60, "hours": 3600, "days": 86400} {
		if v, ok := m[k]; ok {
			f, ok := number(v)
			if !ok || f < 0 {
				return errAt(sc.path+".sleep."+k, "%s must be a number of at least 0", k)
			}
			total += f * mult
		}
	}
	if total < 1 || total > 365*86400 {
		return errAt(sc.path+".sleep", "a sleep lasts from 1 second to 365 days")
	}
	st := map[string]any{"Type": "Wait", "Comment": label(s), "Seconds": int64(total)}
	c.put(sc, sc.name, finish(sc, st, "$states.input"))
	return nil
}

// branch compiles a nested step (then, else, a case, a Map's or Parallel's) as its own step at
// path, named name, going to next; it records nothing (the step that holds it does).
func (c *compiler) branch(sc scope, path, name string, v any, next string) error {
	s, err := ParseStep(path, v)
	if err != nil {
		return err
	}
	return c.step(scope{path: path, name: name, next: next, states: sc.states, maps: sc.maps}, s)
}

// join is the Pass a branching step ends with: it records the branch's output as the step's.
func (c *compiler) join(sc scope, s *Step) string {
	name := sc.name + ".end"
	c.put(sc, name, finish(sc, map[string]any{"Type": "Pass", "Comment": label(s) + ": the branch's output is the step's"}, "$states.input"))
	return name
}

func (c *compiler) cond(path string, v any) (string, error) {
	e, err := c.expr(path, v, names("$states.input"))
	if err != nil {
		return "", err
	}
	return "{% $boolean(" + e + ") %}", nil
}

func (c *compiler) ifElse(sc scope, s *Step) error {
	cond, err := c.cond(sc.path+".if", s.Fields["if"])
	if err != nil {
		return err
	}
	end := c.join(sc, s)
	thenName, elseName := sc.name+".then", sc.name+".else"
	if err := c.branch(sc, sc.path+".then", thenName, s.Fields["then"], end); err != nil {
		return err
	}
	def := end
	if e, ok := s.Fields["else"]; ok && e != nil {
		if err := c.branch(sc, sc.path+".else", elseName, e, end); err != nil {
			return err
		}
		def = elseName
	}
	c.put(sc, sc.name, map[string]any{"Type": "Choice", "Comment": label(s),
		"Choices": []any{map[string]any{"Condition": cond, "Next": thenName}}, "Default": def})
	return nil
}

func (c *compiler) switchStep(sc scope, s *Step) error {
	cases, ok := s.Fields["switch"].([]any)
	if !ok || len(cases) == 0 {
		return errAt(sc.path+".switch", "switch is a list of {case, then}")
	}
	end := c.join(sc, s)
	var choices []any
	def := end
	for i, raw := range cases {
		path := sc.path + ".switch[" + strconv.Itoa(i) + "]"
		m, ok := raw.(map[string]any)
		if !ok {
			return errAt(path, "a case is {case, then}")
		}
		name := sc.name + ".case" + strconv.Itoa(i)
		if err := c.branch(sc, path+".then", name, m["then"], end); err != nil {
			return err
		}
		if m["case"] == "_" {
			def = name
			break
		}
		cond, err := c.cond(path+".case", m["case"])
		if err != nil {
			return err
		}
		choices = append(choices, map[string]any{"Condition": cond, "Next": name})
	}
	st := map[string]any{"Type": "Choice", "Comment": label(s), "Default": def}
	if len(choices) == 0 {
		st = map[string]any{"Type": "Pass", "Comment": label(s), "Next": def}
	} else {
		st["Choices"] = choices
	}
	c.put(sc, sc.name, st)
	return nil
}

// number reads a JSON number as the store (int64 or float64) or encoding/json (float64) gives it.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	}
	return 0, false
}
