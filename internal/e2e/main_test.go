package e2e

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"sinew/internal/testenv/ddblocal"
	"sinew/internal/testenv/localmode"
)

// binPath is ./infra/local, built once for the package: the tests drive the real process.
var binPath string

func TestMain(m *testing.M) {
	// The in-process handlers' boundary logs each refusal; the tests read the answers instead.
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	// A fixed place for the fallback build, reused by the next run (ddblocal.Main exits).
	dir := filepath.Join(os.TempDir(), "sinew-e2e-bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var err error
	if binPath, err = localmode.Build("../..", filepath.Join(dir, "local")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ddblocal.Main(m)
}
