package jsonpath

import (
	"regexp"
	"strconv"
	"strings"
)

// maxPathLen bounds what Parse reads; Step Functions definitions are at most 1 MB, and a longer
// path is certainly not one.
const maxPathLen = 1 << 16

// Parse parses any path AWS accepts where a Path is allowed (InputPath, OutputPath, ItemsPath,
// Choice Variable, "x.$" values, intrinsic arguments): `$…` on the input, `$$…` on the context
// object, `$name…` on a variable, with Jayway's dot and bracket names, indexes, index lists,
// slices, `[(@.length-n)]`, wildcards, deep scan and filters.
func Parse(s string) (*Path, error) { return parse(s, false) }

// ParseReference parses a Reference Path (ResultPath, and wherever AWS requires one): only `$`,
// `.name`, `['name']` and `[n]`; no wildcard, scan, slice, filter, index list or name list.
func ParseReference(s string) (*Path, error) { return parse(s, true) }

func parse(src string, reference bool) (*Path, error) {
	if len(src) > maxPathLen {
		return nil, syntaxErr(truncate(src), "path is longer than "+strconv.Itoa(maxPathLen)+" characters")
	}
	s := strings.TrimSpace(src)
	p := &Path{src: src}
	var rest string
	switch {
	case strings.HasPrefix(s, "$$"):
		p.root, rest = rootContext, s[2:]
	case strings.HasPrefix(s, "$"):
		i := 1
		for i < len(s) && isIdentByte(s[i], i == 1) {
			i++
		}
		if i > 1 {
			p.root, p.varName = rootVar, s[1:i]
		}
		rest = s[i:]
	default:
		return nil, syntaxErr(src, "Path must start with '$'")
	}
	toks, err := compileTokens(rest)
	if err != nil {
		return nil, syntaxErr(src, err.Error())
	}
	p.toks = toks
	p.definite, p.simple = true, true
	for i := range toks {
		if !toks[i].definite() {
			p.definite = false
		}
		t := &toks[i]
		if !(t.kind == tProp && len(t.props) == 1) && !(t.kind == tIndex && len(t.indexes) == 1 && t.indexes[0] >= 0) {
			p.simple = false
		}
		if toks[i].kind == tProp && len(toks[i].props) > 1 && i != len(toks)-1 {
			return nil, syntaxErr(src, "Multi properties can only be used as path leafs: $"+fragments(toks[:i+1]))
		}
	}
	if reference {
		for i := range toks {
			t := &toks[i]
			ok := (t.kind == tProp && len(t.props) == 1) || (t.kind == tIndex && len(t.indexes) == 1 && t.indexes[0] >= 0)
			if !ok {
				return nil, syntaxErr(src, "a Reference Path may use only '.name', \"['name']\" and '[n]', found "+t.frag)
			}
		}
	}
	return p, nil
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

func isIdentByte(c byte, first bool) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9')
}

type compileError string

func (e compileError) Error() string { return string(e) }

// compileTokens reads what follows the root, as Jayway 2.0's PathCompiler does: `.name` runs to the
// next '.', '[' or space; `[...]` runs to its matching ']'.
func compileTokens(s string) ([]token, error) {
	if s != "" && s[0] != '.' && s[0] != '[' {
		return nil, compileError("Illegal character at position 1 expected '.' or '['")
	}
	if strings.HasSuffix(s, "..") {
		return nil, compileError("A path can not end with a scan.")
	}
	var toks []token
	i := 0
	for i < len(s) {
		c := s[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			return nil, compileError("Space not allowed in path")
		case '[':
			n, err := bracketLen(s, i)
			if err != nil {
				return nil, err
			}
			t, err := analyzeBracket(s[i : i+n])
			if err != nil {
				return nil, err
			}
			toks = append(toks, t)
			i += n
		case '.':
			i++
			if i >= len(s) {
				return nil, compileError("Path must not end with a '.'")
			}
			if s[i] == '.' {
				toks = append(toks, token{kind: tScan, frag: ".."})
				i++
				if i < len(s) && s[i] == '.' {
					return nil, compileError("Character '.' on position " + strconv.Itoa(i) + " is not valid.")
				}
				continue
			}
			n := nameLen(s, i)
			if n == 0 {
				continue // "$.[...]": Jayway reads the bracket next
			}
			toks = append(toks, nameToken(s[i:i+n]))
			i += n
		default:
			// After "..", a bare name or '*'.
			if len(toks) == 0 || toks[len(toks)-1].kind != tScan {
				return nil, compileError("Could not parse token starting at position " + strconv.Itoa(i))
			}
			n := nameLen(s, i)
			toks = append(toks, nameToken(s[i:i+n]))
			i += n
		}
	}
	if len(toks) > 0 && toks[len(toks)-1].kind == tScan {
		return nil, compileError("A path can not end with a scan.")
	}
	return toks, nil
}

func nameLen(s string, i int) int {
	n := 0
	for i+n < len(s) {
		switch s[i+n] {
		case '.', '[', ' ', '\t', '\n', '\r':
			return n
		}
		n++
	}
	return n
}

func nameToken(name string) token {
	if name == "*" {
		return token{kind: tWildcard, frag: "[*]"}
	}
	return token{kind: tProp, props: []string{name}, frag: "['" + name + "']"}
}

