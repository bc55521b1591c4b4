package awsauth

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// cliEnv is the environment for the AWS CLI: nothing from the developer's own AWS setup, only
// creds and the region.
func cliEnv(c Credentials) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	return append(append(env, c.Env()...),
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_EC2_METADATA_DISABLED=true",
		"AWS_PAGER=", "AWS_DEFAULT_REGION="+testRegion, "AWS_MAX_ATTEMPTS=1")
}

// TestAWSCLI drives the real AWS CLI (Python, its own SigV4 signer) against a Wrap'd handler.
func TestAWSCLI(t *testing.T) {
	aws, err := exec.LookPath("aws")
	if err != nil {
		t.Fatal("the AWS CLI (aws) is not on PATH; `make deps` installs it")
	}
	dir := t.TempDir()
	payload := filepath.Join(dir, "payload.json")
	if err := os.WriteFile(payload, []byte(`{"cli-marker":true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	wrong := Credentials{AccessKeyID: testCreds.AccessKeyID, SecretAccessKey: strings.Repeat("x", 40)}
	// fileb:// reads the payload as bytes in both CLI v1 and v2, where a literal payload differs.
	invoke := []string{"lambda", "invoke", "--function-name", "f", "--payload", "fileb://" + payload, filepath.Join(dir, "out.json")}
	tests := []struct {
		name    string
		args    []string
		creds   Credentials
		wantErr string // "" for success
		marker  string // what the handler must have seen on success
	}{
		{"kms list-keys", []string{"kms", "list-keys"}, testCreds, "", "{}"},
		{"kms list-keys, wrong secret", []string{"kms", "list-keys"}, wrong, codeInvalid, ""},
		{"lambda invoke", invoke, testCreds, "", "cli-marker"},
		{"lambda invoke, wrong secret", invoke, wrong, codeInvalid, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, srv := serve(t, Options{Region: testRegion})
			cmd := exec.CommandContext(t.Context(), aws, append(tc.args, "--endpoint-url", srv.URL)...)
			cmd.Env = cliEnv(tc.creds)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("aws %s: %v\n%s", strings.Join(tc.args, " "), err, stderr.Bytes())
				}
				if seen := rec.seen(); len(seen) != 1 || !strings.Contains(seen[0], tc.marker) {
					t.Errorf("handler saw %q, want one body holding %q (stdout %s)", seen, tc.marker, out)
				}
				return
			}
			if err == nil || !strings.Contains(stderr.String(), tc.wantErr) {
				t.Errorf("aws %s: %v, stderr %q; want a failure naming %s", strings.Join(tc.args, " "), err, stderr.Bytes(), tc.wantErr)
			}
			t.Logf("aws says: %s", bytes.TrimSpace(stderr.Bytes()))
			if strings.Contains(stderr.String(), tc.creds.SecretAccessKey) {
				t.Error("the CLI's error shows the secret")
			}
		})
	}
}
