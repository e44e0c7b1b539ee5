package cli_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/pkg/client"
)

// writeTree makes files (name → contents; a name ending in * is made
// executable without it) under a new directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		mode := os.FileMode(0o600)
		if n, ok := strings.CutSuffix(name, "*"); ok {
			name, mode = n, 0o700
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestInventoryPush: the bundle is a tar.gz of the directory's contents
// that depends on nothing else, so pushing it again is recognized.
func TestInventoryPush(t *testing.T) {
	t.Parallel()
	f, env := startCapabilities(t)
	dir := writeTree(t, map[string]string{
		"capability.yaml":        manifest("reviewer", "1.0.0"),
		"skills/review/SKILL.md": "# Review\n",
		"scripts/setup.sh*":      "#!/bin/sh\n",
		".git/config":            "[core]\n",
		"z/.git/HEAD":            "ref\n",
	})

	out := clitest.MustRun(t, env, "inventory", "push", dir)
	first, ct := f.bundles()[0], f.rec.sent(pushRoute)[0].contentType
	v := get[client.List[client.CapabilityVersion]](t, f, "/api/v1/org/acme/capabilities?name=reviewer").Items[0]
	if out != "reviewer@1.0.0 "+v.Digest+"\n" || ct != "application/gzip" {
		t.Fatalf("push: %q, Content-Type %q", out, ct)
	}
	entries, err := bundleEntries(first)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(entries))
	for n, e := range entries {
		names[e.order] = n
	}
	want := []string{"capability.yaml", "scripts/", "scripts/setup.sh", "skills/", "skills/review/", "skills/review/SKILL.md", "z/"}
	if !slices.Equal(names, want) {
		t.Fatalf("entries %q, want %q", names, want)
	}
	for name, mode := range map[string]int64{"capability.yaml": 0o644, "scripts/": 0o755, "scripts/setup.sh": 0o755} {
		e := entries[name]
		if e.mode != mode || e.uid != 0 || !e.modTime.Equal(time.Unix(0, 0)) {
			t.Errorf("%s: mode %o uid %d time %v", name, e.mode, e.uid, e.modTime)
		}
	}
	if entries["scripts/setup.sh"].typ != tar.TypeReg || entries["skills/"].typ != tar.TypeDir {
		t.Errorf("types: %+v", entries)
	}

	// Touched, and its modes changed but for the executable bit: the
	// same bytes, the same version.
	later := time.Now().Add(time.Hour)
	for _, p := range []string{"capability.yaml", "scripts/setup.sh", "skills"} {
		if err := os.Chtimes(filepath.Join(dir, p), later, later); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "capability.yaml"), 0o640); err != nil {
		t.Fatal(err)
	}
	if out := clitest.MustRun(t, env, "inventory", "push", dir); out != "reviewer@1.0.0 "+v.Digest+"\n" {
		t.Fatalf("second push: %q", out)
	}
	second := f.bundles()[1]
	if !bytes.Equal(first, second) {
		t.Fatal("the same contents made another bundle")
	}

	// Other contents under the same version, and bundles the server
	// refuses.
	if err := os.WriteFile(filepath.Join(dir, "skills/review/SKILL.md"), []byte("# Review twice\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := clitest.Run(t, env, "inventory", "push", dir); code != cli.ExitError || !strings.HasSuffix(errOut, "(capability_version_exists)\n") {
		t.Fatalf("changed contents: exit %d %q", code, errOut)
	}
	if _, errOut, code := clitest.Run(t, env, "inventory", "push", t.TempDir()); code != cli.ExitError || errOut != "error: invalid capability: capability.yaml: not found at the root of the bundle (invalid_capability)\n" {
		t.Fatalf("no manifest: exit %d %q", code, errOut)
	}
	if _, errOut, code := clitest.Run(t, env, "inventory", "push", filepath.Join(dir, "capability.yaml")); code != cli.ExitUsage || !strings.Contains(errOut, "is not a directory") {
		t.Fatalf("a file: exit %d %q", code, errOut)
	}
	if _, errOut, code := clitest.Run(t, env, "inventory", "push", filepath.Join(dir, "nope")); code != cli.ExitError || !strings.Contains(errOut, "no such file or directory") {
		t.Fatalf("a missing directory: exit %d %q", code, errOut)
	}
}

// TestInventoryPushTooLarge: a bundle past the server's bound is refused
// before it is sent.
func TestInventoryPushTooLarge(t *testing.T) {
	t.Parallel()
	f, env := startCapabilities(t)
	dir := writeTree(t, map[string]string{"capability.yaml": manifest("big", "1.0.0")})
	big, err := os.Create(filepath.Join(dir, "blob"))
	if err != nil {
		t.Fatal(err)
	}
	noise := make([]byte, client.MaxCapabilityBundle+1<<20)
	_, _ = rand.NewChaCha8([32]byte{}).Read(noise) // does not compress
	if _, err := big.Write(noise); err != nil {
		t.Fatal(err)
	}
	big.Close()
	_, errOut, code := clitest.Run(t, env, "inventory", "push", dir)
	if code != cli.ExitError || !strings.Contains(errOut, "larger than 16 MiB compressed") {
		t.Fatalf("exit %d %q", code, errOut)
	}
	if len(f.bundles()) != 0 {
		t.Fatal("the bundle was sent")
	}
}

