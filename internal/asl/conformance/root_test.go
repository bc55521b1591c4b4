package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRoot: the recordings are found inside the repository, and missing data is an error that
// says where it looked, never a silent skip.
func TestRoot(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	inRepo := filepath.Join(wd, "testdata", "localstack-sfn")
	empty := t.TempDir()
	tests := []struct {
		name, env, dir, want, wantErr string
	}{
		{name: "in the repository", dir: wd, want: inRepo},
		{name: "from a subfolder", dir: filepath.Join(wd, "cmd", "conformance"), want: inRepo},
		{name: "$SINEW_CONFORMANCE wins", env: inRepo, dir: empty, want: inRepo},
		{name: "$SINEW_CONFORMANCE without the data", env: empty, dir: wd, wantErr: "the AWS recordings are missing: no templates folder in " + empty},
		{name: "outside the module", dir: empty, wantErr: "no go.mod above"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("SINEW_CONFORMANCE", tt.env)
			got, err := Root(tt.dir)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Root(%s) = %q, %v; want an error containing %q", tt.dir, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Root(%s) = %q, %v; want %q", tt.dir, got, err, tt.want)
			}
		})
	}
}
