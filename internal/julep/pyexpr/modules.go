package pyexpr

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	starmath "go.starlark.net/lib/math"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// moduleMembers lists what Julep's stdlib table exposes (evaluator.py) and Eval provides.
var moduleMembers = map[string][]string{
	"json":       {"loads", "dumps"},
	"re":         {"search", "match", "fullmatch", "findall", "sub", "split", "escape"},
	"math":       {"sqrt", "exp", "ceil", "floor", "isinf", "isnan", "log", "log10", "log2", "pow", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "pi", "e"},
	"string":     {"ascii_letters", "ascii_lowercase", "ascii_uppercase", "digits", "hexdigits", "octdigits", "punctuation", "whitespace", "printable"},
	"base64":     {"b64encode", "b64decode"},
	"statistics": {"mean", "median", "median_low", "median_high", "mode", "stdev"},
	"random":     {"choice", "randint", "random"},
	"time":       {"time"},
	"urllib":     {"parse"},
	"csv":        {"reader", "DictReader"},
	"yaml":       {"load", "safe_load"},
}

// julepStdlib is every member of Julep's stdlib table (evaluator.py, the stdlib_* classes).
var julepStdlib = map[string][]string{
	"re":         {"fullmatch", "search", "escape", "findall", "finditer", "match", "split", "sub", "subn"},
	"json":       {"loads", "dumps"},
	"yaml":       {"load", "dump", "safe_load", "safe_dump"},
	"string":     moduleMembers["string"],
	"datetime":   {"timezone", "datetime", "timedelta"},
	"math":       moduleMembers["math"],
	"statistics": {"mean", "stdev", "geometric_mean", "median", "median_low", "median_high", "mode", "quantiles"},
	"base64":     {"b64encode", "b64decode"},
	"urllib":     {"parse"},
	"random":     {"choice", "sample", "randint", "random"},
	"time":       {"strftime", "strptime", "time"},
	"csv": {"reader", "writer", "register_dialect", "unregister_dialect", "get_dialect", "list_dialects",
		"field_size_limit", "DictReader", "DictWriter", "Dialect", "excel", "excel_tab", "unix_dialect",
		"Sniffer", "QUOTE_ALL", "QUOTE_MINIMAL", "QUOTE_NONNUMERIC", "QUOTE_NONE", "QUOTE_NOTNULL", "QUOTE_STRINGS", "Error"},
}

func moduleHas(mod, name string) bool { return contains(moduleMembers[mod], name) }

// memberReason says why mod.name does not run: Julep lacks it too, or sinew does.
func memberReason(mod, name string) string {
	if !contains(julepStdlib[mod], name) {
		return "in Julep " + mod + " has no member " + name + " (Julep's evaluator fails with AttributeError); it has " + strings.Join(julepStdlib[mod], ", ")
	}
	return "sinew does not provide " + mod + "." + name + "; Eval provides " + mod + "." + strings.Join(moduleMembers[mod], ", "+mod+".")
}

