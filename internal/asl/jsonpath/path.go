// Package jsonpath evaluates the JSONPath forms of Amazon States Language the way AWS does.
//
// AWS evaluates paths with Jayway JsonPath, and its recordings match Jayway's early 2.x line (2.0):
// bracket names are taken verbatim (no backslash escapes: `$['Test\""Name"']` reads the key
// `Test\""Name"`), functions such as `.length()` or `.sum()` are not functions but property names
// (a re:Post report shows `$.Jobs.sum()` failing on AWS), an indefinite path that matches nothing
// yields [] (recorded for twelve forms in v2/base/test_base), and a definite path fails with
// Jayway's texts ("No results for path: $['a']", "Missing property in path $['no']"). ohler55/ojg
// implements a different JSONPath dialect (RFC-like, other messages, other filter rules), so the
// package has its own small parser and evaluator.
//
// Values are those of sinew/internal/jsonv; nothing here mutates its inputs.
package jsonpath

import (
	"strconv"
	"strings"

	"sinew/internal/asl/jsonpath/javafmt"
)

// Env is what a path can see: $ is Input, $$ is Context, $name is a variable (Assign).
type Env struct {
	Input   any
	Context any
	Var     func(name string) (any, bool) // nil: no variables
	// Source, when set, gives the context object (if Context is nil) and the variables (if Var
	// is nil) on demand: most paths read neither, so an engine need not build them for each state.
	Source Source
}

// Source is where an Env finds `$$` and `$name` when it does not hold them itself.
type Source interface {
	ContextObject() any
	Variable(name string) (any, bool)
}

// ContextObject is `$$`: Context, else what Source gives.
func (e Env) ContextObject() any {
	if e.Context == nil && e.Source != nil {
		return e.Source.ContextObject()
	}
	return e.Context
}

// Variable is `$name`: from Var, else from Source.
func (e Env) Variable(name string) (any, bool) {
	switch {
	case e.Var != nil:
		return e.Var(name)
	case e.Source != nil:
		return e.Source.Variable(name)
	}
	return nil, false
}

type rootKind int

const (
	rootInput rootKind = iota
	rootContext
	rootVar
	rootItem // @ inside a filter: the element being tested
)

// Path is a parsed path. It is immutable and safe for concurrent use.
type Path struct {
	src      string
	root     rootKind
	varName  string
	toks     []token
	definite bool
	simple   bool // only single names and single non-negative indexes: walkSimple applies
}

type tokKind int

const (
	tProp     tokKind = iota // ['a'] or .a; several names make a merged object
	tIndex                   // [n] or [n,m,...]
	tSlice                   // [a:b], [a:], [:b]
	tLastN                   // [(@.length-n)]
	tWildcard                // [*] or .*
	tScan                    // ..
	tFilter                  // [?(...)]
)

type sliceKind int

const (
	sliceFrom sliceKind = iota
	sliceTo
	sliceBetween
)

type token struct {
	kind    tokKind
	props   []string
	indexes []int
	slice   sliceKind
	from    int
	to      int
	filter  *filter
	frag    string // Jayway's fragment text, used in messages
}

func (t *token) definite() bool {
	switch t.kind {
	case tProp, tLastN:
		return true
	case tIndex:
		return len(t.indexes) == 1
	}
	return false
}

// Within reports whether the path reads only within the input's member name: a path on the
// input of single names and indexes whose first is name, or a path on the context object or a
// variable.
func (p *Path) Within(name string) bool {
	switch p.root {
	case rootContext, rootVar:
		return true
	case rootInput:
		return p.simple && len(p.toks) > 0 && p.toks[0].kind == tProp && len(p.toks[0].props) == 1 && p.toks[0].props[0] == name
	}
	return false
}

// String gives the path as written.
func (p *Path) String() string { return p.src }

// Definite reports whether the path names a single value (Jayway "definite": no wildcard, scan,
// slice, filter or index list). An indefinite path evaluates to an array.
func (p *Path) Definite() bool { return p.definite }

