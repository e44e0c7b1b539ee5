package mcp_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestReachesTheServerOnlyThroughTheSDK holds the package's boundary: its
// tools call the API through pkg/client alone, so it imports nothing of
// paddock's server (the CLI, which imports it, is held to that too).
func TestReachesTheServerOnlyThroughTheSDK(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	out, err := exec.Command(goBin, "list", "-deps", "github.com/paddockhq/paddock/internal/mcp").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/paddockhq/paddock/") && pkg != "github.com/paddockhq/paddock/internal/mcp" &&
			!strings.HasPrefix(pkg, "github.com/paddockhq/paddock/pkg/") {
			t.Errorf("internal/mcp depends on %s", pkg)
		}
	}
}