func modules() map[string]*starlarkstruct.Module {
	mods := map[string]*starlarkstruct.Module{}
	member := func(mod string, m starlark.StringDict) {
		mods[mod] = &starlarkstruct.Module{Name: mod, Members: m}
	}
	mathM := starlark.StringDict{}
	for _, n := range moduleMembers["math"] {
		mathM[n] = starmath.Module.Members[n]
	}
	member("math", mathM)
	member("json", starlark.StringDict{"loads": fn("loads", jsonLoads), "dumps": fn("dumps", jsonDumps)})
	member("re", reMembers())
	strM := starlark.StringDict{}
	for k, v := range stringConsts {
		strM[k] = starlark.String(v)
	}
	member("string", strM)
	member("base64", starlark.StringDict{
		"b64encode": fn("b64encode", str1(func(s string) (string, error) { return base64.StdEncoding.EncodeToString([]byte(s)), nil })),
		"b64decode": fn("b64decode", str1(func(s string) (string, error) {
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return "", fmt.Errorf("binascii.Error: invalid base64 string: %v", err)
			}
			return string(b), nil
		})),
	})
	member("statistics", statsMembers())
	member("random", starlark.StringDict{
		"random": fn("random", func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
			return starlark.Float(rand.Float64()), nil
		}),
		"randint": fn("randint", func(_ *starlark.Thread, b *starlark.Builtin, a starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
			var lo, hi int
			if err := starlark.UnpackPositionalArgs(b.Name(), a, kw, 2, &lo, &hi); err != nil {
				return nil, err
			}
			if hi < lo {
				return nil, fmt.Errorf("empty range in randint(%d, %d)", lo, hi)
			}
			return starlark.MakeInt(lo + rand.IntN(hi-lo+1)), nil
		}),
		"choice": fn("choice", func(_ *starlark.Thread, b *starlark.Builtin, a starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
			var xs starlark.Indexable
			if err := starlark.UnpackPositionalArgs(b.Name(), a, kw, 1, &xs); err != nil {
				return nil, err
			}
			if xs.Len() == 0 {
				return nil, fmt.Errorf("cannot choose from an empty sequence")
			}
			return xs.Index(rand.IntN(xs.Len())), nil
		}),
	})
	member("time", starlark.StringDict{"time": fn("time", func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
		return starlark.Float(float64(time.Now().UnixNano()) / 1e9), nil
	})})
	member("csv", starlark.StringDict{"reader": fn("reader", csvReader(false)), "DictReader": fn("DictReader", csvReader(true))})
	member("yaml", starlark.StringDict{"load": fn("load", yamlLoad), "safe_load": fn("safe_load", yamlLoad)})
	member("urllib", starlark.StringDict{"parse": &starlarkstruct.Module{Name: "parse", Members: starlark.StringDict{
		"quote":   fn("quote", quoteFn),
		"unquote": fn("unquote", str1(unquote)),
	}}})
	return mods
}

func str1(f func(string) (string, error)) builtinFn {
	return func(_ *starlark.Thread, b *starlark.Builtin, a starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
		var s string
		if err := starlark.UnpackPositionalArgs(b.Name(), a, kw, 1, &s); err != nil {
			return nil, err
		}
		r, err := f(s)
		return starlark.String(r), err
	}
}

func jsonLoads(_ *starlark.Thread, b *starlark.Builtin, a starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	var s string
	if err := starlark.UnpackPositionalArgs(b.Name(), a, kw, 1, &s); err != nil {
		return nil, err
	}
	return decodeJSON(s)
}

func decodeJSON(s string) (starlark.Value, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("JSONDecodeError: %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("JSONDecodeError: Extra data")
	}
	// Decoded with UseNumber: toStar keeps Python's int/float split ("3" an int, "3.0" a float).
	return toStar(v, 0)
}

// jsonDumps is Python's json.dumps: ", " and ": " separators, non-ASCII escaped unless
// ensure_ascii=False, indent and sort_keys.
func jsonDumps(_ *starlark.Thread, b *starlark.Builtin, a starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Value
	ascii, sortKeys := true, false
	var indent starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), a, kw, "obj", &v, "ensure_ascii?", &ascii, "indent?", &indent, "sort_keys?", &sortKeys); err != nil {
		return nil, err
	}
	d := dumper{ascii: ascii, sortKeys: sortKeys, ind: -1}
	if i, ok := indent.(starlark.Int); ok {
		n, _ := i.Int64()
		d.ind = int(n)
	}
	if err := d.dump(v, 0); err != nil {
		return nil, err
	}
	return starlark.String(d.b.String()), nil
}

type dumper struct {
	b        bytes.Buffer
	ascii    bool
	sortKeys bool
	ind      int
}

func (d *dumper) nl(depth int) {
	if d.ind >= 0 {
		d.b.WriteString("\n" + strings.Repeat(" ", d.ind*depth))
	}
}

func (d *dumper) sep() string {
	if d.ind >= 0 {
		return ","
	}
	return ", "
}

