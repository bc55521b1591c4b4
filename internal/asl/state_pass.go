package asl

import "context"

// Pass: its input, shaped by its data flow or replaced by Result, is its output.
// https://docs.aws.amazon.com/step-functions/latest/dg/state-pass.html

var passFields = fieldSet(commonFields, flowFields, jsonPathIO, []string{"Parameters", "Result", "ResultPath", "Assign", "Output"})

// PassSpec is what a Pass state has of its own.
type PassSpec struct {
	Result    any
	HasResult bool // Result is given (it may be null)
}

// passState reads a Pass state's Result (JSONPath).
func (p *parser) passState(st *State, obj map[string]any) {
	st.Pass = &PassSpec{}
	if v, ok := obj["Result"]; ok && st.QueryLanguage == JSONPath {
		st.Pass.Result, st.Pass.HasResult = v, true
	}
}

// pass gives a Pass state's output: Result or Parameters (else the effective input) placed by the
// data flow, or Output (JSONata).
func (r *stateRun) pass(ctx context.Context) (any, map[string]any, *StatesError) {
	st := r.st
	if !r.jsonPath() {
		return r.finishJSONata(ctx, st.Output, st.Assign, r.raw, nil)
	}
	eff, err := r.inputPath(r.raw)
	if err != nil {
		return nil, nil, err
	}
	result := eff
	r.resultBound = r.rawBound // InputPath gives a part of the input
	switch {
	case st.Pass.HasResult:
		result, r.resultBound = st.Pass.Result, 0
	case st.Parameters != nil:
		if result, err = r.applyTemplate(st.Parameters, eff); err != nil {
			return nil, nil, err
		}
		r.resultBound = st.Parameters.sizeBound(r.rawBound)
	}
	return r.finishJSONPath(ctx, result, true)
}
