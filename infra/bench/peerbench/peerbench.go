// Package peerbench runs the peer benchmark's definitions on sinew's engine, so the two engines can
// be compared in one run on one machine.
//
// The three definitions (tool_call, pass_chain, map1000 of infra/bench/peer/defs) run on sinew's
// embedded engine with in-process Go stand-ins equivalent to bench/peer/run.cjs's JS ones.
package peerbench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"sinew/internal/asl"
	"sinew/internal/asl/jsonata"
	"sinew/internal/fault"
	"sinew/internal/jsonv"
)

// Names are the definitions, in report order.
var Names = []string{"tool_call", "pass_chain", "map1000"}

// Case is one definition ready to run.
type Case struct {
	Name    string
	Machine *asl.Machine
	Input   string
	check   func(out map[string]any, list []any) error
}

// Load parses the definitions in defsDir and the inputs of inputsFile (infra/bench/peer/inputs.json).
func Load(defsDir, inputsFile string) ([]Case, error) {
	raw, err := os.ReadFile(inputsFile)
	if err != nil {
		return nil, fmt.Errorf("peer inputs: %w", err)
	}
	var inputs map[string]json.RawMessage
	if err := json.Unmarshal(raw, &inputs); err != nil {
		return nil, fault.New(fault.InvalidInput, "peer inputs %s: not a JSON object: %v", inputsFile, err)
	}
	var cases []Case
	for _, name := range Names {
		def, err := os.ReadFile(filepath.Join(defsDir, name+".asl.json"))
		if err != nil {
			return nil, fmt.Errorf("peer definition: %w", err)
		}
		m, err := asl.Parse(def, asl.Options{})
		if err != nil {
			return nil, fmt.Errorf("peer definition %s: %w", name, err)
		}
		in, ok := inputs[name]
		if !ok {
			return nil, fault.New(fault.InvalidInput, "peer inputs: %s: missing", name)
		}
		cases = append(cases, Case{Name: name, Machine: m, Input: string(in), check: checks[name]})
	}
	return cases, nil
}

// The same checks as bench/peer/inputs.cjs.
var checks = map[string]func(map[string]any, []any) error{
	"tool_call": func(o map[string]any, _ []any) error {
		out, _ := o["output"].(map[string]any)
		if o["type"] != "integration" || o["name"] != "dummy" || out == nil || out["city"] != "Lisbon" {
			return fmt.Errorf("tool_call: unexpected output %v", o)
		}
		return nil
	},
	"pass_chain": func(o map[string]any, _ []any) error {
		if o["step"] != float64(10) || o["prev"] != float64(9) {
			return fmt.Errorf("pass_chain: unexpected output %v", o)
		}
		return nil
	},
	"map1000": func(_ map[string]any, l []any) error {
		if len(l) != 1000 {
			return fmt.Errorf("map1000: %d results, want 1000", len(l))
		}
		last, _ := l[999].(map[string]any)
		if last["i"] != float64(999) || last["ok"] != true {
			return fmt.Errorf("map1000: unexpected last result %v", last)
		}
		return nil
	},
}

// Functions are the in-process stand-ins for the Lambda functions, as in run.cjs: Prepare builds
// the envelope {id, type, <type>: {name, arguments}}; the tool functions echo {name, output}. Like
// the peer's local handlers, which get and give JS objects, they take and give the values
// themselves (asl.LambdaValueInvoker); Invoke is the same over JSON bytes.
type Functions struct{ seq atomic.Int64 }

// InvokeValue implements asl.LambdaValueInvoker.
func (f *Functions) InvokeValue(_ context.Context, req asl.LambdaValueRequest) (asl.LambdaValueResponse, error) {
	in, ok := req.Payload.(map[string]any)
	if !ok {
		return asl.LambdaValueResponse{FunctionError: "Unhandled",
			Payload: map[string]any{"errorType": "InvalidInput", "errorMessage": "payload: not an object"}}, nil
	}
	typ, _ := in["type"].(string)
	if strings.HasSuffix(req.FunctionName, ":sinew-prepare") {
		id := "call_" + strconv.FormatInt(f.seq.Add(1), 10)
		return asl.LambdaValueResponse{Payload: map[string]any{"id": id, "type": typ,
			typ: map[string]any{"name": in["name"], "arguments": in["arguments"]}}}, nil
	}
	return asl.LambdaValueResponse{Payload: map[string]any{"name": in["name"], "output": in["arguments"]}}, nil
}

