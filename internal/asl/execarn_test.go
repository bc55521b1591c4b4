package asl

import (
	"regexp"
	"testing"
)

func TestExecutionArn(t *testing.T) {
	uuid := `[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`
	tests := []struct{ machine, name, arn string }{
		{"arn:aws:states:us-east-1:1:stateMachine:m", "run", `^arn:aws:states:us-east-1:1:execution:m:run$`},
		{"arn:aws:states:us-east-1:1:stateMachine:m", "", `^arn:aws:states:us-east-1:1:execution:m:` + uuid + `$`},
		{"weird", "run", `^weird:run$`},
		{"weird", "", `^weird:` + uuid + `$`},
	}
	for _, tt := range tests {
		arn, name := executionArn(tt.machine, tt.name)
		if !regexp.MustCompile(tt.arn).MatchString(arn) {
			t.Errorf("executionArn(%q, %q) = %q, want %s", tt.machine, tt.name, arn, tt.arn)
		}
		if want := arn[len(arn)-len(name):]; name == "" || name != want || (tt.name != "" && name != tt.name) {
			t.Errorf("executionArn(%q, %q) name %q, want the ARN's last part", tt.machine, tt.name, name)
		}
	}
	a, _ := executionArn("m", "")
	b, _ := executionArn("m", "")
	if a == b {
		t.Errorf("two generated names are the same: %s", a)
	}
}
