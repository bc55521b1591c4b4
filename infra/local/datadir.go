package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"sinew/internal/sandbox"
)

// checkDataDir refuses a data directory that a confined tool program may read: the sandbox lets
// ffmpeg and the other confined programs read the system directories (sandbox.ReadablePaths), so a
// data directory under one would hand them local mode's keys, credentials and journal. dir is
// absolute; symbolic links are resolved as far as the path exists.
func checkDataDir(dir string) error {
	real := resolveExisting(dir)
	for _, sys := range sandbox.ReadablePaths() {
		for _, d := range []string{dir, real} {
			if d == sys || strings.HasPrefix(d, sys+string(filepath.Separator)) {
				return fmt.Errorf("the data directory %s is under %s, which the tools' sandbox lets confined programs (ffmpeg, Chromium) read; choose one outside %s with --dir",
					dir, sys, strings.Join(sandbox.SystemDirs, ", "))
			}
		}
	}
	return nil
}

// resolveExisting is dir with symbolic links resolved in its longest existing prefix.
func resolveExisting(dir string) string {
	rest := ""
	for p := dir; ; p = filepath.Dir(p) {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(real, rest)
		}
		if p == filepath.Dir(p) {
			return dir
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}
