package sdks

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// readmeSDKBlocks are the code blocks of README.md's "SDKs" section, by
// their language (go, ts, python).
func readmeSDKBlocks(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n## SDKs\n")
	if !ok {
		t.Fatal(`README.md has no "SDKs" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	blocks := map[string]string{}
	for _, part := range strings.Split(section, "\n```")[1:] {
		lang, body, ok := strings.Cut(part, "\n")
		if ok && lang != "" && blocks[lang] == "" {
			blocks[lang] = body
		}
	}
	for _, lang := range []string{"go", "ts", "python"} {
		if blocks[lang] == "" {
			t.Fatalf("README.md's SDKs section has no %s example", lang)
		}
	}
	return blocks
}

// forServer makes a README example talk to s: its URL and key, and a
// project name of its own.
func forServer(block string, s *testenv.Served, project string) string {
	return strings.NewReplacer(`"http://127.0.0.1:8080"`, `"`+s.URL+`"`, `"pdk_…"`, `"`+s.Key+`"`, `"demo"`, `"`+project+`"`).Replace(block)
}

// prepareReadmeOrg makes the org and workspace the README's examples
// name.
func prepareReadmeOrg(t *testing.T, s *testenv.Served) {
	t.Helper()
	c, err := pc.New(s.URL, s.Key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateOrg(t.Context(), pc.CreateOrgRequest{Name: "acme"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateWorkspace(t.Context(), "acme", pc.CreateWorkspaceRequest{Name: "dev"}); err != nil {
		t.Fatal(err)
	}
}

// testReadmeGo runs the README's Go example, in a main of its own laid
// over the module (go run -overlay), and checks what it printed.
func testReadmeGo(t *testing.T, s *testenv.Served, block string) {
	root := testenv.RepoRoot(t)
	src := "package main\n\nimport (\n\t\"context\"\n\t\"fmt\"\n\n\t\"github.com/paddockhq/paddock/pkg/client\"\n)\n\n" +
		"func main() {\n\tctx := context.Background()\n" + forServer(block, s, "demo-go") + "}\n"
	tmp := t.TempDir()
	mainGo := filepath.Join(tmp, "main.go")
	if err := os.WriteFile(mainGo, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(root, "internal", "e2e", "sdks", "readmeexample")
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(pkg, "main.go"): mainGo}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "overlay.json"), overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "go", "run", "-overlay", filepath.Join(tmp, "overlay.json"), "./internal/e2e/sdks/readmeexample")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the README's Go example: %v\n%s\n%s", err, out, stderrOf(err))
	}
	if string(out) != "hello\n" {
		t.Errorf("the README's Go example printed %q, want %q", out, "hello\n")
	}
	deleteProject(t, s, "acme", "dev", "demo-go")
}

// testReadmeTS type-checks the README's TypeScript example against the
// built package (tsc, strict) and runs it (it is JavaScript too), and
// checks what it printed.
func testReadmeTS(t *testing.T, s *testenv.Served, dir, node string, env []string, block string) {
	tmp := t.TempDir()
	if err := os.MkdirAll(filepath.Join(tmp, "node_modules", "@paddockhq"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(tmp, "node_modules", "@paddockhq", "sdk")); err != nil {
		t.Fatal(err)
	}
	src := "import { Paddock } from \"@paddockhq/sdk\";\n" + forServer(block, s, "demo-ts")
	for _, name := range []string{"example.mts", "example.mjs"} {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tsc := exec.CommandContext(t.Context(), filepath.Join(node, "node"), filepath.Join(dir, "node_modules", "typescript", "bin", "tsc"),
		"--noEmit", "--strict", "--module", "nodenext", "--target", "es2022", "--lib", "es2022,dom", "example.mts")
	tsc.Dir, tsc.Env = tmp, env
	if out, err := tsc.CombinedOutput(); err != nil {
		t.Fatalf("the README's TypeScript example does not type-check: %v\n%s", err, out)
	}
	run := exec.CommandContext(t.Context(), filepath.Join(node, "node"), "example.mjs")
	run.Dir, run.Env = tmp, env
	out, err := run.Output()
	if err != nil {
		t.Fatalf("the README's TypeScript example: %v\n%s\n%s", err, out, stderrOf(err))
	}
	if strings.TrimSpace(string(out)) != "hello" {
		t.Errorf("the README's TypeScript example printed %q, want hello", out)
	}
	deleteProject(t, s, "acme", "dev", "demo-ts")
}

// testReadmePython runs the README's Python example with Debian's
// python3 (which has httpx) and the package in sdk/python, and checks
// what it printed.
func testReadmePython(t *testing.T, s *testenv.Served, block string) {
	src := "from paddock import Paddock\n" + forServer(block, s, "demo-py")
	cmd := exec.CommandContext(t.Context(), testenv.DebianPython, "-c", src)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(testenv.RepoRoot(t), "sdk", "python"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the README's Python example: %v\n%s\n%s", err, out, stderrOf(err))
	}
	if strings.TrimSpace(string(out)) != "hello" {
		t.Errorf("the README's Python example printed %q, want hello", out)
	}
	deleteProject(t, s, "acme", "dev", "demo-py")
}

// deleteProject deletes a project and with it its runtime's sandbox, so
// that the next one runs alone.
func deleteProject(t *testing.T, s *testenv.Served, org, ws, project string) {
	t.Helper()
	c, err := pc.New(s.URL, s.Key)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteProject(t.Context(), org, ws, project); err != nil {
		t.Errorf("delete %s/%s/%s: %v", org, ws, project, err)
	}
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
