package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/testenv"
)

// TestShimImageTarget: scripts/build-images.sh shim makes
// paddock/shim:VERSION from a tar with nothing but the static agent at
// /paddock-shim, which runs alone in it (no libc, no shell); a second run
// finds it current.
func TestShimImageTarget(t *testing.T) {
	testenv.RequireDocker(t)
	if os.Geteuid() != 0 {
		t.Skip("scripts/build-images.sh runs as root")
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	version := "e2e-" + hex.EncodeToString(b)
	img := "paddock/shim:" + version
	t.Cleanup(func() { _ = exec.Command("docker", "image", "rm", "-f", img).Run() })
	build := func() string {
		t.Helper()
		cmd := exec.Command(filepath.Join(testenv.RepoRoot(t), "scripts", "build-images.sh"), "shim")
		cmd.Env = append(os.Environ(), "PADDOCK_VERSION="+version, "PATH="+os.Getenv("PATH")+":/usr/local/go/bin")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("build-images.sh shim: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := build(); !strings.Contains(out, "built "+img) {
		t.Fatalf("the first run did not build %s:\n%s", img, out)
	}
	inspect, err := exec.Command("docker", "image", "inspect", "-f",
		`{{json .Config.Entrypoint}} {{index .Config.Labels "dev.paddock.image"}} {{len .RootFS.Layers}}`, img).CombinedOutput()
	if err != nil || strings.TrimSpace(string(inspect)) != `["/paddock-shim"] shim 1` {
		t.Fatalf("%s: %s (%v), want the entrypoint /paddock-shim, label shim, one layer", img, inspect, err)
	}
	// The image holds one file: the agent, read-only and executable.
	c, err := exec.Command("docker", "create", img).Output()
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(string(c))
	t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", id).Run() })
	list, err := exec.Command("sh", "-c", "docker export "+id+" | tar -tv").Output()
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, line := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		f := strings.Fields(line)
		if name := f[len(f)-1]; f[0][0] == '-' && f[2] != "0" && name != ".dockerenv" {
			files = append(files, f[0]+" "+name)
		}
	}
	if strings.Join(files, ",") != "-r-xr-xr-x paddock-shim" {
		t.Fatalf("files with content in %s: %q, want only paddock-shim, mode 0555", img, files)
	}
	out, err := exec.Command("docker", "run", "--rm", "--network", "none", img, "version").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != version {
		t.Fatalf("the agent in %s says %q (%v), want its version %s", img, out, err, version)
	}
	if out := build(); !strings.Contains(out, img+" is current") {
		t.Fatalf("the second run rebuilt %s:\n%s", img, out)
	}
}
