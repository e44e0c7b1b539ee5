// Package python holds the Go side of the Python SDK (sdk/python): the
// test that what it generates (its wire types from api/openapi.yaml, its
// clients' type stubs) is up to date. The SDK
// itself is Python; its tests against a live server are in
// internal/e2e/sdks.
package python

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// debianPython is the interpreter scripts/gen-python.sh runs: Debian's,
// which has PyYAML (as testenv.DebianPython; this package imports nothing
// of internal/).
const debianPython = "/usr/bin/python3"

// generated are the files scripts/gen-python.sh writes, under
// sdk/python/paddock.
var generated = []string{"models.py", "client.pyi", "aio.pyi"}

// TestGeneratedUpToDate fails when scripts/gen-python.sh would change the
// committed paddock/models.py or the clients' stubs, that is when
// api/openapi.yaml, paddock/_operations.py or a generator changed without
// them. Without Debian's python3 and PyYAML it skips, except in CI (CI
// set).
func TestGeneratedUpToDate(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(debianPython, "-c", "import yaml").CombinedOutput(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s with PyYAML is needed (apt-get install python3-yaml): %v\n%s", debianPython, err, out)
		}
		t.Skipf("%s with PyYAML is not installed: %v", debianPython, err)
	}
	fresh := t.TempDir()
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "gen-python.sh"), fresh)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen-python.sh: %v\n%s", err, b)
	}
	for _, name := range generated {
		want, err := os.ReadFile(filepath.Join(fresh, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("paddock", name))
		if err != nil {
			t.Fatalf("sdk/python/paddock/%s is not committed; run scripts/gen-python.sh: %v", name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("sdk/python/paddock/%s is stale; run scripts/gen-python.sh", name)
		}
	}
}

// TestModelsCoverEverySchema holds that the generator leaves no schema of
// the spec out: each components.schemas name is a class or an alias of
// paddock.models, imported by Python.
func TestModelsCoverEverySchema(t *testing.T) {
	if _, err := exec.Command(debianPython, "-c", "import yaml").CombinedOutput(); err != nil {
		t.Skipf("%s with PyYAML is not installed: %v", debianPython, err)
	}
	script := `
import sys, yaml
sys.path.insert(0, ".")
import paddock.models as m
spec = yaml.safe_load(open("../../api/openapi.yaml"))
missing = [n for n in spec["components"]["schemas"] if not hasattr(m, n)]
if missing:
    sys.exit("missing: " + ", ".join(missing))
`
	if out, err := exec.Command(debianPython, "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("paddock.models: %v\n%s", err, out)
	}
}
