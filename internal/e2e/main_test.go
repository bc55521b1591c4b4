package e2e

import (
	"crypto/sha256"
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
	// A fixed place per checkout for the fallback build, reused by the next run (ddblocal.Main
	// exits); two checkouts tested at once each build their own.
	wd, _ := os.Getwd()
	sum := sha256.Sum256([]byte(wd))
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("sinew-e2e-bin-%x", sum[:6]))
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
