package asl

import (
	"math"
	"slices"
	"strconv"
	"sync"

	"sinew/internal/jsonout"
)

// encodeJSON writes a jsonv value as compact JSON, byte for byte as jsonv.Encode (encoding/json
// without HTML escaping, keys sorted) but without reflection: histories encode every state's input
// and output, so this is the engine's hottest path.
func encodeJSON(v any) string {
	bp := encodeBufs.Get().(*[]byte)
	buf, ok := appendJSON((*bp)[:0], v)
	s := ""
	if ok {
		s = string(buf)
	}
	if cap(buf) <= maxPooledBuf {
		*bp = buf
		encodeBufs.Put(bp)
	}
	if !ok {
		return mustJSON(v)
	}
	return s
}

// encodeBufs are encodeJSON's scratch buffers: the text is copied out once, at its length, instead
// of growing a new buffer through every doubling.
var encodeBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// maxPooledBuf keeps a rare huge document's buffer out of the pool.
const maxPooledBuf = 64 << 10

func appendJSON(b []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		return strconv.AppendBool(b, x), true
	case string:
		return jsonout.AppendString(b, x, jsonout.GoJSON), true
	case int64:
		return strconv.AppendInt(b, x, 10), true
	case float64:
		return appendFloat(b, x)
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendJSON(b, e); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case map[string]any:
		var room [16]string // most objects' keys, without an allocation
		keys := room[:0]
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonout.AppendString(b, k, jsonout.GoJSON)
			b = append(b, ':')
			var ok bool
			if b, ok = appendJSON(b, x[k]); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}
	return b, false
}

// appendFloat formats as encoding/json does (ES6 number formatting).
func appendFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	abs := math.Abs(f)
	fmt := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		fmt = 'e'
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, fmt, -1, 64)
	if fmt == 'e' {
		// clean up e-09 to e-9
		n := len(b) - start
		if n >= 4 && b[len(b)-4] == 'e' && b[len(b)-3] == '-' && b[len(b)-2] == '0' {
			b[len(b)-2] = b[len(b)-1]
			b = b[:len(b)-1]
		}
	}
	return b, true
}

// jsonOver reports whether v's JSON text (as encodeJSON writes it) is longer than limit bytes,
// without writing it: every state's output is checked against the payload limit, and most are
// never rendered at all.
func jsonOver(v any, limit int) bool {
	_, over := jsonLen(v, limit)
	return over
}

// jsonLen is v's JSON length and whether it is over limit (the length is exact when it is not).
func jsonLen(v any, limit int) (int, bool) {
	n, ok := jsonSize(v, limit)
	if !ok {
		n = len(mustJSON(v))
	}
	return n, n > limit
}

// jsonSize adds up the length of v's JSON text, stopping once it passes limit; false for a value
// appendJSON cannot write.
func jsonSize(v any, limit int) (int, bool) {
	var num [32]byte
	switch x := v.(type) {
	case nil:
		return 4, true
	case bool:
		if x {
			return 4, true
		}
		return 5, true
	case string:
		return jsonout.StringLen(x, jsonout.GoJSON), true
	case int64:
		return len(strconv.AppendInt(num[:0], x, 10)), true
	case float64:
		b, ok := appendFloat(num[:0], x)
		return len(b), ok
	case []any:
		n := 1 + max(len(x), 1) // brackets and commas
		for _, e := range x {
			m, ok := jsonSize(e, limit-n)
			if n += m; !ok || n > limit {
				return n, ok
			}
		}
		return n, true
	case map[string]any:
		n := 1 + max(len(x), 1) // braces and commas
		for k, e := range x {
			m, ok := jsonSize(e, limit-n)
			if n += m + jsonout.StringLen(k, jsonout.GoJSON) + 1; !ok || n > limit {
				return n, ok
			}
		}
		return n, true
	}
	return 0, false
}
