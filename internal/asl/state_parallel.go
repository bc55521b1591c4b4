package asl

import (
	"context"
	"fmt"
)

// Parallel: each branch, a machine of its own, runs on the same input; the output is the array of
// their outputs. The branches run as fanOut's child frames (fanout.go).
// https://docs.aws.amazon.com/step-functions/latest/dg/state-parallel.html

var parallelFields = fieldSet(commonFields, flowFields, jsonPathIO, errorFields, []string{"Branches", "Parameters", "ResultSelector", "ResultPath", "Assign", "Arguments", "Output"})

// ParallelSpec is what a Parallel state has of its own.
type ParallelSpec struct {
	Branches []*Machine
}

// parallelState reads the branches, each a machine of its own.
func (p *parser) parallelState(st *State, obj map[string]any, loc string) {
	spec := &ParallelSpec{}
	st.Parallel = spec
	branches, ok := obj["Branches"].([]any)
	if !ok {
		p.schema(loc, "These fields are required: [Branches]")
		return
	}
	if len(branches) == 0 {
		p.schema(loc+"/Branches", "Value cannot be empty")
	}
	for i, b := range branches {
		bo, ok := b.(map[string]any)
		bloc := fmt.Sprintf("%s/Branches[%d]", loc, i)
		if !ok {
			p.schema(bloc, "A branch must be an object")
			continue
		}
		spec.Branches = append(spec.Branches, p.machine(bo, bloc, st.QueryLanguage, false))
	}
}

// parallel runs every branch on the same input under Retry; the output is their outputs in order.
func (r *stateRun) parallel(ctx context.Context) (any, map[string]any, *StatesError) {
	branches := r.st.Parallel.Branches
	input, err := r.branchInput(ctx)
	if err != nil {
		return nil, nil, err
	}
	result, err := r.withRetry(ctx, func(ctx context.Context) (any, *StatesError) {
		r.f.emit(ctx, Event{Type: "ParallelStateStarted"})
		out, err := r.fanOut(ctx, len(branches), len(branches), -1, -1, func(i int) (*frame, any, *StatesError) {
			f := &frame{x: r.f.x, m: branches[i], up: r, branch: i}
			f.own.parent = r.f.scope
			f.scope = &f.own
			return f, input, nil
		}, nil)
		if err != nil {
			return nil, err
		}
		r.f.emit(ctx, Event{Type: "ParallelStateSucceeded"})
		return out, nil
	})
	if err != nil {
		if ctx.Err() == nil {
			r.f.emit(ctx, Event{Type: "ParallelStateFailed"})
		}
		return nil, nil, err
	}
	return r.finishResult(ctx, result)
}

// branchInput is what Parallel's branches get: the effective input through Parameters (JSONPath),
// or Arguments (JSONata).
func (r *stateRun) branchInput(ctx context.Context) (any, *StatesError) {
	if !r.jsonPath() {
		return r.arguments(ctx)
	}
	eff, err := r.inputPath(r.raw)
	if err != nil {
		return nil, err
	}
	return r.applyTemplate(r.st.Parameters, eff)
}
