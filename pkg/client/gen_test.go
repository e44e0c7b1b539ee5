package client_test

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/pkg/client"
)

// TestWireTypesUpToDate fails when scripts/gen-openapi.sh would change the
// committed wire.gen.go, that is when api/openapi.yaml changed without it.
// Without the generator it skips, except in CI (CI set), which must install
// it: scripts/gen-openapi.sh --install.
func TestWireTypesUpToDate(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	path := os.Getenv("PATH")
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		path += string(os.PathListSeparator) + filepath.Join(strings.TrimSpace(string(out)), "bin")
	}
	for _, tool := range []string{"bash", "go", "oapi-codegen"} {
		if !onPath(tool, path) {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed; run scripts/gen-openapi.sh --install", tool)
			}
			t.Skipf("%s is not installed (scripts/gen-openapi.sh --install installs the generator)", tool)
		}
	}
	fresh := filepath.Join(t.TempDir(), "wire.gen.go")
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "gen-openapi.sh"), fresh)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen-openapi.sh: %v\n%s", err, b)
	}
	want, err := os.ReadFile(fresh)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("wire.gen.go")
	if err != nil {
		t.Fatalf("pkg/client/wire.gen.go is not committed; run scripts/gen-openapi.sh: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Error("pkg/client/wire.gen.go is stale; run scripts/gen-openapi.sh")
	}
}

// TestNoHandWrittenWireStructs holds that the API's wire types come from
// the spec: no struct in the package's own files carries a JSON field, but
// List, the generic envelope the spec's *List schemas name.
func TestNoHandWrittenWireStructs(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || strings.HasSuffix(name, ".gen.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || ts.Name.Name == "List" {
				return true
			}
			if st, ok := ts.Type.(*ast.StructType); ok && hasJSONField(st) {
				t.Errorf("%s: %s is a hand-written wire struct; describe it in api/openapi.yaml and run scripts/gen-openapi.sh", fset.Position(ts.Pos()), ts.Name.Name)
			}
			return true
		})
	}
}

// TestWireTypesHaveDocs holds that every generated type carries its
// schema's description as its doc comment, never the generator's filler
// "X defines model for X" that a schema without one gets.
func TestWireTypesHaveDocs(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "wire.gen.go", nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	types := 0
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, spec := range gd.Specs {
			ts := spec.(*ast.TypeSpec)
			types++
			doc := ts.Doc
			if doc == nil {
				doc = gd.Doc
			}
			if text := doc.Text(); text == "" || strings.Contains(text, " defines model for ") {
				t.Errorf("%s: %s has no description: give its schema one in api/openapi.yaml and run scripts/gen-openapi.sh (doc: %q)", fset.Position(ts.Pos()), ts.Name.Name, text)
			}
		}
	}
	if types == 0 {
		t.Fatal("wire.gen.go declares no types")
	}
}

// TestErrorStatusCodeIsNotOnTheWire holds that Error's StatusCode, which
// only the generator's overlay adds to the schema, stays out of the body:
// an Error marshals to the served schema's properties and no more.
func TestErrorStatusCodeIsNotOnTheWire(t *testing.T) {
	b, err := json.Marshal(client.Error{StatusCode: 409, Code: "runtime_busy", Message: "busy", RequestID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"code": "runtime_busy", "message": "busy", "request_id": "r1"}
	if !reflect.DeepEqual(body, want) {
		t.Errorf("Error marshals to %s, want only code, message and request_id", b)
	}
}

func hasJSONField(st *ast.StructType) bool {
	for _, f := range st.Fields.List {
		if f.Tag == nil {
			continue
		}
		tag := reflect.StructTag(strings.Trim(f.Tag.Value, "`"))
		if _, ok := tag.Lookup("json"); ok {
			return true
		}
	}
	return false
}

func onPath(name, path string) bool {
	for _, dir := range filepath.SplitList(path) {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return true
		}
	}
	return false
}
