package asl

import (
	"context"
	"fmt"
	"strings"

	"sinew/internal/jsonv"
)

// Choice: the first rule that matches names the next state, else Default.
// https://docs.aws.amazon.com/step-functions/latest/dg/state-choice.html

var choiceFields = fieldSet(commonFields, jsonPathIO, []string{"Choices", "Default", "Assign", "Output"})

// ChoiceSpec is what a Choice state has of its own.
type ChoiceSpec struct {
	Choices []*ChoiceRule
	Default string
}

// ChoiceRule is one rule of a Choice state: a comparison on Variable, a boolean combination, or (in
// JSONata) a Condition. Only top-level rules have Next, Assign and Output.
type ChoiceRule struct {
	Next   string
	Assign *assignment
	Output *jsonataValue

	And, Or []*ChoiceRule
	Not     *ChoiceRule

	Variable compiledPath
	varSrc   string
	Op       string // e.g. "NumericEquals" (without "Path")
	ByPath   bool
	Value    any
	ValuePth compiledPath

	Condition *jsonataValue
}

var comparators = map[string]bool{
	"StringEquals": true, "StringLessThan": true, "StringGreaterThan": true, "StringLessThanEquals": true, "StringGreaterThanEquals": true, "StringMatches": true,
	"NumericEquals": true, "NumericLessThan": true, "NumericGreaterThan": true, "NumericLessThanEquals": true, "NumericGreaterThanEquals": true,
	"BooleanEquals":   true,
	"TimestampEquals": true, "TimestampLessThan": true, "TimestampGreaterThan": true, "TimestampLessThanEquals": true, "TimestampGreaterThanEquals": true,
	"IsNull": true, "IsPresent": true, "IsNumeric": true, "IsString": true, "IsBoolean": true, "IsTimestamp": true,
}

// choiceState reads a Choice state's rules and Default.
func (p *parser) choiceState(st *State, obj map[string]any, loc string) {
	spec := &ChoiceSpec{}
	st.Choice = spec
	arr, ok := obj["Choices"].([]any)
	if !ok {
		p.schema(loc, "These fields are required: [Choices]")
		return
	}
	if len(arr) == 0 {
		p.schema(loc+"/Choices", "Value cannot be empty")
	}
	for i, c := range arr {
		cloc := fmt.Sprintf("%s/Choices[%d]", loc, i)
		r := p.choiceRule(c, cloc, st.QueryLanguage, true)
		if r != nil {
			spec.Choices = append(spec.Choices, r)
		}
	}
	if v, ok := obj["Default"]; ok {
		s, _ := v.(string)
		if s == "" {
			p.schema(loc+"/Default", "The field 'Default' must be a non-empty string")
		}
		spec.Default = s
	}
}

// choice picks the next state by the first matching rule, else Default (none: States.NoChoiceMatched),
// and gives the output and assignments, a matching rule's Output and Assign included.
func (r *stateRun) choice(ctx context.Context) (any, string, map[string]any, *StatesError) {
	st := r.st
	input := r.raw
	if r.jsonPath() {
		var err *StatesError
		if input, err = r.inputPath(r.raw); err != nil {
			return nil, "", nil, err
		}
	}
	var env pathEnv
	var jenv *jsonataEnv
	if r.jsonPath() {
		env = r.env(input)
	} else {
		jenv = r.jenv(nil)
	}
	var match *ChoiceRule
	for _, rule := range st.Choice.Choices {
		ok, err := rule.eval(ctx, env, jenv)
		if err != nil {
			return nil, "", nil, r.fromEval(err)
		}
		if ok {
			match = rule
			break
		}
	}
	next := st.Choice.Default
	if match != nil {
		next = match.Next
	}
	if next == "" {
		return nil, "", nil, newErr(ErrNoChoiceMatched, "No Matches!")
	}
	if r.jsonPath() {
		out, err := r.outputPath(input)
		if err != nil {
			return nil, "", nil, err
		}
		r.outBound = r.rawBound // parts of the input
		assigned, err := r.assign(ctx, st.Assign, input, nil)
		if err != nil {
			return nil, "", nil, err
		}
		if match != nil && match.Assign != nil {
			more, err := r.assign(ctx, match.Assign, input, nil)
			if err != nil {
				return nil, "", nil, err
			}
			assigned = merge(assigned, more)
		}
		return out, next, assigned, nil
	}
	outField, assign := st.Output, st.Assign
	if match != nil && match.Output != nil {
		outField = match.Output
	}
	out, assigned, err := r.finishJSONata(ctx, outField, assign, r.raw, nil)
	if err != nil {
		return nil, "", nil, err
	}
	if match != nil && match.Assign != nil {
		more, err := r.assign(ctx, match.Assign, nil, nil)
		if err != nil {
			return nil, "", nil, err
		}
		assigned = merge(assigned, more)
	}
	return out, next, assigned, nil
}

