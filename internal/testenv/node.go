package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// NodeBin returns the directory of a Node.js 20.19 or later and its npm,
// to put first on a command's PATH: the one on PATH, else the one
// scripts/node.sh pins, unpacked by scripts/build-console.sh or
// scripts/js-deps.sh into web/.node. Without either the test skips, or
// fails in CI.
func NodeBin(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("node"); err == nil && nodeNewEnough(p) {
		return filepath.Dir(p)
	}
	root := RepoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "scripts", "node.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^NODE_VERSION=(\S+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("scripts/node.sh pins no NODE_VERSION")
	}
	dir := filepath.Join(root, "web", ".node", string(m[1]), "bin")
	if nodeNewEnough(filepath.Join(dir, "node")) {
		return dir
	}
	missing(t, "PADDOCK_REQUIRE_DOCKER", "Node.js 20.19 or later is not here (run scripts/js-deps.sh)")
	return ""
}

// nodeNewEnough reports whether the node at path is 20.19 or later.
func nodeNewEnough(path string) bool {
	out, err := exec.Command(path, "--version").Output()
	if err != nil {
		return false
	}
	parts := strings.Split(strings.TrimPrefix(strings.TrimSpace(string(out)), "v"), ".")
	if len(parts) < 2 {
		return false
	}
	major, _ := strconv.Atoi(parts[0])
	minor, _ := strconv.Atoi(parts[1])
	return major > 20 || major == 20 && minor >= 19
}

// DebianPython is Debian's python3, which has the Python packages the
// tests use from Debian (httpx, pytest, PyYAML; scripts/setup-host.sh
// installs them): not another python3 earlier on PATH.
const DebianPython = "/usr/bin/python3"
