package docker_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/paddockhq/paddock/internal/providers/docker"
)

// TestDiskQuota: writing past a workspace's quota fails inside the sandbox
// with ENOSPC, and the host's disk holds no more than the quota for it; on
// runc and under gVisor, whose writes reach the disk through its gofer.
func TestDiskQuota(t *testing.T) { eachFlavour(t, false, testDiskQuota) }

func testDiskQuota(t *testing.T, fl flavour) {
	e := newFlavourEnv(t, fl)
	spec := e.spec()
	spec.Resources.DiskMB = 32
	h := e.started(t, spec)

	out, code := e.execAsUser(t, h.ID, "sh", "-c", "dd if=/dev/zero of=/workspace/big bs=1048576 count=64 2>&1")
	if code == 0 || !strings.Contains(out, "No space left on device") {
		t.Fatalf("writing 64 MiB into a 32 MiB workspace: exit %d: %s", code, out)
	}
	// Many small files run out too, and never touch the host's disk.
	out, code = e.execAsUser(t, h.ID, "sh", "-c", "i=0; while [ $i -lt 100000 ]; do echo x > /workspace/f$i || exit 7; i=$((i+1)); done")
	if code != 7 {
		t.Fatalf("filling the workspace with small files: exit %d: %s", code, out)
	}
	img := filepath.Join(e.diskDir, spec.Workspace+".img")
	var st syscall.Stat_t
	if err := syscall.Stat(img, &st); err != nil {
		t.Fatalf("the workspace's disk image: %v", err)
	}
	if st.Size != 32<<20 || st.Blocks*512 > 33<<20 {
		t.Fatalf("disk image: size %d, %d bytes allocated; want at most 32 MiB", st.Size, st.Blocks*512)
	}
	// The sandbox sees a filesystem of its own, not a host path.
	mi := e.mustExec(t, h.ID, "cat", "/proc/self/mountinfo")
	if strings.Contains(mi, e.diskDir) {
		t.Fatalf("the sandbox sees the host's disk directory:\n%s", mi)
	}
	// Files written before the quota was reached are intact; freeing space
	// makes room again.
	e.mustExecAsUser(t, h.ID, "sh", "-c", "rm -f /workspace/big /workspace/f*; echo ok > /workspace/after")
	if got := e.mustExec(t, h.ID, "cat", "/workspace/after"); got != "ok\n" {
		t.Fatalf("after freeing space: %q", got)
	}

	if err := e.p.Destroy(t.Context(), h); err != nil {
		t.Fatal(err)
	}
	if err := e.p.RemoveWorkspace(t.Context(), spec.Workspace); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{img, filepath.Join(e.diskDir, spec.Workspace)} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("%s after RemoveWorkspace: %v", p, err)
		}
	}
	if b, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(b), e.diskDir) {
		t.Fatal("the workspace disk is still mounted after RemoveWorkspace")
	}
}

// TestDiskQuotaSurvivesRemount: after the host loses its mounts (a
// reboot), the next sandbox on the workspace gets the same filesystem back,
// files and quota.
func TestDiskQuotaSurvivesRemount(t *testing.T) {
	e := newEnv(t)
	spec := e.spec()
	spec.Resources.DiskMB = 32
	h := e.started(t, spec)
	e.mustExecAsUser(t, h.ID, "sh", "-c", "echo kept > /workspace/note")
	if err := e.p.Destroy(t.Context(), h); err != nil {
		t.Fatal(err)
	}
	mnt := filepath.Join(e.diskDir, spec.Workspace)
	if err := syscall.Unmount(mnt, 0); err != nil {
		t.Fatal(err)
	}
	spec2 := e.spec()
	spec2.Workspace, spec2.Resources.DiskMB = spec.Workspace, 32
	h2 := e.started(t, spec2)
	if got := e.mustExec(t, h2.ID, "cat", "/workspace/note"); got != "kept\n" {
		t.Fatalf("the workspace after a remount: %q", got)
	}
	if out, code := e.execAsUser(t, h2.ID, "sh", "-c", "dd if=/dev/zero of=/workspace/big bs=1048576 count=64 2>&1"); code == 0 {
		t.Fatalf("the quota is gone after a remount: %s", out)
	}
}

func TestDiskQuotaTooSmall(t *testing.T) {
	e := newEnv(t)
	spec := e.spec()
	spec.Resources.DiskMB = 1
	if _, err := e.p.Create(t.Context(), spec); err == nil || !strings.Contains(err.Error(), docker.CodeInvalidSpec) {
		t.Fatalf("Create with a 1 MiB disk = %v; want %s", err, docker.CodeInvalidSpec)
	}
}