// Invoke implements asl.LambdaInvoker: InvokeValue over JSON bytes.
func (f *Functions) Invoke(ctx context.Context, req asl.LambdaRequest) (*asl.LambdaResponse, error) {
	v, err := jsonv.Decode(req.Payload)
	if err != nil {
		return asl.FunctionErrorResponse("InvalidInput", "payload: "+err.Error()), nil
	}
	out, err := f.InvokeValue(ctx, asl.LambdaValueRequest{FunctionName: req.FunctionName, Qualifier: req.Qualifier, Payload: v})
	if err != nil {
		return nil, err
	}
	p, err := jsonv.Encode(out.Payload)
	if err != nil {
		return nil, fmt.Errorf("stand-in %s: %w", req.FunctionName, err)
	}
	return &asl.LambdaResponse{Payload: p, FunctionError: out.FunctionError}, nil
}

// NewEngine is an engine whose Lambda functions are the stand-ins.
func NewEngine() *asl.Engine {
	return asl.New(asl.Config{Lambda: &Functions{}})
}

// Once runs one execution of c to the end and checks its output.
func Once(ctx context.Context, eng *asl.Engine, c Case) error {
	x, err := eng.Start(ctx, asl.StartInput{Machine: c.Machine, Input: c.Input})
	if err != nil {
		return fmt.Errorf("%s: start: %w", c.Name, err)
	}
	d, err := x.Wait(ctx)
	eng.Forget(x.ARN) // retention is a separate policy; measure the run itself
	if err != nil {
		return fmt.Errorf("%s: wait: %w", c.Name, err)
	}
	if d.Status != asl.StatusSucceeded {
		return fmt.Errorf("%s: %s %s %s", c.Name, d.Status, d.Error, d.Cause)
	}
	return nil
}

// Check runs c once and verifies the output, as run.cjs does before timing.
func Check(ctx context.Context, eng *asl.Engine, c Case) error {
	x, err := eng.Start(ctx, asl.StartInput{Machine: c.Machine, Input: c.Input})
	if err != nil {
		return fmt.Errorf("%s: start: %w", c.Name, err)
	}
	d, err := x.Wait(ctx)
	eng.Forget(x.ARN)
	if err != nil {
		return fmt.Errorf("%s: wait: %w", c.Name, err)
	}
	if d.Status != asl.StatusSucceeded {
		return fmt.Errorf("%s: %s %s %s", c.Name, d.Status, d.Error, d.Cause)
	}
	var v any
	if err := json.Unmarshal([]byte(d.Output), &v); err != nil {
		return fmt.Errorf("%s: output: %w", c.Name, err)
	}
	o, _ := v.(map[string]any)
	l, _ := v.([]any)
	return c.check(o, l)
}

