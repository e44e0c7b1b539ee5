package runtime

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// killCalls are the functions that write a kill reason, and where in their
// arguments it goes.
var killCalls = map[string]int{"release": 2, "killRow": 3, "KillSandbox": 3}

// codeKillReasons reads this package's source: the values of its Kill*
// constants. A kill reason written as a literal, not a constant, fails t.
func codeKillReasons(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				for i, id := range n.Names {
					if i >= len(n.Values) {
						break
					}
					if lit, ok := n.Values[i].(*ast.BasicLit); ok && strings.HasPrefix(id.Name, "Kill") && lit.Kind == token.STRING {
						v, _ := strconv.Unquote(lit.Value)
						reasons = append(reasons, v)
					}
				}
			case *ast.CallExpr:
				var fn string
				switch f := n.Fun.(type) {
				case *ast.Ident:
					fn = f.Name
				case *ast.SelectorExpr:
					fn = f.Sel.Name
				}
				if i, ok := killCalls[fn]; ok && i < len(n.Args) {
					if lit, ok := n.Args[i].(*ast.BasicLit); ok {
						t.Errorf("%s: %s writes the kill reason %s as a literal; name a Kill constant", fset.Position(lit.Pos()), fn, lit.Value)
					}
				}
			}
			return true
		})
	}
	if len(reasons) == 0 {
		t.Fatal("no Kill* constants found in the package's source")
	}
	return reasons
}

// TestKillReasonsDocumented holds api/openapi.yaml's Sandbox.kill_reason
// enum and docs/ARCHITECTURE.md's list of kill reasons to the reasons the
// code writes.
func TestKillReasonsDocumented(t *testing.T) {
	consts := codeKillReasons(t)
	slices.Sort(consts)
	code := slices.Sorted(slices.Values(KillReasons))
	if !slices.Equal(consts, code) {
		t.Errorf("KillReasons is %v; the Kill constants are %v", code, consts)
	}

	raw, err := os.ReadFile("../../api/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Enum []string `yaml:"enum"`
				} `yaml:"properties"`
			} `yaml:"schemas"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(raw, &spec); err != nil {
		t.Fatal(err)
	}
	openapi := slices.Sorted(slices.Values(spec.Components.Schemas["Sandbox"].Properties["kill_reason"].Enum))
	if !slices.Equal(openapi, code) {
		t.Errorf("api/openapi.yaml's Sandbox.kill_reason enum is %v; the code writes %v", openapi, code)
	}

	doc, err := os.ReadFile("../../docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)killed` with a `kill_reason`\\s*\\(([^)]*)\\)").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/ARCHITECTURE.md no longer says \"killed` with a `kill_reason` (…)\"")
	}
	var arch []string
	for _, w := range regexp.MustCompile("`([a-z_]+)`").FindAllSubmatch(m[1], -1) {
		arch = append(arch, string(w[1]))
	}
	slices.Sort(arch)
	if !slices.Equal(arch, code) {
		t.Errorf("docs/ARCHITECTURE.md lists the kill reasons %v; the code writes %v", arch, code)
	}
}