// Eval evaluates the path in env. A definite path gives its value or an *Error (Kind ErrNotFound);
// an indefinite path gives a []any of its matches, empty when nothing matches. Results share
// structure with env's values (nothing is copied): callers treat them as immutable, as they must
// treat env's values.
func (p *Path) Eval(env Env) (any, error) {
	var root any
	switch p.root {
	case rootInput:
		root = env.Input
	case rootContext:
		root = env.ContextObject()
	case rootVar:
		var ok bool
		if root, ok = env.Variable(p.varName); !ok {
			return nil, &Error{Kind: ErrNotFound, Path: p.src, Msg: "Variable '" + p.varName + "' is not defined"}
		}
	}
	if p.simple {
		if v, ok := p.walkSimple(root); ok {
			return v, nil
		}
	}
	v, err := p.eval(root, root)
	if err != nil {
		return nil, &Error{Kind: ErrNotFound, Path: p.src, Msg: err.Error()}
	}
	return v, nil
}

// walkSimple evaluates a path of single names and non-negative indexes without allocating; false
// when a step finds nothing (eval then gives Jayway's message for it).
func (p *Path) walkSimple(v any) (any, bool) {
	for i := range p.toks {
		t := &p.toks[i]
		switch t.kind {
		case tProp:
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[t.props[0]]; !ok {
				return nil, false
			}
		default: // tIndex
			a, ok := v.([]any)
			if !ok || t.indexes[0] >= len(a) {
				return nil, false
			}
			v = a[t.indexes[0]]
		}
	}
	return v, true
}

// eval runs the tokens on model; root is what `$` means inside filters.
func (p *Path) eval(model, root any) (any, error) {
	c := &evalCtx{root: root, definite: p.definite}
	if err := c.run(p.toks, "$", model); err != nil {
		return nil, err
	}
	if p.definite {
		if len(c.results) == 0 {
			return nil, &notFound{"No results for path: " + p.normalized()}
		}
		return c.results[0], nil
	}
	if c.results == nil {
		return []any{}, nil
	}
	return c.results, nil
}

// normalized is Jayway's rendering of the path: $['a'][0][*]...
func (p *Path) normalized() string {
	var b strings.Builder
	b.WriteString("$")
	for i := range p.toks {
		b.WriteString(p.toks[i].frag)
	}
	return b.String()
}

// maxSteps bounds the work of one evaluation: deep scans can multiply (`$..a..a..a` visits every
// chain of nested matches), and a definition is untrusted input.
const maxSteps = 1 << 22

type evalCtx struct {
	root     any
	definite bool
	results  []any
	steps    int
}

// extend builds the evaluated path for messages; only definite paths show messages, so an
// indefinite evaluation skips the string work.
func (c *evalCtx) extend(cur, frag string) string {
	if !c.definite {
		return cur
	}
	return cur + frag
}

func (c *evalCtx) tick() error {
	c.steps++
	if c.steps > maxSteps {
		return &notFound{"path evaluation exceeded " + strconv.Itoa(maxSteps) + " steps"}
	}
	return nil
}

// fail reports Jayway's PathNotFoundException: an error on a definite path, and on an indefinite
// one simply no match (AWS answers [] rather than failing, as recorded).
func (c *evalCtx) fail(msg string) error {
	if c.definite {
		return &notFound{msg}
	}
	return nil
}

