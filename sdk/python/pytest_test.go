package python

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestPythonUnitTests runs the SDK's tests that need no server with
// Debian's pytest: every generated model's round trip, and how exec
// streams are read. (internal/e2e/sdks runs the whole suite against a live
// server.) Without pytest it skips, except in CI.
func TestPythonUnitTests(t *testing.T) {
	if out, err := exec.Command(debianPython, "-c", "import httpx, pytest, yaml").CombinedOutput(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s with httpx, pytest and PyYAML is needed: %v\n%s", debianPython, err, out)
		}
		t.Skipf("%s lacks httpx, pytest or PyYAML: %v", debianPython, err)
	}
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(debianPython, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_models.py", "tests/test_streams.py")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir, "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pytest: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
