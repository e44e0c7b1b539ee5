package capability

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestCatalogLoads(t *testing.T) {
	bundles := Catalog()
	var names []string
	for _, b := range bundles {
		names = append(names, b.Name+"@"+b.Version)
	}
	if want := []string{"memory@1.0.0", "repo-tools@1.0.0"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("catalog %q, want %q", names, want)
	}
	for _, b := range bundles {
		t.Run(b.Name, func(t *testing.T) {
			// The embedded copy is the directory in the source tree.
			onDisk, err := Load(os.DirFS(filepath.Join("catalog", b.Name)))
			if err != nil {
				t.Fatal(err)
			}
			if onDisk.Digest != b.Digest {
				t.Errorf("embedded digest %s, on disk %s", b.Digest, onDisk.Digest)
			}
			again, err := ReadTar(bytes.NewReader(b.Tar()), 0)
			if err != nil || again.Digest != b.Digest {
				t.Errorf("through its own archive: %v, digest %s", err, again.Digest)
			}
			got, ok := FromCatalog(b.Name, "")
			if !ok || got.Digest != b.Digest {
				t.Errorf("FromCatalog(%q, \"\") = %v, %v", b.Name, got, ok)
			}
			if got, ok := FromCatalog(b.Name, b.Version); !ok || got != b {
				t.Errorf("FromCatalog(%q, %q) = %v, %v", b.Name, b.Version, got, ok)
			}
		})
	}
	if b, ok := FromCatalog("repo-tools", "9.9.9"); ok {
		t.Errorf("a missing version was found: %v", b)
	}
	if b, ok := FromCatalog("nope", ""); ok {
		t.Errorf("a missing capability was found: %v", b)
	}
	// Catalog returns a copy of its list.
	Catalog()[0] = nil
	if Catalog()[0] == nil {
		t.Error("Catalog's list can be changed by a caller")
	}
}

func TestCatalogContents(t *testing.T) {
	rt, _ := FromCatalog("repo-tools", "")
	mem, _ := FromCatalog("memory", "")
	r := Resolve([]Binding{{ID: "1", Bundle: rt}, {ID: "2", Bundle: mem}})
	for what, pair := range map[string][2][]string{
		"agents":  {itemNames(r.Agents), {"repo-tools/code-reviewer"}},
		"skills":  {itemNames(r.Skills), {"repo-tools/repo-map", "memory/memory"}},
		"tools":   {itemNames(r.Tools), {"repo-tools/repo-map"}},
		"servers": {serverNames(r.MCPServers), {"memory/memory"}},
	} {
		if !reflect.DeepEqual(pair[0], pair[1]) {
			t.Errorf("%s %q, want %q", what, pair[0], pair[1])
		}
	}
	if len(r.Conflicts) != 0 {
		t.Errorf("conflicts %+v", r.Conflicts)
	}
	s := r.MCPServers[0]
	if s.Command != "python3" || !reflect.DeepEqual(s.Args, []string{"/workspace/.paddock/capabilities/memory/mcp/memory.py"}) ||
		s.Env["PADDOCK_MEMORY_FILE"] != "/workspace/.paddock/memory.json" {
		t.Errorf("memory server %+v", s)
	}
	off := Resolve([]Binding{{ID: "2", Bundle: mem, Flags: map[string]bool{"memory": false}}})
	if len(off.MCPServers) != 0 {
		t.Errorf("the memory flag does not turn the server off: %+v", off.MCPServers)
	}
}

// TestCatalogChecksPass runs every catalog check the way the sandbox does,
// by /bin/sh -c in the bundle's directory with its environment; the host
// has what the default sandbox image has.
func TestCatalogChecksPass(t *testing.T) {
	var bindings []Binding
	for _, b := range Catalog() {
		bindings = append(bindings, Binding{ID: b.Name, Bundle: b})
	}
	r := Resolve(bindings)
	if len(r.Checks) < 2 {
		t.Fatalf("%d checks", len(r.Checks))
	}
	for _, c := range r.Checks {
		cmd := exec.Command("/bin/sh", "-c", c.Run)
		cmd.Dir = filepath.Join("catalog", c.Capability)
		cmd.Env = os.Environ()
		for k, v := range c.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s check %s: %v\n%s", c.Capability, c.Name, err, out)
		}
	}
}

