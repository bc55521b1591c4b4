package config

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEListsEveryVariable keeps the configuration table of this package's README.md in step with the code.
func TestREADMEListsEveryVariable(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatalf("reading internal/config/README.md: %v", err)
	}
	for _, v := range Variables() {
		if !strings.Contains(string(readme), "| `"+v.Name+"` |") {
			t.Errorf("internal/config/README.md lacks %s (default %q: %s)", v.Name, v.Default, v.Doc)
		}
	}
}