// Rounds runs c one execution at a time: a warm-up round, then rounds timed rounds of about d
// each, and returns executions per second of each timed round (run.cjs's method), and per
// CPU-second of this process (user+system, its GC included).
func Rounds(ctx context.Context, eng *asl.Engine, c Case, rounds int, d time.Duration) (perSec, perCPU []float64, err error) {
	if err := Check(ctx, eng, c); err != nil {
		return nil, nil, err
	}
	for end := time.Now().Add(d); time.Now().Before(end); {
		if err := Once(ctx, eng, c); err != nil {
			return nil, nil, err
		}
	}
	for range rounds {
		n := 0
		cpu0 := cpuTime()
		t0 := time.Now()
		for time.Since(t0) < d {
			if err := Once(ctx, eng, c); err != nil {
				return nil, nil, err
			}
			n++
		}
		perSec = append(perSec, float64(n)/time.Since(t0).Seconds())
		perCPU = append(perCPU, float64(n)/(cpuTime()-cpu0).Seconds())
	}
	return perSec, perCPU, nil
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// The real definition: statemachines/tool_call.asl.json as it stands, with its function ARNs
// filled in, run on its integration path with stand-ins of the real functions' shapes
// (RealFunctions).
var arnPlaceholder = regexp.MustCompile(`\$\{([A-Z][a-z]*)FunctionArn\}`)

// RealInput is the real definition's input: one integration call.
const RealInput = `{"developer_id":"dev_1","agent_id":"agent_1","task_id":null,"session_id":null,"tool":"dummy",` +
	`"arguments":{"city":"Lisbon","units":"metric","days":[1,2,3]}}`

// LoadReal parses the real tool_call definition at path.
func LoadReal(path string) (Case, error) {
	def, err := os.ReadFile(path)
	if err != nil {
		return Case{}, fmt.Errorf("tool_call definition: %w", err)
	}
	def = arnPlaceholder.ReplaceAllFunc(def, func(p []byte) []byte {
		name := strings.ToLower(string(arnPlaceholder.FindSubmatch(p)[1]))
		return []byte("arn:aws:lambda:us-east-1:123456789012:function:sinew-" + name)
	})
	m, err := asl.Parse(def, asl.Options{JSONata: jsonata.New()})
	if err != nil {
		return Case{}, fmt.Errorf("tool_call definition %s: %w", path, err)
	}
	check := func(o map[string]any, _ []any) error {
		out, _ := o["output"].(map[string]any)
		if o["type"] != "integration" || out == nil || out["city"] != "Lisbon" {
			return fmt.Errorf("tool_call.asl.json: unexpected output %v", o)
		}
		return nil
	}
	return Case{Name: "tool_call.asl.json", Machine: m, Input: RealInput, check: check}, nil
}

// RealFunctions stand in for Prepare, the integration executor and Settle with the shapes of the
// real ones: Prepare gives {call, tool, context, wait, result}, or given Dispatch's task token
// answers it with Sinew.Prepare, which sends the execution to the Prepare state; the executor and
// Settle give the result object, or the executor answers its task token through Tokens.
type RealFunctions struct {
	seq    atomic.Int64
	Tokens interface {
		SendTaskSuccess(token, output string) error
		SendTaskFailure(token, errName, cause string) error
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// InvokeValue implements asl.LambdaValueInvoker.
func (f *RealFunctions) InvokeValue(_ context.Context, req asl.LambdaValueRequest) (asl.LambdaValueResponse, error) {
	in, _ := req.Payload.(map[string]any)
	fn := req.FunctionName[strings.LastIndex(req.FunctionName, ":")+1:]
	switch fn {
	case "sinew-prepare":
		if tok, _ := in["task_token"].(string); tok != "" && f.Tokens != nil {
			// Dispatch's token (a bare start): the real prepare sends the execution to the
			// Prepare state, whose call Dispatch then gives the executor.
			if err := f.Tokens.SendTaskFailure(tok, "Sinew.Prepare", "to the Prepare state"); err != nil {
				return asl.LambdaValueResponse{}, err
			}
			return asl.LambdaValueResponse{Payload: map[string]any{}}, nil
		}
		id := "call_" + strconv.FormatInt(f.seq.Add(1), 10)
		return asl.LambdaValueResponse{Payload: map[string]any{
			"call":    map[string]any{"id": id, "type": "integration", "integration": map[string]any{"name": in["tool"], "arguments": in["arguments"]}},
			"tool":    map[string]any{"name": in["tool"], "type": "integration"},
			"context": map[string]any{"developer_id": in["developer_id"], "agent_id": in["agent_id"], "execution_id": in["execution_id"]},
			"wait":    nil,
			"result":  map[string]any{"id": id, "type": "integration", "name": in["tool"]}}}, nil
	case "sinew-integration":
		// The result object (what the executor gives when it records the call), whose output
		// also serves a definition that reads only $.Payload.output. Given a task token
		// (Dispatch), the executor answers the token with it instead, or with the bare output for
		// a definition that asks for its record alone (executor.Envelope's answersWhole).
		call, _ := in["call"].(map[string]any)
		integ, _ := call["integration"].(map[string]any)
		if tok, _ := in["task_token"].(string); tok != "" && f.Tokens != nil {
			answer := any(integ["arguments"])
			whole, _ := in["whole_result"].(bool)
			if record, _ := in["record"].(bool); whole || !record {
				answer = map[string]any{"id": call["id"], "type": call["type"], "name": integ["name"], "output": integ["arguments"]}
			}
			if err := f.Tokens.SendTaskSuccess(tok, jsonText(answer)); err != nil {
				return asl.LambdaValueResponse{}, err
			}
			return asl.LambdaValueResponse{Payload: map[string]any{}}, nil
		}
		return asl.LambdaValueResponse{Payload: map[string]any{"id": call["id"], "type": call["type"], "name": integ["name"],
			"output": integ["arguments"]}}, nil
	case "sinew-settle":
		call, _ := in["call"].(map[string]any)
		result, _ := in["result"].(map[string]any)
		return asl.LambdaValueResponse{Payload: map[string]any{"id": call["id"], "type": call["type"], "output": result["output"]}}, nil
	}
	return asl.LambdaValueResponse{FunctionError: "Unhandled", Payload: map[string]any{"errorType": "ResourceNotFound", "errorMessage": fn}}, nil
}

// Invoke implements asl.LambdaInvoker (never used: every payload here is an object).
func (f *RealFunctions) Invoke(context.Context, asl.LambdaRequest) (*asl.LambdaResponse, error) {
	return asl.FunctionErrorResponse("InvalidInput", "the stand-ins take values"), nil
}

// NewRealEngine is an engine whose Lambda functions are the real-shaped stand-ins.
func NewRealEngine() *asl.Engine {
	f := &RealFunctions{}
	e := asl.New(asl.Config{Lambda: f})
	f.Tokens = e
	return e
}
