package asl

import "context"

// Succeed and Fail: the two states that end a machine without a Next.
// https://docs.aws.amazon.com/step-functions/latest/dg/state-succeed.html
// https://docs.aws.amazon.com/step-functions/latest/dg/state-fail.html

var (
	succeedFields = fieldSet(commonFields, jsonPathIO, []string{"Output"})
	failFields    = fieldSet(commonFields, []string{"Error", "ErrorPath", "Cause", "CausePath"})
)

// FailSpec is what a Fail state has of its own.
type FailSpec struct {
	Error, Cause *strField
}

// strField is a string field given literally, by a path or intrinsic (`...Path`), or by JSONata.
type strField struct {
	Value     string
	Path      compiledPath
	Intrinsic compiledIntrinsic
	JSONata   *jsonataValue
}

// failState reads a Fail state's Error and Cause.
func (p *parser) failState(st *State, obj map[string]any, loc string) {
	jp := st.QueryLanguage == JSONPath
	st.Fail = &FailSpec{
		Error: p.strFieldOf(obj, "Error", "ErrorPath", loc, jp),
		Cause: p.strFieldOf(obj, "Cause", "CausePath", loc, jp),
	}
}

// strFieldOf reads a string field, its `...Path` form (JSONPath: a path or an intrinsic), or a
// `{% %}` string (JSONata).
func (p *parser) strFieldOf(obj map[string]any, field, pathField, loc string, jp bool) *strField {
	v, ok := obj[field]
	pv, hasPath := obj[pathField]
	if ok && hasPath {
		p.schema(loc, "Only one of '%s' or '%s' may be set", field, pathField)
		return nil
	}
	if hasPath && jp {
		s, _ := pv.(string)
		if isIntrinsic(s) {
			in, err := parseIntrinsic(s)
			if err != nil {
				p.schema(loc+"/"+pathField, "The value for the field '%s' must be a valid JSONPath or a valid intrinsic function call", pathField)
				return nil
			}
			return &strField{Intrinsic: in}
		}
		cp, err := parsePath(s)
		if err != nil {
			p.schema(loc+"/"+pathField, "The value for the field '%s' must be a valid JSONPath or a valid intrinsic function call", pathField)
			return nil
		}
		return &strField{Path: cp}
	}
	if !ok {
		return nil
	}
	if !jp {
		if jv := p.jsonataString(v, loc+"/"+field, JSONata); jv != nil {
			return &strField{JSONata: jv}
		}
	}
	s, isStr := v.(string)
	if !isStr {
		p.schema(loc+"/"+field, "The field '%s' must be a string", field)
		return nil
	}
	return &strField{Value: s}
}

// succeed gives a Succeed state's output: its input through InputPath and OutputPath, or Output.
func (r *stateRun) succeed(ctx context.Context) (any, *StatesError) {
	if !r.jsonPath() {
		out, _, err := r.finishJSONata(ctx, r.st.Output, nil, r.raw, nil)
		return out, err
	}
	eff, err := r.inputPath(r.raw)
	if err != nil {
		return nil, err
	}
	return r.outputPath(eff)
}

// fail is a Fail state's error, with its Error and Cause when it has them.
func (r *stateRun) fail(ctx context.Context) *StatesError {
	se := &StatesError{}
	for i, fld := range []*strField{r.st.Fail.Error, r.st.Fail.Cause} {
		if fld == nil {
			continue
		}
		name := [2]string{"Error", "Cause"}[i]
		v, err := r.strValue(ctx, fld, name)
		if err != nil {
			return err
		}
		if i == 0 {
			se.Name, se.hasName = v, true
		} else {
			se.Cause, se.hasCause = v, true
		}
	}
	return se
}

// strValue resolves a string field against the state's input.
func (r *stateRun) strValue(ctx context.Context, fld *strField, name string) (string, *StatesError) {
	var v any
	var err error
	switch {
	case fld.JSONata != nil:
		v, err = fld.JSONata.eval(ctx, r.jenv(nil), name)
	case fld.Intrinsic != nil:
		v, err = fld.Intrinsic.Eval(r.env(r.raw))
		if err != nil {
			return "", r.fromEval(intrinsicFailure(err, name+"Path"))
		}
	case fld.Path != nil:
		v, err = fld.Path.Eval(r.env(r.raw))
		if err != nil {
			return "", r.runtime("The JSONPath '%s' specified for the field '%sPath' could not be found in the input '%s'", fld.Path.String(), name, compactJSON(r.raw))
		}
	default:
		return fld.Value, nil
	}
	if err != nil {
		return "", r.fromEval(err)
	}
	s, ok := v.(string)
	if !ok {
		return "", r.runtime("The value of the field '%s' must be a string, but was %s", name, typeName(v))
	}
	return s, nil
}
