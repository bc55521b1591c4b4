// Command pkgdoc checks that every package's doc opens with one short sentence, so package lists
// read at a glance.
//
// The sentence may have at most 30 words by default; the depth follows it in the doc.
//
// It prints each package whose first sentence runs longer, or that has no doc, with its word
// count, then the count of packages checked, and exits 1 when it printed one. make lint runs it.
//
//	go run ./infra/scripts/pkgdoc [-max 30] [dir ...]
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	maxWords := flag.Int("max", 30, "the most words a package doc's first sentence may have")
	flag.Parse()
	dirs := flag.Args()
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	checked, bad := 0, 0
	for _, dir := range dirs {
		pkgs, err := list(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "pkgdoc:", err)
			os.Exit(2)
		}
		for _, p := range pkgs {
			checked++
			first := firstSentence(p.dir)
			if n := len(strings.Fields(first)); first == "" || n > *maxWords {
				bad++
				fmt.Printf("%s: %d words: %s\n", p.path, n, first)
			}
		}
	}
	fmt.Printf("pkgdoc: %d packages, %d whose doc's first sentence is missing or over %d words\n", checked, bad, *maxWords)
	if bad > 0 {
		os.Exit(1)
	}
}

type pkg struct{ path, dir string }

// list is every package under dir as `go list` sees it (test-only packages included: their
// directory has test files only).
func list(dir string) ([]pkg, error) {
	cmd := exec.Command("go", "list", "-e", "-f", "{{.ImportPath}}\t{{.Dir}}", "./...")
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list in %s: %w", dir, err)
	}
	var pkgs []pkg
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		path, d, ok := strings.Cut(sc.Text(), "\t")
		if ok {
			pkgs = append(pkgs, pkg{path, d})
		}
	}
	return pkgs, sc.Err()
}

// firstSentence is the first sentence of the package's doc comment, as go/doc's Synopsis cuts it,
// from its non-test files, else (a test-only package) its test files.
func firstSentence(dir string) string {
	for _, tests := range []bool{false, true} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") != tests {
				continue
			}
			af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil || af.Doc == nil {
				continue
			}
			return synopsis(af.Doc)
		}
	}
	return ""
}

// synopsis is go/doc's: the first sentence of the comment's first paragraph.
func synopsis(g *ast.CommentGroup) string {
	return new(doc.Package).Synopsis(g.Text())
}
