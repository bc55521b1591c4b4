package jsonata

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxStringBytes bounds the strings a function builds (a part of the evaluation's memory bound).
const maxStringBytes = 64 << 20

func stringTooLong(n int) error {
	if n > maxStringBytes {
		return &Error{Code: "U1001", Msg: "Expression evaluation exceeded its memory bound: a string of more than " + itoa(maxStringBytes) + " bytes"}
	}
	return nil
}

func defineStrings() {
	define("string", "<x-b?:s>", 1, func(_ *evaluator, _ *call, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		if pretty, _ := arg(a, 1).(bool); pretty {
			switch a[0].(type) {
			case string, *Lambda, *Native, *partialNative:
			default:
				if f, ok := a[0].(float64); ok && (math.IsInf(f, 0) || math.IsNaN(f)) {
					return nil, &Error{Code: "D3001", Value: f}
				}
				return stringify(a[0], true)
			}
		}
		return toJSString(a[0])
	})
	define("substring", "<s-nn?:s>", 3, fnSubstring)
	define("substringBefore", "<s-s:s>", 2, func(_ *evaluator, _ *call, a []any) (any, error) {
		s, ok := a[0].(string)
		if !ok {
			return nil, nil
		}
		if i := strings.Index(s, a[1].(string)); i >= 0 {
			return s[:i], nil
		}
		return s, nil
	})
	define("substringAfter", "<s-s:s>", 2, func(_ *evaluator, _ *call, a []any) (any, error) {
		s, ok := a[0].(string)
		if !ok {
			return nil, nil
		}
		sep := a[1].(string)
		if i := strings.Index(s, sep); i >= 0 {
			return s[i+len(sep):], nil
		}
		return s, nil
	})
	strFn := func(name string, f func(string) any) {
		define(name, "<s-:s>", 1, func(_ *evaluator, _ *call, a []any) (any, error) {
			s, ok := a[0].(string)
			if !ok {
				return nil, nil
			}
			return f(s), nil
		})
	}
	strFn("lowercase", func(s string) any { return strings.ToLower(s) })
	strFn("uppercase", func(s string) any { return strings.ToUpper(s) })
	strFn("trim", func(s string) any { return trim(s) })
	define("length", "<s-:n>", 1, func(_ *evaluator, _ *call, a []any) (any, error) {
		s, ok := a[0].(string)
		if !ok {
			return nil, nil
		}
		return float64(utf8.RuneCountInString(s)), nil
	})
	define("pad", "<s-ns?:s>", 3, fnPad)
	define("match", "<s-f<s:o>n?:a<o>>", 3, fnMatch)
	define("contains", "<s-(sf):b>", 2, fnContains)
	define("replace", "<s-(sf)(sf)n?:s>", 4, fnReplace)
	define("split", "<s-(sf)n?:a<s>>", 3, fnSplit)
	define("join", "<a<s>s?:s>", 2, func(_ *evaluator, _ *call, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		sep, _ := arg(a, 1).(string)
		parts := items(a[0])
		ss := make([]string, len(parts))
		n := 0
		for i, p := range parts {
			ss[i] = p.(string)
			n += len(ss[i]) + len(sep)
		}
		if err := stringTooLong(n); err != nil {
			return nil, err
		}
		return strings.Join(ss, sep), nil
	})
}

var trimRE = regexp.MustCompile(`[ \t\n\r]+`)

func trim(s string) string {
	r := trimRE.ReplaceAllString(s, " ")
	r = strings.TrimPrefix(r, " ")
	return strings.TrimSuffix(r, " ")
}

// jsSliceBounds gives Array.prototype.slice's bounds for start and end on a length n.
func jsSliceBounds(n int, start, end float64) (int, int) {
	clamp := func(x float64) int {
		x = math.Trunc(x)
		if x < 0 {
			x += float64(n)
			if x < 0 {
				x = 0
			}
		}
		if x > float64(n) {
			x = float64(n)
		}
		return int(x)
	}
	s, e := clamp(start), clamp(end)
	if e < s {
		e = s
	}
	return s, e
}

func fnSubstring(_ *evaluator, _ *call, a []any) (any, error) {
	s, ok := a[0].(string)
	if !ok {
		return nil, nil
	}
	runes := []rune(s)
	n := float64(len(runes))
	start := a[1].(float64)
	if n+start < 0 {
		start = 0
	}
	if l, ok := arg(a, 2).(float64); ok {
		if l <= 0 {
			return "", nil
		}
		end := start + l
		if start < 0 {
			end = n + start + l
		}
		i, j := jsSliceBounds(len(runes), start, end)
		return string(runes[i:j]), nil
	}
	i, j := jsSliceBounds(len(runes), start, n)
	return string(runes[i:j]), nil
}

func fnPad(_ *evaluator, _ *call, a []any) (any, error) {
	s, ok := a[0].(string)
	if !ok {
		return nil, nil
	}
	width := a[1].(float64)
	ch, _ := arg(a, 2).(string)
	if ch == "" {
		ch = " "
	}
	padLen := int(math.Abs(math.Trunc(width))) - utf8.RuneCountInString(s)
	if padLen <= 0 {
		return s, nil
	}
	if err := stringTooLong(padLen * len(ch)); err != nil {
		return nil, err
	}
	padding := []rune(strings.Repeat(ch, padLen))[:padLen]
	if width > 0 {
		return s + string(padding), nil
	}
	return string(padding) + s, nil
}

// utf16Index gives the UTF-16 offset of byte offset b in s (JavaScript's string indexes).
func utf16Index(s string, b int) int {
	n := 0
	for i, r := range s {
		if i >= b {
			break
		}
		n += utf16.RuneLen(r)
	}
	return n
}

// byteIndex gives the byte offset of UTF-16 offset u in s.
func byteIndex(s string, u int) int {
	n := 0
	for i, r := range s {
		if n >= u {
			return i
		}
		n += utf16.RuneLen(r)
	}
	return len(s)
}

// regexMatcher gives the function a regular expression literal evaluates to: called with a string
// (and a start offset) it gives the first match from there as {match, start, end, groups, next}.
func regexMatcher(spec *regexSpec, pos int) *Native {
	return &Native{name: "regex", arity: 2, fn: func(_ *evaluator, _ *call, a []any) (any, error) {
		s, ok := arg(a, 0).(string)
		if !ok {
			return nil, nil
		}
		from := 0
		if f, ok := arg(a, 1).(float64); ok {
			from = byteIndex(s, int(f))
		}
		return matchAt(spec, s, from, pos)
	}}
}

func matchAt(spec *regexSpec, s string, from int, pos int) (any, error) {
	if from > len(s) {
		return nil, nil
	}
	loc := spec.re.FindStringSubmatchIndex(s[from:])
	if loc == nil {
		return nil, nil
	}
	start, end := from+loc[0], from+loc[1]
	o := NewObject(5)
	o.Set("match", s[start:end])
	o.Set("start", float64(utf16Index(s, start)))
	o.Set("end", float64(utf16Index(s, end)))
	groups := &Array{Items: []any{}}
	for g := 1; 2*g < len(loc); g++ {
		if loc[2*g] < 0 {
			groups.Items = append(groups.Items, "")
			continue
		}
		groups.Items = append(groups.Items, s[from+loc[2*g]:from+loc[2*g+1]])
	}
	o.Set("groups", groups)
	o.Set("next", &Native{name: "next", arity: 0, fn: func(_ *evaluator, _ *call, _ []any) (any, error) {
		if end >= len(s) {
			return nil, nil
		}
		nx, err := matchAt(spec, s, end, pos)
		if err != nil {
			return nil, err
		}
		if no, ok := nx.(*Object); ok {
			if m, _ := no.Get("match"); m == "" {
				return nil, &Error{Code: "D1004", Position: pos, Value: spec.source}
			}
		}
		return nx, nil
	}})
	return o, nil
}

// matchResult is one result of a matcher function.
type matchResult struct {
	match      string
	start, end int // byte offsets in the string matched
	groups     []any
	next       any
}

func (ev *evaluator) runMatcher(matcher any, s string, args []any, env *frame) (*matchResult, error) {
	r, err := ev.apply(matcher, args, nil, env)
	if err != nil || r == nil {
		return nil, err
	}
	o, ok := r.(*Object)
	if !ok {
		return nil, &Error{Code: "T1010"}
	}
	start, sok := o.vals["start"].(float64)
	end, eok := o.vals["end"].(float64)
	groups, gok := o.vals["groups"].(*Array)
	if !sok && !eok && !gok && !isFunction(o.vals["next"]) {
		return nil, &Error{Code: "T1010"}
	}
	m := &matchResult{next: o.vals["next"]}
	m.match, _ = o.vals["match"].(string)
	m.start = byteIndex(s, int(start))
	m.end = byteIndex(s, int(end))
	if !eok {
		m.end = m.start + len(m.match)
	}
	if groups != nil {
		m.groups = groups.Items
	}
	return m, nil
}

func (ev *evaluator) nextMatch(m *matchResult, s string, env *frame) (*matchResult, error) {
	if !isFunction(m.next) {
		return nil, nil
	}
	return ev.runMatcher(m.next, s, nil, env)
}

func fnContains(ev *evaluator, c *call, a []any) (any, error) {
	s, ok := a[0].(string)
	if !ok {
		return nil, nil
	}
	if tok, ok := a[1].(string); ok {
		return strings.Contains(s, tok), nil
	}
	m, err := ev.runMatcher(a[1], s, []any{s}, c.env)
	if err != nil {
		return nil, err
	}
	return m != nil, nil
}

func limitArg(a []any, i int, code string) (int, bool, error) {
	l, ok := arg(a, i).(float64)
	if !ok {
		return 0, false, nil
	}
	if l < 0 {
		return 0, false, &Error{Code: code, Value: l, Index: i + 1}
	}
	return int(math.Ceil(l)), true, nil
}

func fnMatch(ev *evaluator, c *call, a []any) (any, error) {
	s, ok := a[0].(string)
	if !ok {
		return nil, nil
	}
	limit, hasLimit, err := limitArg(a, 2, "D3040")
	if err != nil {
		return nil, err
	}
	out := newSeq()
	if hasLimit && limit == 0 {
		return out, nil
	}
	m, err := ev.runMatcher(a[1], s, []any{s}, c.env)
	for count := 0; err == nil && m != nil && (!hasLimit || count < limit); count++ {
		o := NewObject(3)
		o.Set("match", m.match)
		o.Set("index", float64(utf16Index(s, m.start)))
		o.Set("groups", &Array{Items: m.groups})
		out.Items = append(out.Items, o)
		m, err = ev.nextMatch(m, s, c.env)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

func fnSplit(ev *evaluator, c *call, a []any) (any, error) {
	s, ok := a[0].(string)
	if !ok {
		return nil, nil
	}
	limit, hasLimit, err := limitArg(a, 2, "D3020")
	if err != nil {
		return nil, err
	}
	out := &Array{Items: []any{}}
	if hasLimit && limit == 0 {
		return out, nil
	}
	if sep, ok := a[1].(string); ok {
		var parts []string
		if sep == "" {
			for _, r := range s {
				parts = append(parts, string(r))
			}
		} else {
			parts = strings.Split(s, sep)
		}
		strLimit := 0
		if hasLimit {
			strLimit = int(math.Trunc(arg(a, 2).(float64)))
		}
		for i, p := range parts {
			if hasLimit && i >= strLimit {
				break
			}
			out.Items = append(out.Items, p)
		}
		return out, nil
	}
	m, err := ev.runMatcher(a[1], s, []any{s}, c.env)
	if err != nil {
		return nil, err
	}
	if m == nil {
		out.Items = append(out.Items, s)
		return out, nil
	}
	start, count := 0, 0
	for m != nil && (!hasLimit || count < limit) {
		out.Items = append(out.Items, s[start:max(start, m.start)])
		start = m.end
		if m, err = ev.nextMatch(m, s, c.env); err != nil {
			return nil, err
		}
		count++
	}
	if !hasLimit || count < limit {
		out.Items = append(out.Items, s[min(start, len(s)):])
	}
	return out, nil
}

func fnReplace(ev *evaluator, c *call, a []any) (any, error) {
	s, ok := a[0].(string)
	if !ok {
		return nil, nil
	}
	if p, ok := a[1].(string); ok && p == "" {
		return nil, &Error{Code: "D3010", Value: p, Index: 2}
	}
	limit, hasLimit, err := limitArg(a, 3, "D3011")
	if err != nil {
		return nil, err
	}
	if hasLimit && limit == 0 {
		return s, nil
	}
	if p, ok := a[1].(string); ok {
		repl, ok := a[2].(string)
		if !ok {
			repl = ""
		}
		n := -1
		if hasLimit {
			n = limit
		}
		r := strings.Replace(s, p, repl, n)
		return r, stringTooLong(len(r))
	}
	m, err := ev.runMatcher(a[1], s, []any{s}, c.env)
	if err != nil || m == nil {
		return s, err
	}
	var b strings.Builder
	pos, count := 0, 0
	for m != nil && (!hasLimit || count < limit) {
		b.WriteString(s[pos:max(pos, m.start)])
		sub, err := ev.substitute(a[2], m, c.env)
		if err != nil {
			return nil, err
		}
		b.WriteString(sub)
		if err := stringTooLong(b.Len()); err != nil {
			return nil, err
		}
		pos = m.start + len(m.match)
		count++
		if m, err = ev.nextMatch(m, s, c.env); err != nil {
			return nil, err
		}
	}
	b.WriteString(s[min(pos, len(s)):])
	return b.String(), nil
}

func (ev *evaluator) substitute(repl any, m *matchResult, env *frame) (string, error) {
	if r, ok := repl.(string); ok {
		return expandReplacement(r, m), nil
	}
	mo := NewObject(4)
	mo.Set("match", m.match)
	mo.Set("index", float64(m.start))
	mo.Set("groups", &Array{Items: m.groups})
	v, err := ev.apply(repl, []any{mo}, nil, env)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", &Error{Code: "D3012", Value: v}
	}
	return s, nil
}

// expandReplacement substitutes $0 (the match), $N (group N, as many digits as there are groups)
// and $$ in a replacement string.
func expandReplacement(r string, m *matchResult) string {
	var b strings.Builder
	pos := 0
	for pos < len(r) {
		i := strings.IndexByte(r[pos:], '$')
		if i < 0 {
			break
		}
		b.WriteString(r[pos : pos+i])
		pos += i + 1
		if pos >= len(r) {
			b.WriteByte('$')
			break
		}
		switch d := r[pos]; {
		case d == '$':
			b.WriteByte('$')
			pos++
		case d == '0':
			b.WriteString(m.match)
			pos++
		default:
			maxDigits := 1
			if len(m.groups) > 0 {
				maxDigits = int(math.Floor(math.Log10(float64(len(m.groups))))) + 1
			}
			idx, n := leadingInt(r[pos:min(len(r), pos+maxDigits)])
			if maxDigits > 1 && idx > len(m.groups) {
				idx, n = leadingInt(r[pos:min(len(r), pos+maxDigits-1)])
			}
			if n == 0 {
				b.WriteByte('$')
				continue
			}
			if idx >= 1 && idx <= len(m.groups) {
				if g, ok := m.groups[idx-1].(string); ok {
					b.WriteString(g)
				}
			}
			pos += len(strconv.Itoa(idx))
		}
	}
	if pos < len(r) {
		b.WriteString(r[pos:])
	}
	return b.String()
}

// leadingInt parses the leading decimal digits of s, as JavaScript's parseInt does.
func leadingInt(s string) (int, int) {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	if n == 0 {
		return 0, 0
	}
	v, _ := strconv.Atoi(s[:n])
	return v, n
}