// merge adds b's assignments to a's (b wins).
func merge(a, b map[string]any) map[string]any {
	if a == nil {
		return b
	}
	for k, v := range b {
		a[k] = v
	}
	return a
}

func (p *parser) choiceRule(v any, loc, lang string, top bool) *ChoiceRule {
	obj, ok := v.(map[string]any)
	if !ok {
		p.schema(loc, "A choice rule must be an object")
		return nil
	}
	r := &ChoiceRule{}
	if top {
		next, _ := obj["Next"].(string)
		if next == "" {
			p.schema(loc, "These fields are required: [Next]")
		}
		r.Next = next
		if a, ok := obj["Assign"]; ok {
			r.Assign = p.assign(a, loc+"/Assign", lang)
		}
		if lang == JSONata {
			r.Output = p.jsonataField(obj, "Output", loc)
		}
	} else if _, ok := obj["Next"]; ok {
		p.schema(loc, "Nested choice rules may not have 'Next'")
	}
	if lang == JSONata {
		c, ok := obj["Condition"]
		if !ok {
			p.schema(loc, "These fields are required: [Condition]")
			return r
		}
		if s, isStr := c.(string); isStr && !isJSONataString(s) {
			p.schema(loc+"/Condition", "The field 'Condition' must be a JSONata expression or a boolean")
		}
		r.Condition = p.jsonataTemplate(c, loc+"/Condition")
		return r
	}
	n := 0
	for _, k := range sortedKeys(obj) {
		val := obj[k]
		switch {
		case k == "Next" || k == "Assign" || k == "Comment" || k == "Variable":
		case k == "And" || k == "Or":
			n++
			list, ok := val.([]any)
			if !ok || len(list) == 0 {
				p.schema(loc+"/"+k, "The field '%s' must be a non-empty array of choice rules", k)
				continue
			}
			for i, e := range list {
				sub := p.choiceRule(e, fmt.Sprintf("%s/%s[%d]", loc, k, i), lang, false)
				if k == "And" {
					r.And = append(r.And, sub)
				} else {
					r.Or = append(r.Or, sub)
				}
			}
		case k == "Not":
			n++
			r.Not = p.choiceRule(val, loc+"/Not", lang, false)
		case comparators[k] || (strings.HasSuffix(k, "Path") && comparators[strings.TrimSuffix(k, "Path")] && !strings.HasPrefix(k, "Is") && k != "StringMatchesPath"):
			n++
			r.Op = strings.TrimSuffix(k, "Path")
			if comparators[k] {
				r.Op = k
			}
			r.ByPath = !comparators[k]
			if r.ByPath {
				r.ValuePth = p.refPath(val, k, loc)
			} else {
				r.Value = val
				if !comparatorValueOK(r.Op, val) {
					p.schema(loc+"/"+k, "The value of the field '%s' has the wrong type", k)
				}
			}
		default:
			p.schema(loc, "The field '%s' is not supported by Step Functions", k)
		}
	}
	if n != 1 {
		p.schema(loc, "A choice rule must have exactly one comparison operator or one of And, Or, Not")
	}
	if r.Op != "" {
		vs, ok := obj["Variable"].(string)
		if !ok {
			p.schema(loc, "These fields are required: [Variable]")
		} else {
			r.varSrc = vs
			r.Variable = p.refPath(vs, "Variable", loc)
		}
	}
	return r
}

func comparatorValueOK(op string, v any) bool {
	switch {
	case strings.HasPrefix(op, "String"):
		_, ok := v.(string)
		return ok
	case strings.HasPrefix(op, "Numeric"):
		_, ok := jsonv.ToFloat(v)
		return ok
	case strings.HasPrefix(op, "Timestamp"):
		s, ok := v.(string)
		if !ok {
			return false
		}
		_, ok = parseTimestamp(s)
		return ok
	default: // BooleanEquals and the Is* tests take a boolean
		_, ok := v.(bool)
		return ok
	}
}

