package stack

import (
	"bytes"
	"debug/elf"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestGoBundler builds a tiny function the way synth builds the real ones and checks the result is
// a static linux/arm64 executable named bootstrap.
func TestGoBundler(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles")
	}
	root := t.TempDir()
	files := map[string]string{
		"go.mod":                   "module sinew\n\ngo 1.26\n",
		"functions/hello/main.go":  "package main\n\nfunc main() { println(\"hello\") }\n",
		"functions/broken/main.go": "package main\n\nfunc main() { undefined() }\n",
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	found, err := FindRoot(filepath.Join(root, "functions", "hello"))
	if err != nil || found != root {
		t.Fatalf("FindRoot = %q, %v; want %q", found, err, root)
	}
	if got := MissingFunctions(root, []string{"hello", "absent", "broken"}); !slices.Equal(got, []string{"absent"}) {
		t.Errorf("MissingFunctions = %v", got)
	}

	out := t.TempDir()
	var log bytes.Buffer
	b := &GoBundler{Root: root, Pkg: "./functions/hello", Log: &log}
	if ok := b.TryBundle(&out, nil); ok == nil || !*ok {
		t.Fatalf("TryBundle failed:\n%s", log.String())
	}
	f, err := elf.Open(filepath.Join(out, "bootstrap"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Machine != elf.EM_AARCH64 || f.Type != elf.ET_EXEC {
		t.Errorf("bootstrap is %v %v, want an AArch64 executable", f.Machine, f.Type)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("bootstrap is dynamically linked; CGO_ENABLED=0 should make it static")
		}
	}

	log.Reset()
	broken := &GoBundler{Root: root, Pkg: "./functions/broken", Log: &log}
	if ok := broken.TryBundle(&out, nil); ok == nil || *ok {
		t.Error("TryBundle of a broken package succeeded")
	}
	if !strings.Contains(log.String(), "undefined") || !strings.Contains(log.String(), "./functions/broken") {
		t.Errorf("the failure should show go build's message and the package:\n%s", log.String())
	}
}

func TestFindRootOfRepository(t *testing.T) {
	root := repoRoot(t)
	if _, err := os.Stat(filepath.Join(root, "internal", "deploy")); err != nil {
		t.Errorf("FindRoot gave %s, which has no internal/deploy", root)
	}
	if _, err := FindRoot(t.TempDir()); err == nil {
		t.Error("FindRoot found a root outside any module sinew")
	}
}
