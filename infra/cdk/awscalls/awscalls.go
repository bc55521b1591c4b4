// Package awscalls finds the AWS API calls each Lambda function's code can make.
//
// It loads the functions' main packages with everything they link, builds their SSA form, keeps the
// code reachable from each main (rapid type analysis refined by variable type analysis: a dynamic
// call reaches the functions and types that can flow to it), and records every call in sinew's own
// packages whose argument is an aws-sdk-go-v2 operation input (*<service>.<Op>Input). Calls through
// sinew's narrow client interfaces count, since the input type names the operation whatever the
// receiver is.
//
// Two details IAM needs besides the operation are read from the reachable source: the item operations
// a DynamoDB transaction holds (the fields set in types.TransactWriteItem / TransactGetItem literals),
// and which of the table's indexes a Query may name (an index constant such as store.GSI1 given as
// a value, not compared against).
package awscalls

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/types"
	"maps"
	"os"
	"slices"
	"strings"

	"golang.org/x/tools/go/callgraph/rta"
	"golang.org/x/tools/go/callgraph/vta"
	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"
)

const sdkService = "github.com/aws/aws-sdk-go-v2/service/"

// Calls is what one function's code may call.
type Calls struct {
	// Ops are the operations as service/Operation, the service being the SDK package's name
	// (dynamodb/Query, sfn/StartExecution, bedrockruntime/Converse).
	Ops map[string]bool
	// TransactItems are the item operations of DynamoDB transactions built in reachable code:
	// Put, Update, Delete, ConditionCheck (TransactWriteItem), Get (TransactGetItem).
	TransactItems map[string]bool
	// Indexes are the index names (the constants' values) reachable code passes as a value (a
	// Query on the index).
	Indexes map[string]bool
	// Via is, for each of Ops, a shortest chain of calls from main (or init) to a function making
	// it, so a failure can say which code reaches an operation.
	Via map[string][]string
}

// Options name what to analyze.
type Options struct {
	Root      string   // the module root
	Module    string   // the module's path; only its packages' call sites count (the SDK's own do not)
	Functions []string // folders under functions/
	// IndexConsts are the package paths and names of the index name constants, like
	// sinew/internal/store.GSI1.
	IndexConsts []string
}

// Analyze gives each function's Calls. It builds for Lambda's platform (linux/arm64, lambda.norpc),
// so the files compiled are those deployed.
func Analyze(o Options) (map[string]Calls, error) {
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles | packages.NeedImports | packages.NeedDeps |
			packages.NeedTypes | packages.NeedSyntax | packages.NeedTypesInfo | packages.NeedTypesSizes,
		Dir:        o.Root,
		Env:        append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0"),
		BuildFlags: []string{"-tags", "lambda.norpc"},
	}
	var patterns []string
	for _, f := range o.Functions {
		patterns = append(patterns, "./functions/"+f)
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, fmt.Errorf("load %v: %w", patterns, err)
	}
	var errs []string
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			errs = append(errs, e.Error())
		}
	})
	if len(errs) > 0 {
		return nil, fmt.Errorf("load: %s", strings.Join(errs, "; "))
	}
	prog, ssaPkgs := ssautil.AllPackages(pkgs, ssa.InstantiateGenerics)
	prog.Build()
	idx := indexConsts(pkgs, o.IndexConsts)
	infos := map[string]*types.Info{}
	packages.Visit(pkgs, nil, func(p *packages.Package) { infos[p.PkgPath] = p.TypesInfo })
	out := map[string]Calls{}
	for i, p := range ssaPkgs {
		main := p.Func("main")
		if main == nil {
			return nil, fmt.Errorf("%s has no main", pkgs[i].PkgPath)
		}
		c := Calls{Ops: map[string]bool{}, TransactItems: map[string]bool{}, Indexes: map[string]bool{}, Via: map[string][]string{}}
		parent := reachable(main, p.Func("init"))
		for fn := range parent {
			src := fn
			if o := fn.Origin(); o != nil {
				src = o // an instance of a generic function: its source is the generic's
			}
			if src.Pkg == nil || !inModule(src.Pkg.Pkg.Path(), o.Module) {
				continue
			}
			for _, op := range scanSSA(fn) {
				c.Ops[op] = true
				if ch := chain(parent, fn); c.Via[op] == nil || shorter(ch, c.Via[op]) {
					c.Via[op] = ch
				}
			}
			for _, ix := range scanSyntax(src, infos[src.Pkg.Pkg.Path()], idx, &c) {
				if ch := chain(parent, fn); c.Via[IndexVia+ix] == nil || shorter(ch, c.Via[IndexVia+ix]) {
					c.Via[IndexVia+ix] = ch
				}
			}
		}
		out[o.Functions[i]] = c
	}
	return out, nil
}

// reachable is the code reachable from the roots, each with the function that first calls it (nil
// for a root). Rapid type analysis gives a first call graph, which variable type analysis refines
// over the whole program, the SDK's and the standard library's code too: a dynamic call then
// reaches only the functions and types that can flow to it. RTA alone lets (reflect.Value).Call
// and every func-typed call site of a signature reach every function of that signature whose
// address is taken, which in one binary joins each function's code to all the others'. VTA does
// not follow reflection; the Lambda runtime reaches the handler through the lambda.Handler
// interface (lambdaboundary), not reflection. The walk is breadth first, so the callers make
// shortest chains.
func reachable(roots ...*ssa.Function) map[*ssa.Function]*ssa.Function {
	res := rta.Analyze(roots, true)
	funcs := map[*ssa.Function]bool{}
	for fn := range res.Reachable {
		funcs[fn] = true
	}
	cg := vta.CallGraph(funcs, res.CallGraph)
	parent := map[*ssa.Function]*ssa.Function{}
	var queue []*ssa.Function
	for _, r := range roots {
		if _, ok := parent[r]; r != nil && !ok {
			parent[r] = nil
			queue = append(queue, r)
		}
	}
	for len(queue) > 0 {
		fn := queue[0]
		queue = queue[1:]
		n := cg.Nodes[fn]
		if n == nil {
			continue
		}
		for _, e := range n.Out {
			if c := e.Callee.Func; c != nil {
				if _, ok := parent[c]; !ok {
					parent[c] = fn
					queue = append(queue, c)
				}
			}
		}
	}
	return parent
}

