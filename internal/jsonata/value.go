package jsonata

import (
	"math"
	"strconv"
	"strings"
	"sync"
)

// The evaluator's values: nil is undefined (no value), Null is JSON null, float64, string, bool,
// *Array, *Object, and the function kinds (*Lambda, *Native, *partialNative).

// Null is JSON null; Go nil stands for JSONata's undefined (no value).
var Null = nullT{}

type nullT struct{}

// Array is a JSON array or a JSONata sequence. A sequence is the evaluator's own collection of
// results: a singleton collapses to its item and an empty one to undefined, unless keepSingleton.
type Array struct {
	Items         []any
	seq           bool // a sequence, not a constructed array
	keepSingleton bool // `[]` on a path step: a singleton stays an array
	outerWrapper  bool // the input array, wrapped so that `$` sees it whole
	tupleStream   bool // items are tuples (binding maps) of a path with @, # or %
	cons          bool // built by an array constructor: not flattened by the path
}

func newSeq(items ...any) *Array { return &Array{Items: items, seq: true} }

// Object is a JSON object that keeps its keys in insertion order, as JavaScript does.
type Object struct {
	keys []string
	vals map[string]any
	lazy bool      // converted from a Go map: the keys are listed when first asked, once
	once sync.Once // for lazy; evaluations may share a converted input and read it at once
}

// NewObject gives an empty object with room for n keys.
func NewObject(n int) *Object {
	return &Object{keys: make([]string, 0, n), vals: make(map[string]any, n)}
}

// Get gives the value at k (nil when absent).
func (o *Object) Get(k string) (any, bool) { v, ok := o.vals[k]; return v, ok }

// Set puts v at k. A new key goes last, except an array index ("0", "17"), which JavaScript
// orders first, in ascending order, whatever the order of insertion.
func (o *Object) Set(k string, v any) {
	o.list()
	if _, ok := o.vals[k]; !ok {
		o.insertKey(k)
	}
	o.vals[k] = v
}

func (o *Object) insertKey(k string) {
	idx, ok := arrayIndex(k)
	if !ok {
		o.keys = append(o.keys, k)
		return
	}
	at := 0
	for at < len(o.keys) {
		j, isIdx := arrayIndex(o.keys[at])
		if !isIdx || j > idx {
			break
		}
		at++
	}
	o.keys = append(o.keys, "")
	copy(o.keys[at+1:], o.keys[at:])
	o.keys[at] = k
}

// arrayIndex reports a key JavaScript treats as an array index: a canonical decimal integer below
// 2^32-1.
func arrayIndex(k string) (uint64, bool) {
	if k == "" || len(k) > 10 || k[0] < '0' || k[0] > '9' || (k[0] == '0' && len(k) > 1) {
		return 0, false
	}
	n, err := strconv.ParseUint(k, 10, 64)
	if err != nil || n >= 1<<32-1 {
		return 0, false
	}
	return n, true
}

// Delete removes k.
func (o *Object) Delete(k string) {
	o.list()
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	for i, kk := range o.keys {
		if kk == k {
			o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
			break
		}
	}
}

// Keys gives the keys in insertion order.
func (o *Object) Keys() []string {
	o.list()
	return o.keys
}

func (o *Object) list() {
	if o.lazy {
		o.once.Do(func() { o.keys = orderedKeys(o.vals) })
	}
}

// Len gives the number of keys.
func (o *Object) Len() int { return len(o.vals) }

// tuple is one binding set of a tuple stream: "@" is the context item, other keys are variables.
type tuple map[string]any

func isFunction(v any) bool {
	switch v.(type) {
	case *Lambda, *Native, *partialNative:
		return true
	}
	return false
}

// isNumeric reports a number that is not NaN; an infinite one is an error (D1001), as in JSONata.
func isNumeric(v any) (bool, error) {
	f, ok := v.(float64)
	if !ok || math.IsNaN(f) {
		return false, nil
	}
	if math.IsInf(f, 0) {
		return false, &Error{Code: "D1001", Value: f}
	}
	return true, nil
}

func isNum(v any) bool { ok, _ := isNumeric(v); return ok }

func isArrayOfStrings(v any) bool {
	a, ok := v.(*Array)
	if !ok {
		return false
	}
	for _, it := range a.Items {
		if _, ok := it.(string); !ok {
			return false
		}
	}
	return true
}

func isArrayOfNumbers(v any) bool {
	a, ok := v.(*Array)
	if !ok {
		return false
	}
	for _, it := range a.Items {
		if !isNum(it) {
			return false
		}
	}
	return true
}

// deepEqual is JSONata's `=`: structural equality of JSON values, identity of functions.
func deepEqual(a, b any) bool {
	switch x := a.(type) {
	case *Array:
		y, ok := b.(*Array)
		if !ok || len(x.Items) != len(y.Items) {
			return false
		}
		for i := range x.Items {
			if !deepEqual(x.Items[i], y.Items[i]) {
				return false
			}
		}
		return true
	case *Object:
		y, ok := b.(*Object)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for k, v := range x.vals {
			w, ok := y.vals[k]
			if !ok || !deepEqual(v, w) {
				return false
			}
		}
		return true
	case float64, string, bool, nullT:
		return a == b
	}
	return a == b
}

// strictEqual is JavaScript's ===: values for primitives, identity for objects and arrays.
func strictEqual(a, b any) bool {
	switch a.(type) {
	case float64, string, bool, nullT:
		return a == b
	}
	switch x := a.(type) {
	case *Array:
		y, ok := b.(*Array)
		return ok && x == y
	case *Object:
		y, ok := b.(*Object)
		return ok && x == y
	}
	return false
}

// numberString formats f as JavaScript's Number.prototype.toString does.
func numberString(f float64) string {
	if f == 0 {
		return "0"
	}
	if math.IsNaN(f) {
		return "NaN"
	}
	if math.IsInf(f, 1) {
		return "Infinity"
	}
	if math.IsInf(f, -1) {
		return "-Infinity"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±xx, shortest round-trip digits
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	epos := strings.IndexByte(s, 'e')
	mant, exp := s[:epos], s[epos+1:]
	e, _ := strconv.Atoi(exp)
	digits := strings.Replace(mant, ".", "", 1)
	n := e + 1 // position of the decimal point relative to the digits
	k := len(digits)
	var out string
	switch {
	case k <= n && n <= 21:
		out = digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		out = digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		out = "0." + strings.Repeat("0", -n) + digits
	default:
		sign := "+"
		if n-1 < 0 {
			sign = "-"
		}
		ee := n - 1
		if ee < 0 {
			ee = -ee
		}
		if k == 1 {
			out = digits + "e" + sign + strconv.Itoa(ee)
		} else {
			out = digits[:1] + "." + digits[1:] + "e" + sign + strconv.Itoa(ee)
		}
	}
	if neg {
		return "-" + out
	}
	return out
}

// toPrecision15 rounds f to 15 significant digits, as $string does before formatting a number.
func toPrecision15(f float64) float64 {
	if f == 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return f
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(f, 'e', 14, 64), 64)
	if err != nil {
		return f
	}
	return r
}
