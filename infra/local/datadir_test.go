package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sinew/internal/testenv/localmode"
)

func TestCheckDataDir(t *testing.T) {
	tmp := t.TempDir()
	link := filepath.Join(tmp, "to-opt")
	if err := os.Symlink("/opt", link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir    string
		refuse bool
	}{
		{"/opt/sinew", true},
		{"/usr/local/sinew/.local", true},
		{"/usr", true},
		{"/lib/x", true},
		{"/etc/fonts/x", true},
		{filepath.Join(link, "data"), true}, // a link into /opt is /opt
		{"/optional/sinew", false},
		{"/usr2/x", false},
		{filepath.Join(tmp, ".local"), false},
	} {
		err := checkDataDir(tc.dir)
		if (err != nil) != tc.refuse {
			t.Errorf("checkDataDir(%s) = %v, want refused %v", tc.dir, err, tc.refuse)
		}
		if err != nil && !strings.Contains(err.Error(), "--dir") {
			t.Errorf("checkDataDir(%s): %v does not say how to choose another", tc.dir, err)
		}
	}
}

// Local mode itself refuses such a directory at start, before it makes anything there.
func TestLocalModeRefusesADataDirTheSandboxReads(t *testing.T) {
	dir := filepath.Join("/opt", "sinew-refused-"+filepath.Base(t.TempDir()))
	_, err := localmode.Start(binPath, dir, []string{"--in-memory", "--root", "../.."}, nil)
	if err == nil || !strings.Contains(err.Error(), "is under /opt") {
		t.Fatalf("local mode on %s: %v; want a refusal naming /opt", dir, err)
	}
	if _, statErr := os.Stat(dir); !os.IsNotExist(statErr) {
		t.Errorf("local mode made %s before refusing it (%v)", dir, statErr)
		_ = os.RemoveAll(dir)
	}
}
