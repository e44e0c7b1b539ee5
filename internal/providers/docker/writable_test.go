package docker_test

import (
	"encoding/base64"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/docker"
	"github.com/paddockhq/paddock/internal/testenv"
)

// helloDeb builds a small Debian package whose maintainer script chowns a
// directory to another user, as real packages do, and returns it base64.
func helloDeb(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "hello")
	for path, body := range map[string]string{
		"DEBIAN/control":               "Package: paddock-hello\nVersion: 1.0\nArchitecture: all\nMaintainer: paddock <dev@paddock.invalid>\nDescription: a test package\n",
		"DEBIAN/postinst":              "#!/bin/sh\nset -e\nmkdir -p /var/lib/paddock-hello\nchown nobody:nogroup /var/lib/paddock-hello\n",
		"usr/local/bin/paddock-hello":  "#!/bin/sh\necho hello from a package\n",
		"etc/paddock-hello/hello.conf": "greeting = hello\n",
	} {
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(path, "usr/local/bin/") || path == "DEBIAN/postinst" {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	deb := root + ".deb"
	if out, err := exec.Command("dpkg-deb", "--root-owner-group", "--build", root, deb).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb: %v\n%s", err, out)
	}
	b, err := os.ReadFile(deb)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// TestWritableRoot: with a writable root, apt-get installs a package (its
// maintainer script chowning to another user) with only CHOWN,
// DAC_OVERRIDE and FOWNER added; the change survives a pause and a
// snapshot restored into a new sandbox (archive), and is gone in a sandbox
// made from the image again (reset). A read-only root refuses the install.
// Under gVisor too: there the change must reach the container's own layer
// (runsc --overlay2=none), or the snapshot would not hold it.
func TestWritableRoot(t *testing.T) { eachFlavour(t, false, testWritableRoot) }

func testWritableRoot(t *testing.T, fl flavour) {
	testenv.RequireDocker(t, testenv.DefaultImage)
	e := newFlavourEnv(t, fl)
	e.allowUnboundedRoot(t) // this engine's storage (extfs) cannot bound it
	ctx := t.Context()
	deb := helloDeb(t)
	install := "echo " + deb + " | base64 -d > /root/hello.deb && apt-get install -y /root/hello.deb"

	ro := e.spec()
	ro.Image, ro.Resources.MemoryMB = testenv.DefaultImage, 256
	hro := e.started(t, ro)
	if out, code := e.execIn(t, hro.ID, "bash", "-c", "echo x > /opt/marker"); code == 0 {
		t.Fatalf("a read-only root was written: %s", out)
	}

	spec := e.spec()
	spec.Image, spec.Resources.MemoryMB, spec.WritableRoot = testenv.DefaultImage, 256, true
	h := e.started(t, spec)
	// The agent has exactly the three and its own KILL, SETUID and SETGID (a
	// root process it starts keeps the three and not the agent's own:
	// internal/shim, dropAgentCaps).
	if out := e.mustExec(t, h.ID, "awk", "/^CapEff/ { print $2 }", "/proc/1/status"); strings.TrimSpace(out) != "00000000000000eb" {
		t.Fatalf("effective capabilities of the agent: %s, want CHOWN DAC_OVERRIDE FOWNER KILL SETGID SETUID (0xeb)", out)
	}
	e.mustExec(t, h.ID, "bash", "-c", install)
	if out := e.mustExec(t, h.ID, "paddock-hello"); out != "hello from a package\n" {
		t.Fatalf("the installed command: %q", out)
	}
	if out := e.mustExec(t, h.ID, "stat", "-c", "%U", "/var/lib/paddock-hello"); out != "nobody\n" {
		t.Fatalf("the maintainer script's chown: %q", out)
	}
	e.mustExec(t, h.ID, "bash", "-c", "echo kept > /opt/marker")

	if err := e.p.Pause(ctx, h); err != nil {
		t.Fatal(err)
	}
	if err := e.p.Resume(ctx, h); err != nil {
		t.Fatal(err)
	}
	if out := e.mustExec(t, h.ID, "cat", "/opt/marker"); out != "kept\n" {
		t.Fatalf("after pause and resume: %q", out)
	}

	// Archive: a snapshot of the paused sandbox, restored into a new one.
	if err := e.p.Pause(ctx, h); err != nil {
		t.Fatal(err)
	}
	ref := e.snapshot(t, h, map[string]string{provider.LabelInstance: e.instance, provider.LabelRuntime: spec.RuntimeID})
	if err := e.p.Destroy(ctx, h); err != nil {
		t.Fatal(err)
	}
	restored := spec
	restored.SandboxID, restored.Image = uuid.NewString(), ref
	hr := e.started(t, restored)
	if out := e.mustExec(t, hr.ID, "bash", "-c", "cat /opt/marker && paddock-hello"); out != "kept\nhello from a package\n" {
		t.Fatalf("restored from the snapshot: %q", out)
	}
	if err := e.p.Destroy(ctx, hr); err != nil {
		t.Fatal(err)
	}

	// Reset: a new sandbox from the image has none of it.
	reset := spec
	reset.SandboxID = uuid.NewString()
	hn := e.started(t, reset)
	if out, code := e.execIn(t, hn.ID, "bash", "-c", "cat /opt/marker || command -v paddock-hello"); code == 0 {
		t.Fatalf("after a reset the change is still there: %q", out)
	}
}

// allowUnboundedRoot makes e's provider one whose operator allows
// writable roots the engine cannot bound.
func (e *env) allowUnboundedRoot(t *testing.T) {
	t.Helper()
	p, err := docker.New(docker.Config{
		Name: e.flavour.name, Runtime: e.flavour.runtime,
		Instance: e.instance, ShimPath: e.shim, RunDir: e.runDir, DiskDir: e.diskDir,
		StartTimeout: 30 * time.Second, WritableRootUnbounded: true,
	}, slog.New(slog.NewTextHandler(t.Output(), nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	e.p = p
}

// TestWritableRootNeedsABound: a writable root counts against the disk
// quota where the engine can bound a container's writable layer; where it
// cannot, it is refused before anything is made, unless the operator
// allowed unbounded ones.
func TestWritableRootNeedsABound(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	if _, err := e.p.Capacity(ctx); err != nil {
		t.Fatal(err)
	}
	spec := e.spec()
	spec.WritableRoot = true
	if e.p.Capabilities().WritableRoot {
		// overlay2 over xfs: the layer's size is the quota.
		h := e.started(t, spec)
		c, err := e.cli.ContainerInspect(ctx, h.ID)
		if err != nil {
			t.Fatal(err)
		}
		if c.HostConfig.StorageOpt["size"] != "32M" {
			t.Fatalf("storage options %v, want size 32M", c.HostConfig.StorageOpt)
		}
		return
	}
	_, err := e.p.Create(ctx, spec)
	if e, ok := errdefs.Public(err); !ok || e.Code != docker.CodeWritableRootUnbounded || !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Fatalf("Create: %v, want %s", err, docker.CodeWritableRootUnbounded)
	}
	out, err := exec.Command("docker", "ps", "-aq", "--filter", "label="+provider.LabelInstance+"="+e.instance).Output()
	if err != nil || len(strings.TrimSpace(string(out))) != 0 {
		t.Fatalf("a refused create left containers: %q %v", out, err)
	}
	e.allowUnboundedRoot(t)
	if !e.p.Capabilities().WritableRoot {
		t.Fatal("an operator's allowance does not offer writable roots")
	}
}

// TestToolchain: the default image has what agents expect, and user
// installs land in the workspace with the root read-only: pip install
// --user (pip's own fallback when site-packages is not writable), npm
// install -g, and a virtual environment.
func TestToolchain(t *testing.T) {
	testenv.RequireDocker(t, testenv.DefaultImage)
	e := newEnv(t)
	spec := e.spec()
	spec.Image, spec.Resources.MemoryMB, spec.Resources.DiskMB = testenv.DefaultImage, 512, 256
	h := e.started(t, spec)
	tools := []string{"node", "npm", "python3", "pip3", "gcc", "g++", "make", "git", "curl", "wget", "jq", "rg", "unzip", "xz", "ps", "less", "vi", "ssh", "ip"}
	if out, code := e.execIn(t, h.ID, "bash", "-c", "for c in "+strings.Join(tools, " ")+"; do command -v $c >/dev/null || echo missing $c; done"); code != 0 || out != "" {
		t.Fatalf("tools: %q (exit %d)", out, code)
	}
	script := `set -e
cd /workspace
mkdir -p demo/paddock_demo && cd demo
printf 'def hello():\n    return "hello from pip"\n' > paddock_demo/__init__.py
printf '[project]\nname = "paddock-demo"\nversion = "1.0"\n[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n' > pyproject.toml
pip install --no-index --no-build-isolation -q . 2>&1 | grep -v -i 'warning' || true
python3 -c 'import paddock_demo; print(paddock_demo.hello())'
ls -d /workspace/.local/lib/python3*/site-packages/paddock_demo
python3 -m venv /workspace/venv
/workspace/venv/bin/pip install --no-index --no-build-isolation -q . 2>&1 | grep -v -i warning || true
/workspace/venv/bin/python -c 'import paddock_demo; print("venv", paddock_demo.hello())'
pip wheel -q --no-deps --no-build-isolation -w /workspace/dist . 2>&1 | grep -v -i warning || true
ls /workspace/dist/paddock_demo-1.0-py3-none-any.whl
mkdir -p /workspace/npmdemo && cd /workspace/npmdemo
printf '{"name":"paddock-npm-demo","version":"1.0.0","bin":{"paddock-npm-demo":"cli.js"}}' > package.json
printf '#!/usr/bin/env node\nconsole.log("hello from npm")\n' > cli.js
npm install -g --offline --no-audit --no-fund . >/dev/null 2>&1
paddock-npm-demo
cc -x c -o /tmp/hi - <<'C'
#include <stdio.h>
int main(void) { puts("hello from cc"); return 0; }
C
/tmp/hi
`
	out := e.mustExecAsUser(t, h.ID, "bash", "-c", script)
	for _, want := range []string{"hello from pip", "/workspace/.local/lib/python3", "venv hello from pip", "/workspace/dist/paddock_demo-1.0-py3-none-any.whl", "hello from npm", "hello from cc"} {
		if !strings.Contains(out, want) {
			t.Fatalf("toolchain script output lacks %q:\n%s", want, out)
		}
	}
	if out := e.mustExecAsUser(t, h.ID, "bash", "-c", "command -v paddock-npm-demo"); !strings.HasPrefix(out, "/workspace/.npm-global/bin/") {
		t.Fatalf("npm -g landed in %q", out)
	}
}