// eval decides a rule. Comparisons never fail on a type mismatch (they are false); a Variable that is
// missing fails the state with States.Runtime, except for IsPresent.
func (r *ChoiceRule) eval(ctx context.Context, env pathEnv, jenv *jsonataEnv) (bool, error) {
	switch {
	case r.Condition != nil:
		v, err := r.Condition.eval(ctx, jenv, "Condition")
		if err != nil {
			return false, err
		}
		b, ok := v.(bool)
		if !ok {
			return false, &queryError{location: "Condition", cause: fmt.Sprintf("The JSONata expression '%s' specified for the field 'Condition' returned a non-boolean value.", r.Condition.src)}
		}
		return b, nil
	case r.And != nil:
		for _, s := range r.And {
			ok, err := s.eval(ctx, env, jenv)
			if err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	case r.Or != nil:
		for _, s := range r.Or {
			ok, err := s.eval(ctx, env, jenv)
			if err != nil || ok {
				return ok, err
			}
		}
		return false, nil
	case r.Not != nil:
		ok, err := r.Not.eval(ctx, env, jenv)
		return !ok, err
	}
	v, err := r.Variable.Eval(env)
	if err != nil {
		if r.Op == "IsPresent" {
			b, _ := r.Value.(bool)
			return !b, nil
		}
		return false, &pathError{path: r.varSrc, cause: pathMsg(err)}
	}
	want := r.Value
	if r.ByPath {
		want, err = r.ValuePth.Eval(env)
		if err != nil {
			return false, &pathError{path: r.ValuePth.String(), cause: pathMsg(err)}
		}
	}
	return compare(r.Op, v, want), nil
}

// pathError is a path that failed to evaluate; the interpreter turns it into States.Runtime.
type pathError struct {
	path  string
	cause string
}

func (e *pathError) Error() string { return fmt.Sprintf("Invalid path '%s' : %s", e.path, e.cause) }

func compare(op string, v, want any) bool {
	switch op {
	case "IsNull":
		return (v == nil) == want.(bool)
	case "IsPresent":
		return want.(bool)
	case "IsNumeric":
		_, ok := jsonv.ToFloat(v)
		return ok == want.(bool)
	case "IsString":
		_, ok := v.(string)
		return ok == want.(bool)
	case "IsBoolean":
		_, ok := v.(bool)
		return ok == want.(bool)
	case "IsTimestamp":
		s, ok := v.(string)
		if ok {
			_, ok = parseTimestamp(s)
		}
		return ok == want.(bool)
	case "BooleanEquals":
		a, ok1 := v.(bool)
		b, ok2 := want.(bool)
		return ok1 && ok2 && a == b
	case "StringMatches":
		a, ok1 := v.(string)
		b, ok2 := want.(string)
		return ok1 && ok2 && wildcardMatch(b, a)
	}
	switch {
	case strings.HasPrefix(op, "String"):
		a, ok1 := v.(string)
		b, ok2 := want.(string)
		if !ok1 || !ok2 {
			return false
		}
		return ordered(op[len("String"):], strings.Compare(a, b))
	case strings.HasPrefix(op, "Numeric"):
		a, ok1 := jsonv.ToFloat(v)
		b, ok2 := jsonv.ToFloat(want)
		if !ok1 || !ok2 {
			return false
		}
		c := 0
		if a < b {
			c = -1
		} else if a > b {
			c = 1
		}
		return ordered(op[len("Numeric"):], c)
	case strings.HasPrefix(op, "Timestamp"):
		as, ok1 := v.(string)
		bs, ok2 := want.(string)
		if !ok1 || !ok2 {
			return false
		}
		a, ok1 := parseTimestamp(as)
		b, ok2 := parseTimestamp(bs)
		if !ok1 || !ok2 {
			return false
		}
		return ordered(op[len("Timestamp"):], a.Compare(b))
	}
	return false
}

func ordered(rel string, c int) bool {
	switch rel {
	case "Equals":
		return c == 0
	case "LessThan":
		return c < 0
	case "GreaterThan":
		return c > 0
	case "LessThanEquals":
		return c <= 0
	case "GreaterThanEquals":
		return c >= 0
	}
	return false
}

// wildcardMatch is StringMatches: '*' matches any run of characters; "\*" and "\\" are literal.
func wildcardMatch(pattern, s string) bool {
	type tok struct {
		star bool
		r    rune
	}
	var toks []tok
	rs := []rune(pattern)
	for i := 0; i < len(rs); i++ {
		switch {
		case rs[i] == '\\' && i+1 < len(rs):
			i++
			toks = append(toks, tok{r: rs[i]})
		case rs[i] == '*':
			toks = append(toks, tok{star: true})
		default:
			toks = append(toks, tok{r: rs[i]})
		}
	}
	in := []rune(s)
	// Classic greedy match with backtracking to the last star.
	ti, si, starT, starS := 0, 0, -1, 0
	for si < len(in) {
		switch {
		case ti < len(toks) && !toks[ti].star && toks[ti].r == in[si]:
			ti++
			si++
		case ti < len(toks) && toks[ti].star:
			starT, starS = ti, si
			ti++
		case starT >= 0:
			starS++
			si, ti = starS, starT+1
		default:
			return false
		}
	}
	for ti < len(toks) && toks[ti].star {
		ti++
	}
	return ti == len(toks)
}
