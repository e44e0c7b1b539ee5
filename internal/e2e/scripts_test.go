package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestScripts: every script parses; running paddock (scripts/up.sh and
// what it calls) installs no code generators; setup-host.sh says each
// thing once.
func TestScripts(t *testing.T) {
	scripts, err := filepath.Glob("../../scripts/*.sh")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	scripts = append(scripts, "../../.ci/run")
	for _, s := range scripts {
		if out, err := exec.Command("bash", "-n", s).CombinedOutput(); err != nil {
			t.Errorf("%s does not parse: %v\n%s", s, err, out)
		}
	}
	read := func(name string) string {
		b, err := os.ReadFile("../../scripts/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, name := range []string{"up.sh", "setup-host.sh", "build-images.sh", "build.sh"} {
		if s := read(name); strings.Contains(s, "gen-proto") || strings.Contains(s, "protoc") {
			t.Errorf("scripts/%s (run by up.sh) installs or runs the protobuf generators; only code generation and its check need them", name)
		}
	}
	if !strings.Contains(read("test.sh"), "gen-proto.sh --tools") {
		t.Error("scripts/test.sh does not install the generators the generated-code check needs")
	}
	if n := strings.Count(read("setup-host.sh"), "Go 1.26 or newer is needed"); n != 1 {
		t.Errorf("setup-host.sh checks for Go %d times", n)
	}
}
