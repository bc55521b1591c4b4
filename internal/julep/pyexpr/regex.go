package pyexpr

import (
	"fmt"
	"regexp"
	"strings"

	"go.starlark.net/starlark"
)

// Julep's regular expressions are re2's (google-re2), as Go's regexp is: the same syntax and
// linear time. Python's named groups (?P<name>...) are RE2 syntax too.

func compileRE(pattern string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("re.error: %v", err)
	}
	return re, nil
}

func reMembers() starlark.StringDict {
	return starlark.StringDict{
		"search":    fn("search", reFind("search")),
		"match":     fn("match", reFind("match")),
		"fullmatch": fn("fullmatch", reFind("fullmatch")),
		"findall":   fn("findall", findall),
		"sub":       fn("sub", sub),
		"split":     fn("split", reSplit),
		"escape":    fn("escape", str1(func(s string) (string, error) { return regexp.QuoteMeta(s), nil })),
	}
}

func searchRegex(t *starlark.Thread, b *starlark.Builtin, a starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	return reFind("search")(t, b, a, kw)
}

func matchRegex(t *starlark.Thread, b *starlark.Builtin, a starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	m, err := reFind("fullmatch")(t, b, a, kw)
	if err != nil {
		return nil, err
	}
	return starlark.Bool(m != starlark.None), nil
}

func reFind(mode string) builtinFn {
	return func(_ *starlark.Thread, b *starlark.Builtin, a starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
		var pattern, s string
		if err := starlark.UnpackPositionalArgs(b.Name(), a, kw, 2, &pattern, &s); err != nil {
			return nil, err
		}
		switch mode {
		case "match":
			pattern = `\A(?:` + pattern + `)`
		case "fullmatch":
			pattern = `\A(?:` + pattern + `)\z`
		}
		re, err := compileRE(pattern)
		if err != nil {
			return nil, err
		}
		loc := re.FindStringSubmatchIndex(s)
		if loc == nil {
			return starlark.None, nil
		}
		return &match{s: s, loc: loc, names: re.SubexpNames()}, nil
	}
}

func findall(_ *starlark.Thread, b *starlark.Builtin, a starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	var pattern, s string
	if err := starlark.UnpackPositionalArgs(b.Name(), a, kw, 2, &pattern, &s); err != nil {
		return nil, err
	}
	re, err := compileRE(pattern)
	if err != nil {
		return nil, err
	}
	var out []starlark.Value
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		switch len(m) {
		case 1:
			out = append(out, starlark.String(m[0]))
		case 2:
			out = append(out, starlark.String(m[1]))
		default:
			t := make(starlark.Tuple, len(m)-1)
			for i, g := range m[1:] {
				t[i] = starlark.String(g)
			}
			out = append(out, t)
		}
	}
	return starlark.NewList(out), nil
}

// sub replaces with Python's template syntax: \1 and \g<name> become ${1} and ${name}.
func sub(_ *starlark.Thread, b *starlark.Builtin, a starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	var pattern, repl, s string
	count := 0
	if err := starlark.UnpackArgs(b.Name(), a, kw, "pattern", &pattern, "repl", &repl, "string", &s, "count?", &count); err != nil {
		return nil, err
	}
	re, err := compileRE(pattern)
	if err != nil {
		return nil, err
	}
	tmpl := strings.ReplaceAll(repl, "$", "$$")
	tmpl = pyGroupRef.ReplaceAllString(tmpl, "$${$1$2}")
	tmpl = strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\\`, `\`).Replace(tmpl)
	n := 0
	out := re.ReplaceAllStringFunc(s, func(m string) string {
		n++
		if count > 0 && n > count {
			return m
		}
		return string(re.ExpandString(nil, tmpl, m, re.FindStringSubmatchIndex(m)))
	})
	return starlark.String(out), nil
}

func reSplit(_ *starlark.Thread, b *starlark.Builtin, a starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	var pattern, s string
	if err := starlark.UnpackPositionalArgs(b.Name(), a, kw, 2, &pattern, &s); err != nil {
		return nil, err
	}
	re, err := compileRE(pattern)
	if err != nil {
		return nil, err
	}
	var out []starlark.Value
	for _, p := range re.Split(s, -1) {
		out = append(out, starlark.String(p))
	}
	return starlark.NewList(out), nil
}

// match is Python's re.Match: group, groups, groupdict, start, end, span.
type match struct {
	s     string
	loc   []int
	names []string
}

var _ starlark.HasAttrs = (*match)(nil)

func (m *match) String() string {
	return fmt.Sprintf("<re.Match object; span=(%d, %d), match=%s>", m.loc[0], m.loc[1], pyQuote(m.s[m.loc[0]:m.loc[1]]))
}
func (m *match) Type() string          { return "re.Match" }
func (m *match) Freeze()               {}
func (m *match) Truth() starlark.Bool  { return true }
func (m *match) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: re.Match") }
func (m *match) AttrNames() []string {
	return []string{"end", "group", "groupdict", "groups", "span", "start", "string"}
}

func (m *match) group(i int) starlark.Value {
	if i < 0 || 2*i+1 >= len(m.loc) || m.loc[2*i] < 0 {
		return starlark.None
	}
	return starlark.String(m.s[m.loc[2*i]:m.loc[2*i+1]])
}

func (m *match) index(v starlark.Value) (int, error) {
	if s, ok := v.(starlark.String); ok {
		for i, n := range m.names {
			if n == string(s) && n != "" {
				return i, nil
			}
		}
		return 0, fmt.Errorf("IndexError: no such group %s", s)
	}
	i, err := starlark.AsInt32(v)
	if err != nil || i < 0 || i >= len(m.names) {
		return 0, fmt.Errorf("IndexError: no such group")
	}
	return i, nil
}

func (m *match) Attr(name string) (starlark.Value, error) {
	one := func(f func(int) starlark.Value) builtinFn {
		return func(_ *starlark.Thread, b *starlark.Builtin, a starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
			if len(a) == 0 {
				return f(0), nil
			}
			if len(a) > 1 && b.Name() == "group" {
				t := make(starlark.Tuple, len(a))
				for k, x := range a {
					i, err := m.index(x)
					if err != nil {
						return nil, err
					}
					t[k] = f(i)
				}
				return t, nil
			}
			i, err := m.index(a[0])
			if err != nil {
				return nil, err
			}
			return f(i), nil
		}
	}
	switch name {
	case "group":
		return fn(name, one(m.group)), nil
	case "start", "end":
		k := map[string]int{"start": 0, "end": 1}[name]
		return fn(name, one(func(i int) starlark.Value { return starlark.MakeInt(m.loc[2*i+k]) })), nil
	case "span":
		return fn(name, one(func(i int) starlark.Value {
			return starlark.Tuple{starlark.MakeInt(m.loc[2*i]), starlark.MakeInt(m.loc[2*i+1])}
		})), nil
	case "groups":
		return fn(name, func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
			t := make(starlark.Tuple, len(m.names)-1)
			for i := range t {
				t[i] = m.group(i + 1)
			}
			return t, nil
		}), nil
	case "groupdict":
		return fn(name, func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
			d := starlark.NewDict(len(m.names))
			for i, n := range m.names {
				if n != "" {
					_ = d.SetKey(starlark.String(n), m.group(i))
				}
			}
			return d, nil
		}), nil
	case "string":
		return starlark.String(m.s), nil
	}
	return nil, nil
}

// pyGroupRef is a group reference in a Python replacement: \g<name> or \1.
var pyGroupRef = regexp.MustCompile(`\\g<(\w+)>|\\(\d+)`)
