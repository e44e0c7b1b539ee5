// Package testenv lets tests that need real components find them: the
// Docker engine, the sandbox images, a throwaway PostgreSQL, and paddock's
// own binaries. A test that cannot get what it needs skips with the reason
// — unless PADDOCK_REQUIRE_DOCKER (for PostgreSQL, PADDOCK_REQUIRE_POSTGRES)
// is set, as scripts/test.sh and CI do, where it fails instead, so nothing
// skips in CI.
package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestImage is the small image built by scripts/build-images.sh test.
const TestImage = "paddock/test-busybox:latest"

// DefaultImage is the default sandbox image built by
// scripts/build-images.sh default.
const DefaultImage = "paddock/debian:bookworm"

// GVisorRuntime is the name under which scripts/setup-host.sh registers
// gVisor's runsc with the Docker engine.
const GVisorRuntime = "runsc"

// unavailable skips or, when real components are required, fails.
func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	missing(t, "PADDOCK_REQUIRE_DOCKER", format, args...)
}

// missing skips or, when the environment variable require (or CI) is
// set, fails.
func missing(t testing.TB, require, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(require) != "" || os.Getenv("CI") != "" {
		t.Fatalf("required component unavailable: %s", msg)
	}
	t.Skip(msg)
}

// RequireDocker skips (or fails, see the package doc) unless a Docker engine
// answers and every image named is present.
func RequireDocker(t testing.TB, images ...string) {
	t.Helper()
	// A missing engine answers at once; a busy one may take long.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		unavailable(t, "docker engine not reachable: %v: %s", err, strings.TrimSpace(string(out)))
	}
	for _, img := range images {
		if err := exec.CommandContext(ctx, "docker", "image", "inspect", img).Run(); err != nil {
			unavailable(t, "image %s missing: run scripts/build-images.sh", img)
		}
	}
}

// RequireRuntime skips (or fails, see the package doc) unless a Docker
// engine answers and knows the OCI runtime name (dockerd's "runtimes";
// scripts/setup-host.sh registers GVisorRuntime).
func RequireRuntime(t testing.TB, name string) {
	t.Helper()
	RequireDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", "info", "--format", "{{json .Runtimes}}").Output()
	if err != nil {
		unavailable(t, "docker info: %v", err)
	}
	var runtimes map[string]json.RawMessage
	if err := json.Unmarshal(out, &runtimes); err != nil {
		t.Fatalf("docker info's runtimes %q: %v", out, err)
	}
	if _, ok := runtimes[name]; !ok {
		unavailable(t, "the Docker engine has no %q runtime (it has %s): run scripts/setup-host.sh", name, strings.Join(slices.Sorted(maps.Keys(runtimes)), ", "))
	}
}

// RepoRoot returns the repository's root directory.
func RepoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the source tree")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

var (
	buildMu  sync.Mutex
	binCache = map[string]string{}
)

// Binary builds ./cmd/<name> once per test process (static, no cgo) and
// returns the path of the binary.
func Binary(t testing.TB, name string) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if p, ok := binCache[name]; ok {
		return p
	}
	dir, err := os.MkdirTemp("", "paddock-bin-")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "./cmd/"+name)
	cmd.Dir = RepoRoot(t)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", name, err, b)
	}
	binCache[name] = out
	return out
}

// RemoveBinaries deletes what Binary built; call it from TestMain after
// m.Run.
func RemoveBinaries() {
	buildMu.Lock()
	defer buildMu.Unlock()
	for name, p := range binCache {
		_ = os.RemoveAll(filepath.Dir(p))
		delete(binCache, name)
	}
}

// UnixDialer returns a dial function for the unix socket at path, such as
// an agent's.
func UnixDialer(path string) func(context.Context) (net.Conn, error) {
	return func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}
}
