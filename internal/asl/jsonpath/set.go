package jsonpath

import (
	"maps"
	"strconv"

	"sinew/internal/asl/jsonpath/javafmt"
	"sinew/internal/jsonv"
)

// Set returns doc with value placed where the path points, as ResultPath does: `$` replaces the
// document, a missing name along the way becomes a new object, an index must name an existing
// element. Doc is not modified: the objects and arrays along the path are copied, the rest is
// shared with doc. Only reference paths on `$` can be set; anything else (or a step into a value
// that is not an object or array) is an *Error of Kind ErrResultPath.
func (p *Path) Set(doc any, value any) (any, error) {
	if p.root != rootInput {
		return nil, &Error{Kind: ErrResultPath, Path: p.src, Msg: "only a path on the state input ($) can receive a result"}
	}
	for i := range p.toks {
		t := &p.toks[i]
		if !((t.kind == tProp && len(t.props) == 1) || (t.kind == tIndex && len(t.indexes) == 1)) {
			return nil, &Error{Kind: ErrResultPath, Path: p.src, Msg: "a result can be placed only at a Reference Path, found " + t.frag}
		}
	}
	out, err := set(doc, p.toks, value, "$")
	if err != nil {
		return nil, &Error{Kind: ErrResultPath, Path: p.src, Msg: err.Error()}
	}
	return out, nil
}

func set(doc any, toks []token, value any, cur string) (any, error) {
	if len(toks) == 0 {
		return value, nil
	}
	t := &toks[0]
	if t.kind == tIndex {
		i := t.indexes[0]
		arr, ok := doc.([]any)
		if !ok {
			return nil, compileError("Unable to apply step " + t.frag + " to input " + describe(doc) + " at " + cur)
		}
		if i < 0 || i >= len(arr) {
			return nil, compileError("Index out of bounds when evaluating path " + cur + "[" + strconv.Itoa(i) + "]")
		}
		out := make([]any, len(arr))
		copy(out, arr)
		v, err := set(arr[i], toks[1:], value, cur+t.frag)
		if err != nil {
			return nil, err
		}
		out[i] = v
		return out, nil
	}
	k := t.props[0]
	var out map[string]any
	switch x := doc.(type) {
	case map[string]any:
		if _, has := x[k]; x != nil && (has || len(x) < 8) {
			// A clone copies a small map's slots whole, without hashing each key again; with
			// fewer than 8 entries (a small map's room) the new key still fits.
			out = maps.Clone(x)
			break
		}
		out = make(map[string]any, len(x)+1)
		for kk, vv := range x {
			out[kk] = vv
		}
	case nil:
		out = map[string]any{}
	default:
		return nil, compileError("Unable to apply step " + t.frag + " to input " + describe(doc) + " at " + cur)
	}
	v, err := set(out[k], toks[1:], value, cur+t.frag)
	if err != nil {
		return nil, err
	}
	out[k] = v
	return out, nil
}

func describe(v any) string {
	s := javafmt.JSON(v)
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return jsonv.TypeName(v) + " " + s
}