// chain is the calls from a root down to fn.
func chain(parent map[*ssa.Function]*ssa.Function, fn *ssa.Function) []string {
	var out []string
	for ; fn != nil; fn = parent[fn] {
		out = append(out, fn.String())
	}
	slices.Reverse(out)
	return out
}

// shorter orders chains by length, then by their names, so Via does not depend on map order.
func shorter(a, b []string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return slices.Compare(a, b) < 0
}

func inModule(path, module string) bool { return path == module || strings.HasPrefix(path, module+"/") }

// scanSSA lists the operations fn calls: a call whose method is named Op and takes *<svc>.OpInput.
func scanSSA(fn *ssa.Function) []string {
	var ops []string
	for _, b := range fn.Blocks {
		for _, ins := range b.Instrs {
			call, ok := ins.(ssa.CallInstruction)
			if !ok {
				continue
			}
			com := call.Common()
			var name string
			var sig *types.Signature
			switch {
			case com.IsInvoke():
				name, sig = com.Method.Name(), com.Method.Type().(*types.Signature)
			case com.StaticCallee() != nil:
				name, sig = com.StaticCallee().Name(), com.StaticCallee().Signature
			default:
				continue
			}
			if op, ok := operation(name, sig); ok {
				ops = append(ops, op)
			}
		}
	}
	return ops
}

// operation reports service/Op when sig takes a *<sdk service>.<name>Input.
func operation(name string, sig *types.Signature) (string, bool) {
	for v := range sig.Params().Variables() {
		ptr, ok := v.Type().(*types.Pointer)
		if !ok {
			continue
		}
		named, ok := ptr.Elem().(*types.Named)
		if !ok || named.Obj().Pkg() == nil {
			continue
		}
		path := named.Obj().Pkg().Path()
		if strings.HasPrefix(path, sdkService) && !strings.Contains(strings.TrimPrefix(path, sdkService), "/") &&
			named.Obj().Name() == name+"Input" {
			return named.Obj().Pkg().Name() + "/" + name, true
		}
	}
	return "", false
}

// IndexVia prefixes an index's name as a key of Calls.Via: the chain to the code naming it.
const IndexVia = "index "

// scanSyntax reads fn's own source (not the closures inside it, which are functions of their own and
// scanned when reachable) for transaction items and the index constants, and returns the indexes
// it names.
func scanSyntax(fn *ssa.Function, info *types.Info, idx map[types.Object]string, c *Calls) (indexes []string) {
	syn := fn.Syntax()
	if syn == nil || info == nil {
		return
	}
	var body ast.Node
	switch s := syn.(type) {
	case *ast.FuncDecl:
		body = s.Body
	case *ast.FuncLit:
		body = s.Body
	}
	if body == nil {
		return
	}
	var stack []ast.Node
	ast.Inspect(body, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return false
		}
		if _, ok := n.(*ast.FuncLit); ok {
			return false
		}
		stack = append(stack, n)
		switch x := n.(type) {
		case *ast.CompositeLit:
			transactFields(info, x, c.TransactItems)
		case *ast.Ident:
			if name, ok := idx[info.Uses[x]]; ok {
				if _, cmp := stack[len(stack)-2].(*ast.BinaryExpr); !cmp {
					c.Indexes[name] = true
					indexes = append(indexes, name)
				}
			}
		}
		return true
	})
	return indexes
}

// transactFields records the item operations a dynamodb types.TransactWriteItem/TransactGetItem
// literal sets.
func transactFields(info *types.Info, lit *ast.CompositeLit, items map[string]bool) {
	t := info.TypeOf(lit)
	named, ok := t.(*types.Named)
	if !ok || named.Obj().Pkg() == nil || named.Obj().Pkg().Path() != sdkService+"dynamodb/types" {
		return
	}
	if n := named.Obj().Name(); n != "TransactWriteItem" && n != "TransactGetItem" {
		return
	}
	for _, e := range lit.Elts {
		if kv, ok := e.(*ast.KeyValueExpr); ok {
			if id, ok := kv.Key.(*ast.Ident); ok {
				items[id.Name] = true
			}
		}
	}
}

// indexConsts finds the string constants path.Name among the loaded packages, with their values.
func indexConsts(pkgs []*packages.Package, qualified []string) map[types.Object]string {
	out := map[types.Object]string{}
	for _, q := range qualified {
		i := strings.LastIndex(q, ".")
		path, name := q[:i], q[i+1:]
		packages.Visit(pkgs, nil, func(p *packages.Package) {
			if p.PkgPath != path || p.Types == nil {
				return
			}
			if c, ok := p.Types.Scope().Lookup(name).(*types.Const); ok && c.Val().Kind() == constant.String {
				out[c] = constant.StringVal(c.Val())
			}
		})
	}
	return out
}

// Sorted lists a set.
func Sorted(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }
