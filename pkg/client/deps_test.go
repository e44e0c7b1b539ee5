package client_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsNothingInternal holds the SDK's boundary: it must build on its
// own, without any of paddock's internal packages.
func TestImportsNothingInternal(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	out, err := exec.Command(goBin, "list", "-deps", "-test", "github.com/paddockhq/paddock/pkg/client").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/paddockhq/paddock/") && !strings.HasPrefix(pkg, "github.com/paddockhq/paddock/pkg/") {
			t.Errorf("pkg/client depends on %s", pkg)
		}
	}
}
