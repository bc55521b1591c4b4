package asl

import (
	"context"
	"math"
	"strconv"
	"strings"
	"time"

	"sinew/internal/jsonv"
)

// The kinds of field several state types take, each read at Parse and resolved in a run here.

// optPath is a JSONPath-mode path field that may be absent (the default applies), null, or a path.
type optPath struct {
	Set  bool
	Null bool
	Path compiledPath
}

// numField is an integer field given literally, by a JSONPath (`...Path`) or by JSONata.
type numField struct {
	Value   float64
	Path    compiledPath
	JSONata *jsonataValue
}

// optPathField reads an optional path field (absent: default `$`; null: the documented null
// behaviour).
func (p *parser) optPathField(obj map[string]any, field, loc string, reference bool) optPath {
	v, ok := obj[field]
	if !ok {
		return optPath{}
	}
	if v == nil {
		return optPath{Set: true, Null: true}
	}
	s, isStr := v.(string)
	var cp compiledPath
	var err error
	if isStr {
		if reference {
			cp, err = parseReference(s)
		} else {
			cp, err = parsePath(s)
		}
	}
	if !isStr || err != nil {
		p.schema(loc+"/"+field, "The value for the field '%s' must be a valid JSONPath", field)
		return optPath{}
	}
	return optPath{Set: true, Path: cp}
}

func (p *parser) refPath(v any, field, loc string) compiledPath {
	s, ok := v.(string)
	if !ok {
		p.schema(loc+"/"+field, "The value for the field '%s' must be a valid JSONPath", field)
		return nil
	}
	cp, err := parseReference(s)
	if err != nil {
		p.schema(loc+"/"+field, "The value for the field '%s' must be a valid JSONPath", field)
		return nil
	}
	return cp
}

// numFieldOf reads an integer field, its `...Path` form (JSONPath), or a `{% %}` string (JSONata).
func (p *parser) numFieldOf(obj map[string]any, field, pathField, loc string, jp bool, min, max float64) *numField {
	v, ok := obj[field]
	_, hasPath := obj[pathField]
	if ok && hasPath {
		p.schema(loc, "Only one of '%s' or '%s' may be set", field, pathField)
		return nil
	}
	if hasPath && jp {
		return &numField{Path: p.refPath(obj[pathField], pathField, loc)}
	}
	if !ok {
		return nil
	}
	if !jp {
		if jv := p.jsonataString(v, loc+"/"+field, JSONata); jv != nil {
			return &numField{JSONata: jv}
		}
	}
	f, isNum := jsonv.ToFloat(v)
	if !isNum || f < min || f > max || (field != "ToleratedFailurePercentage" && f != math.Trunc(f)) {
		p.schema(loc+"/"+field, "The field '%s' must be a number between %v and %v", field, min, max)
		return nil
	}
	return &numField{Value: f}
}

// parseTimestamp accepts RFC 3339 timestamps with a 'T' and an offset, as Step Functions does.
func parseTimestamp(s string) (time.Time, bool) {
	if !strings.Contains(s, "T") {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// intValue resolves a numeric field given literally, by path (against input) or by JSONata.
func (r *stateRun) intValue(ctx context.Context, n *numField, name string, input any) (float64, *StatesError) {
	var v any
	var err error
	switch {
	case n.Path != nil:
		v, err = n.Path.Eval(r.env(input))
		if err != nil {
			return 0, r.runtime("Invalid path '%s' : %s", n.Path.String(), pathMsg(err))
		}
	case n.JSONata != nil:
		v, err = n.JSONata.eval(ctx, r.jenv(nil), name)
		if err != nil {
			return 0, r.fromEval(err)
		}
	default:
		return n.Value, nil
	}
	f, ok := toNumber(v)
	if s, isStr := v.(string); isStr && n.Path != nil {
		// AWS reads a number held in a string for the ...Path fields (recorded: MaxConcurrencyPath
		// on the variable "1").
		if p, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
			f, ok = p, true
		}
	}
	if !ok {
		return 0, r.runtime("The value of the field '%s' must be a number, but was %s", name, compactJSON(v))
	}
	return f, nil
}

// toNumber reads a JSON number, refusing NaN and the infinities.
func toNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	}
	return 0, false
}
