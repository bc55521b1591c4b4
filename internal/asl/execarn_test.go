package asl

import (
	"regexp"
	"testing"
)

func TestExecutionArn(t *testing.T) {
	uuid := `[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`
	tests := []struct {
		machine, name, arn string
		express            bool
	}{
		{"arn:aws:states:us-east-1:1:stateMachine:m", "run", `^arn:aws:states:us-east-1:1:execution:m:run$`, false},
		{"arn:aws:states:us-east-1:1:stateMachine:m", "", `^arn:aws:states:us-east-1:1:execution:m:` + uuid + `$`, false},
		{"weird", "run", `^weird:run$`, false},
		{"weird", "", `^weird:` + uuid + `$`, false},
		{"arn:aws:states:us-east-1:1:stateMachine:m", "run", `^arn:aws:states:us-east-1:1:express:m:run:` + uuid + `$`, true},
		{"arn:aws:states:us-east-1:1:stateMachine:m", "", `^arn:aws:states:us-east-1:1:express:m:` + uuid + `:` + uuid + `$`, true},
	}
	for _, tt := range tests {
		arn, name := executionArn(tt.machine, tt.name, tt.express, "")
		if !regexp.MustCompile(tt.arn).MatchString(arn) {
			t.Errorf("executionArn(%q, %q) = %q, want %s", tt.machine, tt.name, arn, tt.arn)
		}
		last := arn
		if tt.express { // express:<machine>:<name>:<id>
			last = arn[:len(arn)-37]
		}
		if want := last[len(last)-len(name):]; name == "" || name != want || (tt.name != "" && name != tt.name) {
			t.Errorf("executionArn(%q, %q) name %q, want the ARN's last part", tt.machine, tt.name, name)
		}
	}
	a, _ := executionArn("m", "", false, "")
	b, _ := executionArn("m", "", false, "")
	if a == b {
		t.Errorf("two generated names are the same: %s", a)
	}
	// Step Functions does not keep Express names unique: the same name twice is two executions.
	c, _ := executionArn("arn:aws:states:us-east-1:1:stateMachine:m", "run", true, "")
	d, _ := executionArn("arn:aws:states:us-east-1:1:stateMachine:m", "run", true, "")
	if c == d {
		t.Errorf("two Express executions of one name share an ARN: %s", c)
	}
}

// A journaled Express start names its id, so the ARN answered before it runs is the one it runs
// under, after a restart too.
func TestExpressARNWithID(t *testing.T) {
	arn, name := executionArn("arn:aws:states:us-east-1:1:stateMachine:m", "run", true, "id-1")
	if arn != "arn:aws:states:us-east-1:1:express:m:run:id-1" || name != "run" {
		t.Errorf("executionArn with an id = %q, %q", arn, name)
	}
}