func TestInventoryListAndRemove(t *testing.T) {
	t.Parallel()
	f, env := startCapabilities(t)
	for _, version := range []string{"1.0.0", "1.1.0"} {
		dir := writeTree(t, map[string]string{"capability.yaml": manifest("reviewer", version)})
		clitest.MustRun(t, env, "inventory", "push", dir)
	}
	clitest.MustRun(t, env, "inventory", "push", writeTree(t, map[string]string{"capability.yaml": manifest("tester", "0.1.0")}))

	rows := table(clitest.MustRun(t, env, "inventory", "ls"))
	if len(rows) != 4 || strings.Join(rows[0], " ") != "NAME VERSION DIGEST SIZE CREATED SHIPS" || rows[1][0] != "reviewer" || !strings.HasPrefix(rows[1][2], "sha256:") || len(rows[1][2]) != 19 {
		t.Fatalf("ls:\n%v", rows)
	}
	l := clitest.JSON[client.List[client.CapabilityVersion]](t, env, "inventory", "ls", "reviewer")
	if len(l.Items) != 2 || f.query("GET /api/v1/org/{org}/capabilities") != "name=reviewer" {
		t.Fatalf("ls reviewer: %+v", l)
	}

	// A pinned version stays until its binding goes.
	clitest.MustRun(t, env, "capability", "install", "agent", "reviewer@1.0.0")
	if _, errOut, code := clitest.Run(t, env, "inventory", "rm", "reviewer@1.0.0"); code != cli.ExitError || !strings.HasSuffix(errOut, "(capability_in_use)\n") {
		t.Fatalf("rm a pinned version: exit %d %q", code, errOut)
	}
	clitest.MustRun(t, env, "capability", "rm", "agent", "reviewer")
	if out := clitest.MustRun(t, env, "inventory", "rm", "reviewer@1.0.0"); out != "deleted capability reviewer@1.0.0\n" {
		t.Fatalf("rm: %q", out)
	}
	if _, errOut, code := clitest.Run(t, env, "inventory", "rm", "reviewer@1.0.0"); code != cli.ExitError || !strings.HasSuffix(errOut, "(capability_not_found)\n") {
		t.Fatalf("rm again: exit %d %q", code, errOut)
	}
	if _, errOut, code := clitest.Run(t, env, "inventory", "rm", "reviewer"); code != cli.ExitUsage || !strings.Contains(errOut, `"reviewer": want NAME@VERSION`) {
		t.Fatalf("rm without a version: exit %d %q", code, errOut)
	}
}

// pushRoute is where inventory push sends a bundle.
const pushRoute = "POST /api/v1/org/{org}/capabilities"

// startCapabilities starts the real API with org acme, workspace dev and
// project agent, and returns it with an environment scoped to them.
func startCapabilities(t *testing.T) (*apiServer, map[string]string) {
	t.Helper()
	a, env := startScoped(t, servertest.Options{AllowedImages: []string{"paddock/*", "example/*", "img:*"}})
	clitest.MustRun(t, env, "project", "create", "agent")
	return a, env
}

// manifest is a capability.yaml naming name and version, and more lines.
func manifest(name, version string, more ...string) string {
	return "schema_version: 1\nname: " + name + "\nversion: " + version + "\ndescription: " + name + " tools\n" + strings.Join(more, "")
}

// bundles are the bundles pushed to the server, in order.
func (a *apiServer) bundles() [][]byte {
	var out [][]byte
	for _, r := range a.rec.sent(pushRoute) {
		out = append(out, r.raw)
	}
	return out
}

// bundleEntry is one entry of a bundle.
type bundleEntry struct {
	typ     byte
	mode    int64
	modTime time.Time
	uid     int
	data    string
	order   int
}

// bundleEntries reads a tar.gz bundle's entries by name.
func bundleEntries(bundle []byte) (map[string]bundleEntry, error) {
	zr, err := gzip.NewReader(bytes.NewReader(bundle))
	if err != nil {
		return nil, fmt.Errorf("not a gzip stream: %w", err)
	}
	tr := tar.NewReader(zr)
	out := map[string]bundleEntry{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		data, _ := io.ReadAll(tr)
		out[h.Name] = bundleEntry{typ: h.Typeflag, mode: h.Mode, modTime: h.ModTime, uid: h.Uid, data: string(data), order: len(out)}
	}
}
