package pyexpr

import (
	"sort"
	"strings"
)

// JSONata functions that give Python's semantics where JSONata's differ. A compiled expression
// binds only the ones it uses, in a block around it: ($py_bool := function...; <expression>).
//
// Two JSONata rules shape them. A sequence of one item is that item, so a list is never built
// with $map or $filter (a one-element result would lose its array); lists are folded with
// $reduce and $append instead. And an array constructor flattens the arrays its items yield, so
// an item that may be a list is wrapped by $py_one first.
type helper struct {
	deps []string
	def  string
}

var helpers = map[string]helper{
	// Python's truthiness: empty containers, "", 0, None and a missing value are false.
	"py_bool": {def: `function($v){ $exists($v) and ($type($v) = 'array' ? $count($v) > 0 : $type($v) = 'object' ? $count($keys($v)) > 0 : $boolean($v)) }`},
	// One list element, shielded from the array constructor's flattening.
	"py_one": {def: `function($v){ $type($v) = 'array' ? [[$v]] : [$v] }`},
	// Python's iteration: a str yields its characters, a dict its keys.
	"py_iter": {def: `function($v){ $type($v) = 'string' ? [$split($v, '')] : $type($v) = 'object' ? [$keys($v)] : $type($v) = 'array' ? $v : $exists($v) ? $error('object of type ' & $type($v) & ' is not iterable') : [] }`},
	"py_list": {deps: []string{"py_iter", "py_one"}, def: `function($v){ $reduce($py_iter($v), function($a, $e){ $append($a, $py_one($e)) }, []) }`},
	"py_add":  {def: `function($a, $b){ $type($a) = 'string' and $type($b) = 'string' ? $a & $b : $type($a) = 'array' and $type($b) = 'array' ? $append($a, $b) : $type($a) = 'number' and $type($b) = 'number' ? $a + $b : $error('unsupported operand types for +: ' & $type($a) & ' and ' & $type($b)) }`},
	"py_mul":  {deps: []string{"py_rep"}, def: `function($a, $b){ $type($a) = 'number' and $type($b) = 'number' ? $a * $b : $type($b) = 'number' ? $py_rep($a, $b) : $py_rep($b, $a) }`},
	// str * int and list * int.
	"py_rep": {deps: []string{"py_one"}, def: `function($s, $n){ $type($s) = 'string' ? ($n >= 1 ? $join([1..$n].($s)) : '') : $type($s) = 'array' ? ($n >= 1 ? $reduce([1..$n], function($a, $i){ $append($a, $s) }, []) : []) : $error("can't multiply sequence by " & $type($s)) }`},
	// Python's % on numbers takes the divisor's sign.
	"py_mod": {def: `function($a, $b){ $type($a) = 'string' ? $error('printf-style formatting (str % value) does not compile; Eval it') : $a - $b * $floor($a / $b) }`},
	"py_len": {def: `function($v){ $type($v) = 'string' ? $length($v) : $type($v) = 'object' ? $count($keys($v)) : $type($v) = 'array' ? $count($v) : $error('object of type ' & $type($v) & ' has no len()') }`},
	// Membership: substring, dict key, or list element by deep equality.
	"py_in": {def: `function($x, $c){ $type($c) = 'string' ? $contains($c, $x) : $type($c) = 'object' ? $x in $keys($c) : $type($c) = 'array' ? $count($c[$ = $x]) > 0 : $error('argument of type ' & $type($c) & ' is not iterable') }`},
	// x[i]: a dict by key, a str by character, a list by index (negative from the end).
	"py_get": {def: `function($v, $i){ $type($v) = 'string' ? ($i < 0 ? $substring($v, $length($v) + $i, 1) : $substring($v, $i, 1)) : $type($v) = 'object' ? $lookup($v, $string($i)) : $v[$i] }`},
	// x[lo:hi] on a str or list (no step).
	"py_slice": {deps: []string{"py_one"}, def: `function($v, $lo, $hi){ ($n := $type($v) = 'string' ? $length($v) : $count($v); $l := $lo = null ? 0 : $lo < 0 ? $max([0, $n + $lo]) : $min([$lo, $n]); $h := $hi = null ? $n : $hi < 0 ? $max([0, $n + $hi]) : $min([$hi, $n]); $type($v) = 'string' ? ($h > $l ? $substring($v, $l, $h - $l) : '') : $reduce($v, function($a, $e, $i){ $i >= $l and $i < $h ? $append($a, $py_one($e)) : $a }, [])) }`},
	// str() of a value: Python's spelling of booleans, None, floats, lists and dicts.
	"py_str":  {deps: []string{"py_repr"}, def: `function($v){ $type($v) = 'string' ? $v : $py_repr($v) }`},
	"py_strq": {def: `function($s){ $contains($s, "'") and $not($contains($s, '"')) ? '"' & $replace($replace($replace($replace($s, '\\', '\\\\'), '\n', '\\n'), '\r', '\\r'), '\t', '\\t') & '"' : "'" & $replace($replace($replace($replace($replace($s, '\\', '\\\\'), "'", "\\'"), '\n', '\\n'), '\r', '\\r'), '\t', '\\t') & "'" }`},
	"py_repr": {deps: []string{"py_strq", "py_fstr"}, def: `function($v){ $type($v) = 'string' ? $py_strq($v) : $type($v) = 'boolean' ? ($v ? 'True' : 'False') : $type($v) = 'null' ? 'None' : $type($v) = 'array' ? '[' & $join($map($v, $py_repr), ', ') & ']' : $type($v) = 'object' ? '{' & $join($each($v, function($x, $k){ $py_strq($k) & ': ' & $py_repr($x) }), ', ') & '}' : $type($v) = 'number' and $floor($v) != $v ? $py_fstr($v) : $exists($v) ? $string($v) : 'None' }`},
	// str() of a float: Python writes 3.0 where JSONata writes 3.
	// Python writes floats positionally from 1e-4 to 1e16 and in exponent form outside.
	"py_fstr":   {def: `function($n){ $n != 0 and ($abs($n) >= 1e16 or $abs($n) < 1e-4) ? ($s := $formatNumber($n, '0.################e0'); $e := $number($substringAfter($s, 'e')); $substringBefore($s, 'e') & 'e' & ($e < 0 ? '-' : '+') & $pad($string($abs($e)), -2, '0')) : $floor($n) = $n ? $string($n) & '.0' : $string($n) }`},
	"py_int":    {def: `function($v){ ($n := $type($v) = 'string' ? $number($trim($v)) : $type($v) = 'boolean' ? ($v ? 1 : 0) : $v; $n < 0 ? $ceil($n) : $floor($n)) }`},
	"py_range":  {def: `function($a, $b, $s){ $s = 1 ? ($b > $a ? [$a..$b - 1] : []) : $s > 0 ? ($b > $a ? [[0..$ceil(($b - $a) / $s) - 1].($a + $ * $s)] : []) : ($a > $b ? [[0..$ceil(($a - $b) / -$s) - 1].($a + $ * $s)] : []) }`},
	"py_any":    {deps: []string{"py_bool", "py_iter"}, def: `function($v){ $reduce($py_iter($v), function($a, $e){ $a or $py_bool($e) }, false) }`},
	"py_all":    {deps: []string{"py_bool", "py_iter"}, def: `function($v){ $reduce($py_iter($v), function($a, $e){ $a and $py_bool($e) }, true) }`},
	"py_enum":   {deps: []string{"py_iter", "py_one"}, def: `function($v, $s){ $reduce($py_iter($v), function($a, $e, $i){ $append($a, [[$i + $s, $e]]) }, []) }`},
	"py_items":  {def: `function($d){ $reduce([$keys($d)], function($a, $k){ $append($a, [[$k, $lookup($d, $k)]]) }, []) }`},
	"py_values": {deps: []string{"py_one"}, def: `function($d){ $reduce([$keys($d)], function($a, $k){ $append($a, $py_one($lookup($d, $k))) }, []) }`},
	"py_dict":   {def: `function($pairs){ $reduce($pairs, function($a, $p){ $merge([$a, {$string($p[0]): $p[1]}]) }, {}) }`},
	"py_split":  {def: `function($s, $sep){ $sep = null ? ($trim($s) = '' ? [] : [$split($trim($s), ' ')]) : [$split($s, $sep)] }`},
	"py_strip":  {def: `function($s){ $replace($s, /^\s+|\s+$/, '') }`},
	"py_dumps":  {deps: []string{"py_uesc"}, def: `function($v){ $type($v) = 'array' ? '[' & $join($map($v, $py_dumps), ', ') & ']' : $type($v) = 'object' ? '{' & $join($each($v, function($x, $k){ $py_dumps($k) & ': ' & $py_dumps($x) }), ', ') & '}' : $type($v) = 'string' ? $py_uesc($substring($string([$v]), 1, $length($string([$v])) - 2)) : $string($v) }`},
	"py_float":  {def: `function($v){ $type($v) = 'string' ? $number($trim($v)) : $type($v) = 'boolean' ? ($v ? 1 : 0) : $number($v) }`},
	"py_rev":    {deps: []string{"py_list"}, def: `function($v){ $type($v) = 'string' ? $join($reverse($split($v, ''))) : $reverse($py_list($v)) }`},
	// Python's json.dumps escapes non-ASCII as \uXXXX (ensure_ascii): the code point is read back
	// from the UTF-8 bytes $encodeUrlComponent gives.
	"py_uesc": {def: `function($s){ $replace($s, /[^\u0000-\u007f]/, function($m){ ($b := $map($split($substring($encodeUrlComponent($m.match), 1), '%'), function($h){ $reduce($split($h, ''), function($a, $c){ $a * 16 + $length($substringBefore('0123456789ABCDEF', $c)) }, 0) }); $n := $count($b); $cp := $reduce($b[[1..3]], function($a, $x){ $a * 64 + $x - 128 }, $b[0] - ($n = 2 ? 192 : $n = 3 ? 224 : 240)); $hex := function($x){ '\\u' & $pad($formatBase($x, 16), -4, '0') }; $cp > 65535 ? $hex(55296 + $floor(($cp - 65536) / 1024)) & $hex(56320 + ($cp - 65536) % 1024) : $hex($cp)) }) }`},
	"py_zpad": {def: `function($s, $w){ $substring($s, 0, 1) = '-' ? '-' & $pad($substring($s, 1), -($w - 1), '0') : $pad($s, -$w, '0') }`},
	// Julep's extract_json: the JSON in a ```json (or ```) block, or the whole text.
	"py_extract_json": {deps: []string{"py_strip"}, def: `function($s){ ($b := $contains($s, '` + "```json" + `') ? $substringAfter($s, '` + "```json" + `') : $contains($s, '` + "```" + `') ? $substringAfter($s, '` + "```" + `') : null; $b != null and $not($contains($b, '` + "```" + `')) ? $error('Code block has invalid or missing markers') : $parse($b = null ? $s : $py_strip($substringBefore($b, '` + "```" + `')))) }`},
	"py_min":          {def: `function($v){ $count($v) = 0 ? $error('min() arg is an empty sequence') : $min($v) }`},
	"py_max":          {def: `function($v){ $count($v) = 0 ? $error('max() arg is an empty sequence') : $max($v) }`},
}

// program wraps js in a block binding the helpers it uses (and theirs).
func (c *compiler) program(js string) string {
	need := map[string]bool{}
	var add func(string)
	add = func(n string) {
		if need[n] {
			return
		}
		need[n] = true
		for _, d := range helpers[n].deps {
			add(d)
		}
	}
	for n := range c.used {
		add(n)
	}
	if len(need) == 0 {
		return js
	}
	names := make([]string, 0, len(need))
	for n := range need {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("(")
	for _, n := range names {
		b.WriteString("$" + n + " := " + helpers[n].def + "; ")
	}
	b.WriteString(js + ")")
	return b.String()
}
