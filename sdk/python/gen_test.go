// Package python holds the Go side of the Python SDK (sdk/python): the
// test that its generated wire types match api/openapi.yaml. The SDK
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

// TestModelsUpToDate fails when scripts/gen-python.sh would change the
// committed paddock/models.py, that is when api/openapi.yaml (or the
// generator) changed without it. Without Debian's python3 and PyYAML it
// skips, except in CI (CI set).
func TestModelsUpToDate(t *testing.T) {
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
	fresh := filepath.Join(t.TempDir(), "models.py")
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "gen-python.sh"), fresh)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen-python.sh: %v\n%s", err, b)
	}
	want, err := os.ReadFile(fresh)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("paddock", "models.py"))
	if err != nil {
		t.Fatalf("sdk/python/paddock/models.py is not committed; run scripts/gen-python.sh: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Error("sdk/python/paddock/models.py is stale; run scripts/gen-python.sh")
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