func (c *evalCtx) run(toks []token, cur string, model any) error {
	if err := c.tick(); err != nil {
		return err
	}
	if len(toks) == 0 {
		c.results = append(c.results, model)
		return nil
	}
	t := &toks[0]
	rest := toks[1:]
	switch t.kind {
	case tProp:
		m, ok := model.(map[string]any)
		if !ok {
			return c.fail("Property " + t.frag + " not found in path " + cur)
		}
		if len(t.props) > 1 {
			merged := make(map[string]any, len(t.props))
			for _, k := range t.props {
				if v, ok := m[k]; ok {
					merged[k] = v
				}
			}
			c.results = append(c.results, merged)
			return nil
		}
		k := t.props[0]
		evalPath := c.extend(cur, "['"+k+"']")
		v, ok := m[k]
		if !ok {
			if len(rest) == 0 {
				return c.fail("No results for path: " + evalPath)
			}
			return c.fail("Missing property in path " + evalPath)
		}
		return c.run(rest, evalPath, v)
	case tWildcard:
		switch x := model.(type) {
		case map[string]any:
			for _, k := range sortedKeys(x) {
				if err := c.run(rest, cur, x[k]); err != nil {
					return err
				}
			}
		case []any:
			for _, e := range x {
				if err := c.run(rest, cur, e); err != nil {
					return err
				}
			}
		}
		return nil
	case tIndex, tSlice, tLastN:
		return c.array(t, rest, cur, model)
	case tScan:
		return c.walk(toks[1:], cur, model)
	case tFilter:
		switch x := model.(type) {
		case map[string]any:
			if t.filter.accept(x, c.root) {
				return c.run(rest, cur, x)
			}
		case []any:
			for _, e := range x {
				if t.filter.accept(e, c.root) {
					if err := c.run(rest, cur, e); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	return nil
}

func (c *evalCtx) array(t *token, rest []token, cur string, model any) error {
	if model == nil {
		return c.fail("The path " + cur + " is null")
	}
	arr, ok := model.([]any)
	if !ok {
		return c.fail("Filter: " + t.frag + fragments(rest) + " can only be applied to arrays. Current context is: " + javaString(model))
	}
	at := func(i int) error {
		evalPath := c.extend(cur, "["+strconv.Itoa(i)+"]")
		if i < 0 || i >= len(arr) {
			return c.fail("Index out of bounds when evaluating path " + evalPath)
		}
		return c.run(rest, evalPath, arr[i])
	}
	n := len(arr)
	switch t.kind {
	case tIndex:
		for _, i := range t.indexes {
			if err := at(i); err != nil {
				return err
			}
		}
	case tLastN:
		return at(n + t.from)
	case tSlice:
		from, to := 0, n
		switch t.slice {
		case sliceFrom:
			from = t.from
			if from < 0 {
				from += n
			}
			from = max(0, from)
		case sliceTo:
			to = t.to
			if to < 0 {
				to += n
			}
			to = min(n, to)
		case sliceBetween:
			from, to = t.from, min(n, t.to)
		}
		for i := from; i < to; i++ {
			if err := at(i); err != nil {
				return err
			}
		}
	}
	return nil
}

// walk is Jayway's deep scan: at every container whose shape fits the next token, that token (and
// the rest of the path) is evaluated, then the scan descends into the children.
func (c *evalCtx) walk(toks []token, cur string, model any) error {
	if err := c.tick(); err != nil {
		return err
	}
	t := &toks[0]
	switch x := model.(type) {
	case map[string]any:
		if c.scanMatches(t, model) {
			if err := c.run(toks, cur, model); err != nil {
				return err
			}
		}
		for _, k := range sortedKeys(x) {
			if err := c.walk(toks, cur, x[k]); err != nil {
				return err
			}
		}
	case []any:
		if c.scanMatches(t, model) {
			if err := c.run(toks, cur, model); err != nil {
				return err
			}
		}
		for _, e := range x {
			if err := c.walk(toks, cur, e); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *evalCtx) scanMatches(t *token, model any) bool {
	switch t.kind {
	case tProp:
		m, ok := model.(map[string]any)
		if !ok {
			return false
		}
		for _, k := range t.props {
			if _, ok := m[k]; !ok {
				return false
			}
		}
		return true
	case tIndex, tSlice, tLastN:
		_, ok := model.([]any)
		return ok
	case tWildcard:
		return true
	case tFilter:
		return t.filter.accept(model, c.root)
	}
	return false
}

func fragments(toks []token) string {
	var b strings.Builder
	for i := range toks {
		b.WriteString(toks[i].frag)
	}
	return b.String()
}

func sortedKeys(m map[string]any) []string { return javafmt.SortedKeys(m) }

// javaString renders a value as Jayway's messages show it (json-smart's toString): strings bare,
// containers as compact JSON.
func javaString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return javafmt.JSON(v)
}