func (d *dumper) dump(v starlark.Value, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("circular or too deep value")
	}
	switch x := v.(type) {
	case starlark.NoneType:
		d.b.WriteString("null")
	case starlark.Bool:
		d.b.WriteString(map[bool]string{true: "true", false: "false"}[bool(x)])
	case starlark.Int:
		d.b.WriteString(x.String())
	case starlark.Float:
		f := float64(x)
		switch {
		case math.IsNaN(f):
			d.b.WriteString("NaN")
		case math.IsInf(f, 1):
			d.b.WriteString("Infinity")
		case math.IsInf(f, -1):
			d.b.WriteString("-Infinity")
		default:
			d.b.WriteString(pyFloat(f))
		}
	case starlark.String:
		d.str(string(x))
	case *starlark.Dict:
		items := x.Items()
		if d.sortKeys {
			sort.SliceStable(items, func(i, j int) bool { return pyStr(items[i][0]) < pyStr(items[j][0]) })
		}
		if len(items) == 0 {
			d.b.WriteString("{}")
			return nil
		}
		d.b.WriteString("{")
		for i, it := range items {
			if i > 0 {
				d.b.WriteString(d.sep())
			}
			d.nl(depth + 1)
			k := it[0]
			if _, ok := k.(starlark.String); !ok {
				k = starlark.String(pyStr(k))
			}
			d.str(string(k.(starlark.String)))
			d.b.WriteString(": ")
			if err := d.dump(it[1], depth+1); err != nil {
				return err
			}
		}
		d.nl(depth)
		d.b.WriteString("}")
	case starlark.Iterable:
		var elems []starlark.Value
		it := x.Iterate()
		var e starlark.Value
		for it.Next(&e) {
			elems = append(elems, e)
		}
		it.Done()
		if _, ok := x.(*starlark.Set); ok {
			return fmt.Errorf("TypeError: object of type set is not JSON serializable")
		}
		if len(elems) == 0 {
			d.b.WriteString("[]")
			return nil
		}
		d.b.WriteString("[")
		for i, e := range elems {
			if i > 0 {
				d.b.WriteString(d.sep())
			}
			d.nl(depth + 1)
			if err := d.dump(e, depth+1); err != nil {
				return err
			}
		}
		d.nl(depth)
		d.b.WriteString("]")
	default:
		return fmt.Errorf("TypeError: object of type %s is not JSON serializable", v.Type())
	}
	return nil
}

func (d *dumper) str(s string) {
	d.b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			d.b.WriteString(`\"`)
		case r == '\\':
			d.b.WriteString(`\\`)
		case r == '\n':
			d.b.WriteString(`\n`)
		case r == '\r':
			d.b.WriteString(`\r`)
		case r == '\t':
			d.b.WriteString(`\t`)
		case r == '\b':
			d.b.WriteString(`\b`)
		case r == '\f':
			d.b.WriteString(`\f`)
		case r < 0x20 || d.ascii && r > 0x7e:
			if r > 0xffff {
				a, b := utf16.EncodeRune(r)
				fmt.Fprintf(&d.b, `\u%04x\u%04x`, a, b)
			} else {
				fmt.Fprintf(&d.b, `\u%04x`, r)
			}
		default:
			d.b.WriteRune(r)
		}
	}
	d.b.WriteByte('"')
}

// extractJSON is Julep's extract_json: JSON from a ```json (or ```) code block, or the whole text.
func extractJSON(_ *starlark.Thread, b *starlark.Builtin, a starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	var s string
	if err := starlark.UnpackPositionalArgs(b.Name(), a, kw, 1, &s); err != nil {
		return nil, err
	}
	if strings.Contains(s, "```") {
		start := strings.Index(s, "```") + 3
		if k := strings.Index(s, "```json"); k >= 0 {
			start = k + 7
		}
		end := strings.Index(s[start:], "```")
		if end < 0 {
			return nil, fmt.Errorf("ValueError: code block has invalid or missing markers")
		}
		s = strings.TrimSpace(s[start : start+end])
	}
	return decodeJSON(s)
}

func quoteFn(_ *starlark.Thread, b *starlark.Builtin, a starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	var s string
	safe := "/"
	if err := starlark.UnpackArgs(b.Name(), a, kw, "string", &s, "safe?", &safe); err != nil {
		return nil, err
	}
	var out strings.Builder
	for _, c := range []byte(s) {
		if c < 0x80 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_.-~", c) >= 0 || strings.IndexByte(safe, c) >= 0) {
			out.WriteByte(c)
		} else {
			fmt.Fprintf(&out, "%%%02X", c)
		}
	}
	return starlark.String(out.String()), nil
}

func unquote(s string) (string, error) {
	var out []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				out = append(out, byte(v))
				i += 2
				continue
			}
		}
		out = append(out, s[i])
	}
	return strings.ToValidUTF8(string(out), "\uFFFD"), nil
}
