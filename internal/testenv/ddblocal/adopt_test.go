package ddblocal_test

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sinew/internal/testenv/ddblocal"
)

func TestAdoptSharedDB(t *testing.T) {
	const key, region = "AKIDLOCAL1", "us-east-1"
	target := key + "_" + region + ".db"
	for _, tc := range []struct {
		name      string
		key       string
		before    map[string]string // file name -> content
		wantMoved bool
		wantErr   string
		after     map[string]string
	}{
		{"moves the shared database", key, map[string]string{"shared-local-instance.db": "shared"}, true, "",
			map[string]string{target: "shared"}},
		{"moves a crash's journal with it", key,
			map[string]string{"shared-local-instance.db": "shared", "shared-local-instance.db-journal": "journal"}, true, "",
			map[string]string{target: "shared", target + "-journal": "journal"}},
		{"leaves an existing target alone", key,
			map[string]string{"shared-local-instance.db": "shared", target: "mine", "shared-local-instance.db-journal": "j"}, false, "",
			map[string]string{"shared-local-instance.db": "shared", target: "mine", "shared-local-instance.db-journal": "j"}},
		{"nothing to move", key, map[string]string{"other_us-east-1.db": "other"}, false, "",
			map[string]string{"other_us-east-1.db": "other"}},
		{"an empty directory", key, nil, false, "", nil},
		{"a key id that is a path", "../x", map[string]string{"shared-local-instance.db": "shared"}, false, "not one DynamoDB Local accepts",
			map[string]string{"shared-local-instance.db": "shared"}},
		{"a key id DynamoDB Local refuses", "AKID-1", map[string]string{"shared-local-instance.db": "shared"}, false, "not one DynamoDB Local accepts",
			map[string]string{"shared-local-instance.db": "shared"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tc.before {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			moved, err := ddblocal.AdoptSharedDB(dir, tc.key, region)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			if moved != tc.wantMoved {
				t.Errorf("moved %v, want %v", moved, tc.wantMoved)
			}
			if got, want := readDir(t, dir), tc.after; !maps.Equal(got, want) {
				t.Errorf("files %v, want %v", got, want)
			}
		})
	}
}

func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(b)
	}
	return files
}

// fileNames lists dir's files, sorted.
func fileNames(t *testing.T, dir string) []string {
	t.Helper()
	return slices.Sorted(maps.Keys(readDir(t, dir)))
}
