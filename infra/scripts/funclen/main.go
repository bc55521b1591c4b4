// Command funclen lists the non-test Go functions longer than a limit (100 lines by default) and
// exits 1 when there is one.
//
// make lint runs it. It lists them longest first. A function whose body is a single return of a
// composite literal, or a var or assignment of one, with no control flow in it, is a table and is
// not counted.
//
//	go run ./infra/scripts/funclen [-max 100] [-all] [dir ...]
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type fn struct {
	pos   string
	name  string
	lines int
}

func main() {
	limit := flag.Int("max", 100, "the most lines a function may have")
	all := flag.Bool("all", false, "list every function over -top lines, longest first, and exit 0")
	top := flag.Int("top", 0, "with -all: list functions over this many lines")
	flag.Parse()
	dirs := flag.Args()
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	fns, err := scan(dirs)
	if err != nil {
		fmt.Fprintln(os.Stderr, "funclen:", err)
		os.Exit(2)
	}
	sort.Slice(fns, func(i, j int) bool { return fns[i].lines > fns[j].lines })
	if *all {
		for _, f := range fns {
			if f.lines > *top {
				fmt.Printf("%5d  %s  %s\n", f.lines, f.name, f.pos)
			}
		}
		return
	}
	over := 0
	for _, f := range fns {
		if f.lines > *limit {
			fmt.Printf("%5d  %s  %s\n", f.lines, f.name, f.pos)
			over++
		}
	}
	if over > 0 {
		fmt.Fprintf(os.Stderr, "funclen: %d non-test functions over %d lines\n", over, *limit)
		os.Exit(1)
	}
	if len(fns) > 0 {
		fmt.Printf("longest: %d lines, %s %s\n", fns[0].lines, fns[0].name, fns[0].pos)
	}
}

// scan parses every non-test .go file under dirs, skipping node_modules, testdata and dot
// directories.
func scan(dirs []string) ([]fn, error) {
	var out []fn
	fset := token.NewFileSet()
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if d.IsDir() {
				if path != dir && (name == "node_modules" || name == "testdata" || strings.HasPrefix(name, ".")) {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			out = append(out, funcs(fset, f)...)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// funcs gives the functions and methods of f, and the function literals that are not inside one
// (package-level vars), with their length in lines from the func keyword to the closing brace.
func funcs(fset *token.FileSet, f *ast.File) []fn {
	var out []fn
	add := func(name string, n ast.Node, body *ast.BlockStmt) {
		if body == nil || isTable(body) {
			return
		}
		start, end := fset.Position(n.Pos()), fset.Position(n.End())
		out = append(out, fn{pos: fmt.Sprintf("%s:%d", start.Filename, start.Line), name: name, lines: end.Line - start.Line + 1})
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			add(funcName(d), d, d.Body)
		case *ast.GenDecl:
			// A func literal in a package-level var (a table of closures) counts on its own.
			ast.Inspect(d, func(n ast.Node) bool {
				if lit, ok := n.(*ast.FuncLit); ok {
					add("func literal", lit, lit.Body)
					return false
				}
				return true
			})
		}
	}
	return out
}

func funcName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	t := d.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if g, ok := t.(*ast.IndexExpr); ok {
		t = g.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + d.Name.Name
	}
	return d.Name.Name
}

// isTable reports whether body is a plain table: statements that only return or assign composite
// literals, with no control flow and no function literal anywhere in them.
func isTable(body *ast.BlockStmt) bool {
	if len(body.List) == 0 {
		return false
	}
	for _, s := range body.List {
		var vals []ast.Expr
		switch s := s.(type) {
		case *ast.ReturnStmt:
			vals = s.Results
		case *ast.AssignStmt:
			vals = s.Rhs
		case *ast.DeclStmt:
			ast.Inspect(s, func(n ast.Node) bool {
				if v, ok := n.(*ast.ValueSpec); ok {
					vals = append(vals, v.Values...)
				}
				return true
			})
		default:
			return false
		}
		for _, v := range vals {
			if _, ok := v.(*ast.CompositeLit); !ok {
				return false
			}
			plain := true
			ast.Inspect(v, func(n ast.Node) bool {
				if _, ok := n.(*ast.FuncLit); ok {
					plain = false
				}
				return plain
			})
			if !plain {
				return false
			}
		}
	}
	return true
}
