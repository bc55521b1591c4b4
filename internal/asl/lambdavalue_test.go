package asl_test

import (
	"context"
	"encoding/json"
	"regexp"
	"testing"

	"sinew/internal/asl"
	"sinew/internal/asl/jsonata"
)

// echoBytes answers {"echo": payload, "n": 7} over the byte interface.
type echoBytes struct{}

func (echoBytes) Invoke(_ context.Context, req asl.LambdaRequest) (*asl.LambdaResponse, error) {
	return &asl.LambdaResponse{Payload: []byte(`{"echo":` + string(req.Payload) + `,"n":7}`)}, nil
}

// echoValues answers the same over the value interface, as in-process functions do.
type echoValues struct{ echoBytes }

func (echoValues) InvokeValue(_ context.Context, req asl.LambdaValueRequest) (asl.LambdaValueResponse, error) {
	return asl.LambdaValueResponse{Payload: map[string]any{"echo": req.Payload, "n": int64(7)}}, nil
}

var requestID = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// A function called in-process with values gives the same output and history as one called with
// bytes, whatever the state reads of the lambda:invoke result (request ids aside), and fails with
// the same error when a path is not found.
func TestValueInvokeMatchesBytes(t *testing.T) {
	task := func(extra string) string {
		return `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke",
		"Parameters":{"FunctionName":"f","Payload.$":"$"}` + extra + `,"End":true}}}`
	}
	defs := map[string]string{
		"selector on Payload":     task(`,"ResultSelector":{"n.$":"$.Payload.n","e.$":"$.Payload.echo.a[1]","s.$":"$$.State.Name","k":1},"ResultPath":"$.r"`),
		"selector on StatusCode":  task(`,"ResultSelector":{"c.$":"$.StatusCode","p.$":"$.Payload"}`),
		"selector with intrinsic": task(`,"ResultSelector":{"j.$":"States.JsonToString($.Payload)"}`),
		"selector with a scan":    task(`,"ResultSelector":{"all.$":"$..n"}`),
		"no selector":             task(`,"ResultPath":"$.r"`),
		"selector path missing":   task(`,"ResultSelector":{"n.$":"$.Payload.n","x.$":"$.Payload.missing"}`),
		"assign":                  task(`,"ResultSelector":{"n.$":"$.Payload.n"},"Assign":{"v.$":"$.n"}`),
		"jsonata": `{"QueryLanguage":"JSONata","StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke",
		"Arguments":{"FunctionName":"f","Payload":"{% $states.input %}"},"Output":"{% [$states.result.StatusCode, $states.result.Payload] %}","End":true}}}`,
	}
	for name, def := range defs {
		t.Run(name, func(t *testing.T) {
			var outs, hists [2]string
			for i, lam := range []asl.LambdaInvoker{echoBytes{}, echoValues{}} {
				eng := asl.New(asl.Config{Clock: asl.NewVirtualClock(epoch), Lambda: lam})
				m, err := asl.Parse([]byte(def), asl.Options{JSONata: jsonata.New()})
				if err != nil {
					t.Fatal(err)
				}
				x, err := eng.Start(context.Background(), asl.StartInput{Machine: m, Input: `{"a":[1,2]}`})
				if err != nil {
					t.Fatal(err)
				}
				d, err := x.Wait(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				h, err := json.Marshal(x.History())
				if err != nil {
					t.Fatal(err)
				}
				// A failure's cause (a path not found quotes the whole result) must match too.
				out := string(d.Status) + " " + d.Error + " " + d.Cause + " " + d.Output
				outs[i], hists[i] = requestID.ReplaceAllString(out, "ID"), requestID.ReplaceAllString(string(h), "ID")
			}
			if outs[0] != outs[1] {
				t.Errorf("output with bytes %s, with values %s", outs[0], outs[1])
			}
			if hists[0] != hists[1] {
				t.Errorf("history with bytes\n%s\nwith values\n%s", hists[0], hists[1])
			}
		})
	}
}
