package asl

import (
	"context"
	"encoding/json"
	"regexp"
	"testing"
	"time"
)

// echoFunction answers {"echo": payload} over bytes.
type echoFunction struct{}

func (echoFunction) Invoke(_ context.Context, req LambdaRequest) (*LambdaResponse, error) {
	return &LambdaResponse{Payload: []byte(`{"echo":` + string(req.Payload) + `}`)}, nil
}

// A lambda:invoke task's Parameters evaluated as taskArgs (the engine's own integration) give the
// outcome and history the same Parameters give as an object (the integration wrapped, as a
// registered one is), failures included.
func TestTaskArgsMatchObject(t *testing.T) {
	task := func(params string) string {
		return `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke",
		"Parameters":` + params + `,"ResultSelector":{"e.$":"$.Payload.echo"},"End":true}}}`
	}
	defs := map[string]string{
		"payload path":        task(`{"FunctionName":"f","Payload.$":"$"}`),
		"payload object":      task(`{"FunctionName":"f","Payload":{"a.$":"$.a","k":1},"Qualifier":"q"}`),
		"no payload":          task(`{"FunctionName":"f"}`),
		"payload twice":       task(`{"FunctionName":"f","Payload":{"x":1},"Payload.$":"$.a"}`),
		"unsupported field":   task(`{"FunctionName":"f","Nope":1}`),
		"no function name":    task(`{"Payload.$":"$"}`),
		"path not found":      task(`{"FunctionName":"f","Payload.$":"$.missing"}`),
		"function name path":  task(`{"FunctionName.$":"$.fn","Payload.$":"$.a"}`),
		"too many for args":   task(`{"FunctionName":"f","Payload":1,"Qualifier":"q","LogType":"None","InvocationType":"RequestResponse"}`),
		"intrinsic in params": task(`{"FunctionName":"f","Payload.$":"States.Array($.a)"}`),
	}
	for name, def := range defs {
		t.Run(name, func(t *testing.T) {
			var got [2]string
			for i, wrap := range []bool{false, true} {
				cfg := Config{Clock: NewVirtualClock(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)), Lambda: echoFunction{}}
				if wrap {
					own := &lambdaInvoke{invoker: echoFunction{}}
					cfg.Integrations = map[string]Integration{"lambda:invoke": IntegrationFunc(own.Invoke)}
				}
				eng := New(cfg)
				if eng.builtinInvoke == wrap {
					t.Fatalf("builtinInvoke = %v with the integration wrapped %v", eng.builtinInvoke, wrap)
				}
				m, err := Parse([]byte(def), Options{})
				if err != nil {
					t.Fatal(err)
				}
				x, err := eng.Start(context.Background(), StartInput{Machine: m, Input: `{"a":[1,2],"fn":"g"}`, Name: "x"})
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
				got[i] = d.Status + " " + d.Error + " " + d.Cause + " " + d.Output + "\n" + requestIDs.ReplaceAllString(string(h), "ID")
			}
			if got[0] != got[1] {
				t.Errorf("as taskArgs:\n%s\nas an object:\n%s", got[0], got[1])
			}
		})
	}
}

var requestIDs = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