func repoMap(t *testing.T, shell []string, args ...string) string {
	t.Helper()
	tool, err := filepath.Abs("catalog/repo-tools/tools/repo-map")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(shell[0], append(append(shell[1:], tool), args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("repo-map %q: %v\n%s", args, err, out)
	}
	return string(out)
}

// section returns the lines of a "## title" section, trimmed.
func section(out, title string) []string {
	_, rest, ok := strings.Cut(out, "## "+title)
	if !ok {
		return nil
	}
	var lines []string
	for _, l := range strings.Split(rest, "\n")[1:] {
		if l = strings.TrimSpace(l); l == "" {
			break
		}
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	return lines
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, data := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRepoMap(t *testing.T) {
	tree := map[string]string{
		"README.md":              "# demo\n",
		"go.mod":                 "module demo\n",
		"cmd/demo/main.go":       "package main\n",
		"internal/a/a.go":        "package a\n",
		"internal/a/a_test.go":   "package a\n",
		"internal/b/big file.go": strings.Repeat("x", 3000),
		"web/app.ts":             "x",
		"node_modules/dep/i.js":  "ignored",
		"dist/out.js":            "ignored",
	}
	shells := [][]string{{"sh"}}
	if _, err := exec.LookPath("busybox"); err == nil {
		shells = append(shells, []string{"busybox", "sh"})
	}
	for _, shell := range shells {
		t.Run(strings.Join(shell, " ")+" without git", func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, tree)
			out := repoMap(t, shell, "-n", "3", dir)
			if !strings.Contains(out, "files: 7, from find") {
				t.Errorf("header:\n%s", out)
			}
			checkSections(t, out, map[string][]string{
				"Layout":       {"3 internal/", "2 ./ (top-level files)", "2 internal/a/", "1 cmd/", "1 cmd/demo/", "1 internal/b/"},
				"Languages":    {"4 go Go", "1 md Markdown", "1 mod"},
				"Largest":      {"2.9K internal/b/big file.go", "13B cmd/demo/main.go", "12B go.mod"},
				"Tests":        {"1 test files in 1 directories; e.g.", "internal/a/a_test.go"},
				"Key files":    {"README.md", "cmd/demo/main.go", "go.mod"},
				"Recent commi": nil,
			})
		})
	}

	t.Run("in a git work tree", func(t *testing.T) {
		if _, err := exec.LookPath("git"); err != nil {
			t.Skip("git is not installed; the sandbox image has it, and so does CI")
		}
		dir := t.TempDir()
		writeTree(t, dir, tree)
		writeTree(t, dir, map[string]string{".gitignore": "node_modules/\ndist/\n"})
		git := func(args ...string) {
			t.Helper()
			cmd := exec.Command("git", append([]string{"-c", "user.name=Ada", "-c", "user.email=ada@example.com", "-c", "commit.gpgsign=false"}, args...)...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %q: %v\n%s", args, err, out)
			}
		}
		git("init", "-q", "-b", "main")
		git("add", ".")
		git("commit", "-q", "-m", "first commit")
		writeTree(t, dir, map[string]string{"internal/a/a.go": "package a // changed\n", "new.txt": "untracked"})
		git("commit", "-q", "-am", "change a")

		out := repoMap(t, []string{"sh"}, dir)
		for _, want := range []string{"files: 9, from git ls-files", "git: branch main, HEAD ", "change a", "uncommitted changes: 1 paths"} {
			if !strings.Contains(out, want) {
				t.Errorf("no %q in:\n%s", want, out)
			}
		}
		commits := section(out, "Recent commits")
		if len(commits) != 2 || !strings.HasSuffix(commits[0], "change a") || !strings.HasSuffix(commits[1], "first commit") {
			t.Errorf("recent commits %q", commits)
		}
		if changed := section(out, "Most changed files"); len(changed) == 0 || changed[0] != "2 internal/a/a.go" {
			t.Errorf("most changed %q", changed)
		}
		if authors := section(out, "Most active authors"); !reflect.DeepEqual(authors, []string{"2 Ada"}) {
			t.Errorf("authors %q", authors)
		}
	})

	t.Run("bad usage", func(t *testing.T) {
		cmd := exec.Command("sh", "catalog/repo-tools/tools/repo-map", "-n", "x")
		out, err := cmd.CombinedOutput()
		if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 2 || !strings.Contains(string(out), "-n wants a positive number") {
			t.Errorf("repo-map -n x: %v\n%s", err, out)
		}
	})
}

func checkSections(t *testing.T, out string, want map[string][]string) {
	t.Helper()
	for title, lines := range want {
		got := section(out, title)
		if lines == nil {
			if got != nil {
				t.Errorf("section %q should be absent:\n%s", title, out)
			}
			continue
		}
		if !slices.Equal(got, lines) {
			t.Errorf("section %q:\n got %q\nwant %q\n%s", title, got, lines, out)
		}
	}
}
