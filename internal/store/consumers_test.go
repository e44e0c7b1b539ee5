package store_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// wholeStoreAllowed are the directories (from the module root, with what
// is below them) whose code may name the whole store.Store or
// store.Queries: the contract and its dialects, the server that wires the
// components and hands each its slice, and the commands.
var wholeStoreAllowed = []string{"internal/store", "internal/server", "cmd"}

// TestConsumersNameNoWholeStore holds the store's split: outside
// wholeStoreAllowed, no code names store.Store or store.Queries as the type
// of a field, a parameter or a variable. A consumer declares, next to
// itself, an interface of the methods it calls (or names the domain's
// interface, such as store.CreditQueries). The one place Queries may
// appear is the parameter of a function literal handed to InTx, whose
// signature is the store's. Tests may use the whole store.
func TestConsumersNameNoWholeStore(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata" || wholeStoreMayBeNamed(rel)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		for _, use := range wholeStoreUses(t, path, nil) {
			t.Errorf("%s names %s: declare an interface of the methods it calls next to it", use.pos, use.name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func wholeStoreMayBeNamed(rel string) bool {
	for _, dir := range wholeStoreAllowed {
		if rel == dir || strings.HasPrefix(rel, dir+"/") {
			return true
		}
	}
	return false
}

// wholeStoreUse is one place a file names store.Store or store.Queries.
type wholeStoreUse struct {
	pos  token.Position
	name string
}

// wholeStoreUses parses the Go file at path (its text is src, or read from
// path when src is nil) and returns where it names store.Store or
// store.Queries other than as an InTx callback's parameter.
func wholeStoreUses(t *testing.T, path string, src any) []wholeStoreUse {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	pkg := storeImportName(f)
	if pkg == "" {
		return nil
	}
	callback := inTxCallbackParams(f)
	var uses []wholeStoreUse
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok || (sel.Sel.Name != "Store" && sel.Sel.Name != "Queries") || callback[sel] {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && x.Name == pkg {
			uses = append(uses, wholeStoreUse{pos: fset.Position(sel.Pos()), name: pkg + "." + sel.Sel.Name})
		}
		return true
	})
	return uses
}

// storeImportName is the name f imports the store package by; "" when it
// does not.
func storeImportName(f *ast.File) string {
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p != "github.com/paddockhq/paddock/internal/store" {
			continue
		}
		if imp.Name != nil {
			return imp.Name.Name
		}
		return "store"
	}
	return ""
}

// inTxCallbackParams are the parameter types of the function literals f
// passes to a method named InTx.
func inTxCallbackParams(f *ast.File) map[ast.Expr]bool {
	params := map[ast.Expr]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "InTx" {
			return true
		}
		for _, arg := range call.Args {
			if lit, ok := arg.(*ast.FuncLit); ok {
				for _, field := range lit.Type.Params.List {
					params[field.Type] = true
				}
			}
		}
		return true
	})
	return params
}

// TestWholeStoreUses: the scan finds the whole store named as a field, a
// parameter, a variable, an embedded interface and under another import
// name, and passes an InTx callback's parameter and the domain interfaces.
func TestWholeStoreUses(t *testing.T) {
	t.Parallel()
	const (
		imp     = `import "github.com/paddockhq/paddock/internal/store"`
		renamed = `import db "github.com/paddockhq/paddock/internal/store"`
	)
	for _, tc := range []struct {
		name string
		src  string
		want []string
	}{
		{"field", imp + `; type S struct{ st store.Store }`, []string{"store.Store"}},
		{"parameter", imp + `; func f(q store.Queries) {}`, []string{"store.Queries"}},
		{"variable", imp + `; var v store.Store`, []string{"store.Store"}},
		{"embedded", imp + `; type I interface{ store.Queries }`, []string{"store.Queries"}},
		{"renamed import", renamed + `; type S struct{ st db.Store }`, []string{"db.Store"}},
		{"callback of another func", imp + `; func f(g func(q store.Queries) error) {}`, []string{"store.Queries"}},
		{"InTx callback", imp + `; func f(s store.Transactor) { s.InTx(nil, func(q store.Queries) error { return nil }) }`, nil},
		{"domain interface", imp + `; type S struct{ c store.CreditQueries; t store.Transactor }`, nil},
		{"no store import", `type Store interface{}; var v Store`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, use := range wholeStoreUses(t, "x.go", "package x; "+tc.src) {
				got = append(got, use.name)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
