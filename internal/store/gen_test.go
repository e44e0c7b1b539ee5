package store_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestQueriesUpToDate fails when scripts/gen-sql.sh would change a
// dialect's committed generated package (postgres/pgdb, sqlite/litedb),
// that is when a query or a migration changed without it. Without sqlc it skips, except in CI (CI set), which must
// install it: scripts/gen-sql.sh --install.
func TestQueriesUpToDate(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	path := os.Getenv("PATH")
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		path += string(os.PathListSeparator) + filepath.Join(strings.TrimSpace(string(out)), "bin")
	}
	if _, err := exec.LookPath("bash"); err != nil || !onPath("sqlc", path) {
		if os.Getenv("CI") != "" {
			t.Fatal("sqlc is not installed; run scripts/gen-sql.sh --install")
		}
		t.Skip("sqlc is not installed (scripts/gen-sql.sh --install installs it)")
	}
	fresh := t.TempDir()
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "gen-sql.sh"), fresh)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PATH="+path)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen-sql.sh: %v\n%s", err, b)
	}
	for dialect, pkg := range map[string]string{"postgres": "pgdb", "sqlite": "litedb"} {
		want, got := files(t, filepath.Join(fresh, dialect)), files(t, filepath.Join(dialect, pkg))
		if !slices.Equal(names(want), names(got)) {
			t.Errorf("%s/%s has %v, sqlc makes %v; run scripts/gen-sql.sh", dialect, pkg, names(got), names(want))
			continue
		}
		for name, b := range want {
			if !bytes.Equal(got[name], b) {
				t.Errorf("%s/%s/%s is stale; run scripts/gen-sql.sh", dialect, pkg, name)
			}
		}
	}
}

func files(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, p := range m {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = b
	}
	return out
}

func names(m map[string][]byte) []string {
	var ns []string
	for n := range m {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return ns
}

func onPath(tool, path string) bool {
	for _, dir := range filepath.SplitList(path) {
		if fi, err := os.Stat(filepath.Join(dir, tool)); err == nil && !fi.IsDir() {
			return true
		}
	}
	return false
}
