package session_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDomainImportsNoSDK holds the line between the domain and the wire:
// the packages that keep sessions, bindings, harness events and the store
// build without the SDK, so that no row they write can hold an SDK type
// and renaming an SDK field never changes what is stored. The API
// converts at its boundary.
func TestDomainImportsNoSDK(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	const mod = "github.com/paddockhq/paddock/"
	domain := []string{mod + "internal/store/...", mod + "internal/binding", mod + "internal/session", mod + "internal/harness", mod + "internal/capability"}
	out, err := exec.Command(goBin, append([]string{"list", "-deps"}, domain...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) == 0 || !strings.Contains(string(out), mod+"internal/store/sqlite") {
		t.Fatalf("go list listed %q, not the domain's packages", pkgs)
	}
	for _, pkg := range pkgs {
		if strings.HasPrefix(pkg, mod+"pkg/") {
			t.Errorf("the domain depends on %s", pkg)
		}
	}
}
