package main

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

func TestFuncs(t *testing.T) {
	long := "func long() int {\n\tx := 0\n" + strings.Repeat("\tx++\n", 100) + "\treturn x\n}\n"
	table := "func table() map[string]int {\n\treturn map[string]int{\n" + strings.Repeat("\t\t\"k\": 1,\n", 120) + "\t}\n}\n"
	closures := "func closures() []func() int {\n\treturn []func() int{\n" + strings.Repeat("\t\tfunc() int { return 1 },\n", 120) + "\t}\n}\n"
	src := "package p\n\n" + long + table + closures + "type T struct{}\n\nfunc (*T) short() {}\n\nvar v = func() int {\n\treturn 1\n}\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, fn := range funcs(fset, f) {
		got[fn.name] = fn.lines
	}
	want := map[string]int{"long": 104, "closures": 124, "T.short": 1, "func literal": 3}
	for name, n := range want {
		if got[name] != n {
			t.Errorf("%s: %d lines, want %d (all: %v)", name, got[name], n, got)
		}
	}
	if _, ok := got["table"]; ok {
		t.Errorf("a plain table counted: %v", got)
	}
}