// bracketLen gives the length of the bracket expression at s[i] ('['), nested brackets and quoted
// names included.
func bracketLen(s string, i int) (int, error) {
	depth := 0
	inQuote := false
	for j := i; j < len(s); j++ {
		c := s[j]
		if inQuote {
			if c == '\'' {
				inQuote = false
			}
			continue
		}
		switch c {
		case '\'':
			inQuote = true
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return j - i + 1, nil
			}
		}
	}
	if inQuote {
		return 0, compileError("Property has not been closed - missing closing '")
	}
	return 0, compileError("Brackets are not balanced: missing closing ']'")
}

var lastNRe = regexp.MustCompile(`^\(\s*@\.(?:length|size\s*\(\s*\))\s*-\s*(\d+)\s*\)$`)

// analyzeBracket reads one `[...]` fragment.
func analyzeBracket(frag string) (token, error) {
	inner := strings.TrimSpace(frag[1 : len(frag)-1])
	switch {
	case inner == "*":
		return token{kind: tWildcard, frag: "[*]"}, nil
	case strings.HasPrefix(inner, "?"):
		f, err := parseFilter(frag)
		if err != nil {
			return token{}, err
		}
		return token{kind: tFilter, filter: f, frag: "[?]"}, nil
	case strings.HasPrefix(inner, "'"):
		return analyzeProps(frag, inner)
	case strings.HasPrefix(inner, "("):
		m := lastNRe.FindStringSubmatch(inner)
		if m == nil {
			return token{}, compileError("Invalid function in " + frag + ". Supported functions are: [(@.length - n)] and [(@.size() - n)]")
		}
		n, err := strconv.Atoi(m[1])
		if err != nil {
			return token{}, compileError("Invalid index in " + frag)
		}
		return token{kind: tLastN, from: -n, frag: "[@.size()-" + m[1] + "]"}, nil
	}
	return analyzeArray(frag, inner)
}

// analyzeProps reads ['a'] or ['a','b']. Names are taken verbatim between single quotes, as AWS
// does (a backslash is an ordinary character).
func analyzeProps(frag, inner string) (token, error) {
	var props []string
	i := 0
	for {
		for i < len(inner) && inner[i] == ' ' {
			i++
		}
		if i >= len(inner) || inner[i] != '\'' {
			return token{}, compileError("Could not analyze path component: " + frag)
		}
		end := strings.IndexByte(inner[i+1:], '\'')
		if end < 0 {
			return token{}, compileError("Property has not been closed - missing closing '")
		}
		props = append(props, inner[i+1:i+1+end])
		i += end + 2
		for i < len(inner) && inner[i] == ' ' {
			i++
		}
		if i == len(inner) {
			break
		}
		if inner[i] != ',' {
			return token{}, compileError("Property must be separated by comma or Property must be terminated close square bracket at index " + strconv.Itoa(i))
		}
		i++
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, p := range props {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("'" + p + "'")
	}
	b.WriteByte(']')
	return token{kind: tProp, props: props, frag: b.String()}, nil
}

// analyzeArray reads [n], [n,m,...], [a:b], [a:], [:b].
func analyzeArray(frag, inner string) (token, error) {
	compact := strings.ReplaceAll(inner, " ", "")
	if compact == "" {
		return token{}, compileError("Could not analyze path component: " + frag)
	}
	for i := 0; i < len(compact); i++ {
		c := compact[i]
		if !(c >= '0' && c <= '9') && c != ',' && c != ':' && c != '-' {
			return token{}, compileError("Could not analyze path component: " + frag)
		}
	}
	atoi := func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || n > 1<<31-1 || n < -(1<<31) {
			return 0, compileError("Could not analyze path component: " + frag + ": '" + s + "' is not an integer")
		}
		return n, nil
	}
	if a, b, ok := strings.Cut(compact, ":"); ok {
		if strings.Contains(b, ":") || strings.Contains(compact, ",") {
			return token{}, compileError("Could not analyze path component: " + frag)
		}
		switch {
		case a == "" && b == "":
			return token{}, compileError("Could not analyze path component: " + frag)
		case a == "":
			to, err := atoi(b)
			if err != nil {
				return token{}, err
			}
			return token{kind: tSlice, slice: sliceTo, to: to, frag: "[:" + strconv.Itoa(to) + "]"}, nil
		case b == "":
			from, err := atoi(a)
			if err != nil {
				return token{}, err
			}
			return token{kind: tSlice, slice: sliceFrom, from: from, frag: "[" + strconv.Itoa(from) + ":]"}, nil
		default:
			from, err := atoi(a)
			if err != nil {
				return token{}, err
			}
			to, err := atoi(b)
			if err != nil {
				return token{}, err
			}
			return token{kind: tSlice, slice: sliceBetween, from: from, to: to,
				frag: "[" + strconv.Itoa(from) + ":" + strconv.Itoa(to) + "]"}, nil
		}
	}
	var idx []int
	var parts []string
	for _, s := range strings.Split(compact, ",") {
		n, err := atoi(s)
		if err != nil {
			return token{}, err
		}
		idx = append(idx, n)
		parts = append(parts, strconv.Itoa(n))
	}
	return token{kind: tIndex, indexes: idx, frag: "[" + strings.Join(parts, ",") + "]"}, nil
}
