package awsauth

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

func TestLoadOrCreate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".local")
	first, err := LoadOrCreate(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^AKIA[A-Z2-7]{16}$`).MatchString(first.AccessKeyID) {
		t.Errorf("access key id %q is not AKIA and 16 base32 characters", first.AccessKeyID)
	}
	if !regexp.MustCompile(`^[A-Za-z0-9+/]{40}$`).MatchString(first.SecretAccessKey) {
		t.Errorf("secret is not 40 base64 characters (%d long)", len(first.SecretAccessKey))
	}
	fi, err := os.Stat(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("credentials file mode %04o, want 0600", perm)
	}
	for _, load := range []func(string) (Credentials, error){LoadOrCreate, Load} {
		again, err := load(dir)
		if err != nil || again != first {
			t.Errorf("loading again gave other credentials (%v)", err)
		}
	}
	other, err := LoadOrCreate(t.TempDir())
	if err != nil || other == first {
		t.Errorf("another directory got the same credentials (%v)", err)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".aws-credentials-*")); len(leftovers) != 0 {
		t.Errorf("temp files left: %v", leftovers)
	}
}

// Local mode's processes may start together; they must all end up with the one key in the file.
func TestLoadOrCreateConcurrent(t *testing.T) {
	dir := t.TempDir()
	got := make([]Credentials, 8)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			c, err := LoadOrCreate(dir)
			if err != nil {
				t.Error(err)
			}
			got[i] = c
		})
	}
	wg.Wait()
	onFile, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range got {
		if c != onFile {
			t.Errorf("caller %d got credentials other than the file's", i)
		}
	}
}

func TestLoadRefuses(t *testing.T) {
	tests := []struct {
		name     string
		content  string // "" leaves no file
		mode     os.FileMode
		want     string
		notExist bool
	}{
		{name: "missing", notExist: true},
		{name: "readable by others", content: `{"AccessKeyId":"AKIA","SecretAccessKey":"s"}`, mode: 0o644, want: "chmod 600"},
		{name: "readable by group", content: `{"AccessKeyId":"AKIA","SecretAccessKey":"s"}`, mode: 0o640, want: "chmod 600"},
		{name: "not JSON", content: `AKIA s`, mode: 0o600, want: "not valid JSON"},
		{name: "no secret", content: `{"AccessKeyId":"AKIA"}`, mode: 0o600, want: "lacks"},
		{name: "unknown member", content: `{"AccessKeyId":"AKIA","SecretAccessKey":"s","Token":"t"}`, mode: 0o600, want: "not valid JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, FileName)
			if tc.content != "" {
				if err := os.WriteFile(path, []byte(tc.content), tc.mode); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, tc.mode); err != nil { // past the umask
					t.Fatal(err)
				}
			}
			_, err := Load(dir)
			if tc.notExist {
				if !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("Load = %v, want an error wrapping fs.ErrNotExist", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load = %v, want an error with %q", err, tc.want)
			}
			// LoadOrCreate must not paper over a file it cannot use by writing a new key.
			if _, err := LoadOrCreate(dir); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("LoadOrCreate = %v, want an error with %q", err, tc.want)
			}
			if data, _ := os.ReadFile(path); string(data) != tc.content {
				t.Errorf("the file was rewritten: %q", data)
			}
		})
	}
}

func TestCredentialsHideSecret(t *testing.T) {
	c := Credentials{AccessKeyID: "AKIAEXAMPLE", SecretAccessKey: "very-secret"}
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%v %+v %#v %s", c, c, c, c)} {
		if strings.Contains(s, c.SecretAccessKey) || !strings.Contains(s, c.AccessKeyID) {
			t.Errorf("printed as %q", s)
		}
	}
	want := []string{"AWS_ACCESS_KEY_ID=AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY=very-secret", "AWS_SESSION_TOKEN="}
	if got := c.Env(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Env() = %q, want %q", got, want)
	}
}
