package sfnapi

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
)

// Each Express execution's end is a log line that ExpressLog finds by machine and name: every run
// of a name, not another name's, and a failure's error.
func TestExpressLogLines(t *testing.T) {
	f := setup(t)
	c, ctx := f.sdk(), context.Background()
	sm := f.machine(t, "quick", passDef, "EXPRESS")
	fail := f.machine(t, "quick-fail", `{"StartAt":"F","States":{"F":{"Type":"Fail","Error":"Broke"}}}`, "EXPRESS")
	for _, run := range []struct{ machine, name string }{{sm, "again"}, {sm, "again"}, {sm, "againx"}, {fail, "again"}} {
		if _, err := c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(run.machine), Name: aws.String(run.name)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		machine, name string
		want          []string // status/error of each line
	}{{sm, "again", []string{"SUCCEEDED/", "SUCCEEDED/"}}, {sm, "againx", []string{"SUCCEEDED/"}}, {fail, "again", []string{"FAILED/Broke"}}, {sm, "never", nil}} {
		var got []string
		for _, raw := range f.svc.ExpressLog(tc.machine, tc.name) {
			var l struct {
				Status string `json:"status"`
				Error  string `json:"error"`
			}
			if err := json.Unmarshal(raw, &l); err != nil {
				t.Fatal(err)
			}
			got = append(got, l.Status+"/"+l.Error)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s %s: lines %v, want %v", tc.machine, tc.name, got, tc.want)
		}
	}
}

// The lines kept are the newest maxExpressLog, oldest first.
func TestExpressLogKeepsTheNewest(t *testing.T) {
	s := &Service{}
	for i := range maxExpressLog + 3 {
		s.expressLog.add(fmt.Sprintf("arn:aws:states:r:a:express:m:n:%d", i), json.RawMessage(fmt.Sprint(i)))
	}
	got := s.ExpressLog("arn:aws:states:r:a:stateMachine:m", "n")
	if len(got) != maxExpressLog || string(got[0]) != "3" || string(got[len(got)-1]) != fmt.Sprint(maxExpressLog+2) {
		t.Fatalf("%d lines, first %s, last %s", len(got), got[0], got[len(got)-1])
	}
}
