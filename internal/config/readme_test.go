package config

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEListsEveryVariable keeps the README's configuration table in step with the code.
func TestREADMEListsEveryVariable(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatalf("reading the README: %v", err)
	}
	for _, v := range Variables() {
		if !strings.Contains(string(readme), "| `"+v.Name+"` |") {
			t.Errorf("README.md's configuration table lacks %s (default %q: %s)", v.Name, v.Default, v.Doc)
		}
	}
}
