package awscli

import "testing"

func TestParse(t *testing.T) {
	tests := []struct {
		line           string
		v2, endpointOK bool
		rawArgs        int
	}{
		{"aws-cli/1.45.11 Python/3.11.7 Linux/6.1 botocore/1.43.11", false, true, 0},
		{"aws-cli/1.27.0 Python/3.11.7 Linux/6.1 botocore/1.29.0", false, false, 0},
		{"aws-cli/2.9.19 Python/3.11.2 Linux/6.1 source/x86_64.debian.12 prompt/off", true, false, 2},
		{"aws-cli/2.13.0 Python/3.11.4 Linux/6.1 exe/x86_64.debian.12", true, true, 2},
		{"aws-cli/2.31.4 Python/3.13.7 Linux/6.1 exe/x86_64.ubuntu.24", true, true, 2},
	}
	for _, tt := range tests {
		c, err := parse("aws", tt.line)
		if err != nil {
			t.Fatalf("%s: %v", tt.line, err)
		}
		if c.V2() != tt.v2 || c.HonoursEndpointURL() != tt.endpointOK || len(c.RawBlobArgs()) != tt.rawArgs {
			t.Errorf("%s: v2 %v, endpoint URL %v, raw blob args %v; want %v, %v, %d args",
				tt.line, c.V2(), c.HonoursEndpointURL(), c.RawBlobArgs(), tt.v2, tt.endpointOK, tt.rawArgs)
		}
	}
	if _, err := parse("aws", "command not found"); err == nil {
		t.Error("a line without a version parsed")
	}
}

// The CLI on this machine is one the tests can drive.
func TestFind(t *testing.T) {
	c := Find(t)
	if c.Version == "" || c.Path == "" {
		t.Errorf("Find = %+v", c)
	}
	t.Logf("%s %s (v2 %v, honours AWS_ENDPOINT_URL %v)", c.Path, c.Version, c.V2(), c.HonoursEndpointURL())
}
