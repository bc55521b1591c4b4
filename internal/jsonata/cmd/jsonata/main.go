// Command jsonata evaluates JSONata expressions read as JSON lines on stdin, one result line each
// on stdout. A request is
//
//	{"expr": "$sum(items.price)", "input": {...}, "bindings": {"name": value, ...}}
//
// where input (the context item) and bindings may be absent. The answer is one of
//
//	{"result": <JSON>}   {"undefined": true}   {"error": {"code": "T2001", "message": "..."}}
//
// Plain JSONata 2.0.6 by default; -asl evaluates as Step Functions does (its functions $partition,
// $range, $hash, $random, $uuid, $parse; $eval, `??`, `?:` and bare top-level fields refused), with
// the bindings as variables and, unless they bind "states", $states.input set to input. Run it as
//
//	go run ./internal/jsonata/cmd/jsonata [-asl] [-timeout 10s] < requests.jsonl
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"time"

	asljsonata "sinew/internal/asl/jsonata"
	"sinew/internal/jsonata"
)

type request struct {
	Expr     string                     `json:"expr"`
	Input    json.RawMessage            `json:"input"`
	Bindings map[string]json.RawMessage `json:"bindings"`
}

type failure struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func main() {
	asl := flag.Bool("asl", false, "evaluate as Step Functions does (its functions and restrictions)")
	timeout := flag.Duration("timeout", 10*time.Second, "bound of one evaluation")
	flag.Parse()
	if err := run(os.Stdin, os.Stdout, *asl, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "jsonata:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer, asl bool, timeout time.Duration) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	w := bufio.NewWriter(out)
	defer w.Flush()
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		if _, err := w.Write(append(answer(line, asl, timeout), '\n')); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	return sc.Err()
}

func answer(line []byte, asl bool, timeout time.Duration) []byte {
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		return errorLine("request", "the line is not a JSON request: "+err.Error())
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if asl {
		return evalASL(ctx, req)
	}
	return evalPlain(ctx, req, timeout)
}

func evalPlain(ctx context.Context, req request, timeout time.Duration) []byte {
	x, err := jsonata.Compile(req.Expr)
	if err != nil {
		return errorOf(err)
	}
	opts := jsonata.Options{Timeout: timeout, Bindings: map[string]any{}}
	for k, raw := range req.Bindings {
		v, err := jsonata.ParseJSON(raw)
		if err != nil {
			return errorLine("request", fmt.Sprintf("binding %s is not JSON: %v", k, err))
		}
		opts.Bindings[k] = v
	}
	var v any
	var defined bool
	if len(req.Input) == 0 {
		v, defined, err = x.EvalUndefined(ctx, opts)
	} else {
		in, perr := jsonata.ParseJSON(req.Input)
		if perr != nil {
			return errorLine("request", "input is not JSON: "+perr.Error())
		}
		v, defined, err = x.Eval(ctx, in, opts)
	}
	if err != nil {
		return errorOf(err)
	}
	if !defined {
		return []byte(`{"undefined":true}`)
	}
	b, err := jsonata.MarshalJSON(v)
	if err != nil {
		return errorOf(err)
	}
	return append(append([]byte(`{"result":`), b...), '}')
}

func evalASL(ctx context.Context, req request) []byte {
	x, err := asljsonata.New().Compile(req.Expr)
	if err != nil {
		return errorOf(err)
	}
	vars := map[string]any{}
	for k, raw := range req.Bindings {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return errorLine("request", fmt.Sprintf("binding %s is not JSON: %v", k, err))
		}
		vars[k] = v
	}
	if _, ok := vars["states"]; !ok {
		var in any
		if len(req.Input) > 0 {
			if err := json.Unmarshal(req.Input, &in); err != nil {
				return errorLine("request", "input is not JSON: "+err.Error())
			}
		}
		vars["states"] = map[string]any{"input": in}
	}
	v, defined, err := x.Eval(ctx, vars)
	if err != nil {
		return errorOf(err)
	}
	if !defined {
		return []byte(`{"undefined":true}`)
	}
	b, err := json.Marshal(map[string]any{"result": v})
	if err != nil {
		return errorLine("result", err.Error())
	}
	return b
}

var codeRE = regexp.MustCompile(`^([A-Z][A-Z0-9_]*[0-9]|[A-Z_]+): (.*)$`)

func errorOf(err error) []byte {
	if e, ok := err.(*jsonata.Error); ok {
		return errorLine(e.Code, e.Message())
	}
	if m := codeRE.FindStringSubmatch(err.Error()); m != nil {
		return errorLine(m[1], m[2])
	}
	return errorLine("error", err.Error())
}

func errorLine(code, msg string) []byte {
	b, _ := json.Marshal(map[string]failure{"error": {Code: code, Message: msg}})
	return b
}
