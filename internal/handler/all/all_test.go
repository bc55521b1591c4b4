package all

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sinew/internal/deploy"
)

// TestEveryFunctionHasItsConstructor: the table holds one constructor per described function, and
// each functions/<name>/main.go starts that same constructor, so local mode and a deployment build
// every Lambda alike.
func TestEveryFunctionHasItsConstructor(t *testing.T) {
	var described []string
	for _, fn := range deploy.Functions() {
		described = append(described, fn.Name)
	}
	var keys []string
	for k := range Lambdas {
		keys = append(keys, k)
	}
	slices.Sort(described)
	slices.Sort(keys)
	if !slices.Equal(described, keys) {
		t.Fatalf("constructors for %v, described functions %v", keys, described)
	}
	for name, ctor := range Lambdas {
		// "sinew/internal/handler/api.New": the constructor's package and name.
		full := runtime.FuncForPC(reflect.ValueOf(ctor).Pointer()).Name()
		pkg, fn, _ := strings.Cut(full[strings.LastIndex(full, "/")+1:], ".")
		pkg = full[:strings.LastIndex(full, "/")+1] + pkg
		if got := startedBy(t, name); got != pkg+"."+fn {
			t.Errorf("functions/%s/main.go starts %s, the table %s", name, got, pkg+"."+fn)
		}
	}
}

// startedBy is what functions/<name>/main.go passes to handler.Start, as import path and name.
func startedBy(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join("..", "..", "..", "functions", name, "main.go")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("functions/%s: %v", name, err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	imports := map[string]string{}
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		local := p[strings.LastIndex(p, "/")+1:]
		if im.Name != nil {
			local = im.Name.Name
		}
		imports[local] = p
	}
	var started string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 1 {
			return true
		}
		if fn, ok := call.Fun.(*ast.SelectorExpr); ok && fn.Sel.Name == "Start" {
			if arg, ok := call.Args[0].(*ast.SelectorExpr); ok {
				if id, ok := arg.X.(*ast.Ident); ok {
					started = imports[id.Name] + "." + arg.Sel.Name
				}
			}
		}
		return true
	})
	return started
}
