package docker_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/docker/docker/api/types/container"
	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/providers/docker"
	"github.com/paddockhq/paddock/internal/testenv"
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

// TestDiskQuotaSurvivesRemount: a workspace's disk holds a loop device
// only while a sandbox has it: destroying the sandbox unmounts it and
// detaches the loop device, and the next sandbox on the workspace gets the
// same filesystem back, files and quota (as after a reboot, when the host
// has lost its mounts).
func TestDiskQuotaSurvivesRemount(t *testing.T) {
	e := newEnv(t)
	spec := e.spec()
	spec.Resources.DiskMB = 32
	h := e.started(t, spec)
	e.mustExecAsUser(t, h.ID, "sh", "-c", "echo kept > /workspace/note")
	img, mnt := filepath.Join(e.diskDir, spec.Workspace+".img"), filepath.Join(e.diskDir, spec.Workspace)
	if n := len(testenv.LoopsOf(img)); n != 1 {
		t.Fatalf("a running sandbox's workspace is on %d loop devices, want 1", n)
	}
	if err := e.p.Destroy(t.Context(), h); err != nil {
		t.Fatal(err)
	}
	if loops := testenv.LoopsOfSettled(img, 0); len(loops) > 0 {
		t.Fatalf("the workspace of a destroyed sandbox still holds loop devices %v", loops)
	}
	if len(testenv.MountsUnder(mnt)) > 0 {
		t.Fatal("the workspace of a destroyed sandbox is still mounted")
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

// TestDiskReleaseWaitsForCreate: a Destroy that releases a workspace's
// disk while a Create on the same workspace has mounted it but not yet
// made its container waits for the container, sees it, and leaves the
// disk mounted: the new sandbox gets the workspace, not an empty
// directory without a quota.
func TestDiskReleaseWaitsForCreate(t *testing.T) {
	e := newEnv(t)
	spec := e.spec()
	first := e.started(t, spec)
	mnt := filepath.Join(e.diskDir, spec.Workspace)
	if err := os.WriteFile(filepath.Join(mnt, "note"), []byte("kept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	destroyed := make(chan error, 1)
	docker.SetAfterDiskMount(e.p, func() {
		go func() { destroyed <- e.p.Destroy(context.WithoutCancel(t.Context()), first) }()
		// Until the Destroy waits for the disk (or, without the lock, has
		// released it).
		testenv.Eventually(t, func() error {
			select {
			case err := <-destroyed:
				destroyed <- err
				return nil
			default:
			}
			if n := docker.DiskUsers(e.p, spec.Workspace); n < 2 {
				return fmt.Errorf("the disk has %d users, and the Destroy has not ended", n)
			}
			return nil
		})
	})
	spec2 := e.spec()
	spec2.Workspace = spec.Workspace
	h, err := e.p.Create(t.Context(), spec2)
	docker.SetAfterDiskMount(e.p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-destroyed; err != nil {
		t.Fatal(err)
	}
	if len(testenv.MountsUnder(mnt)) == 0 {
		t.Fatal("a Destroy unmounted the workspace disk under a sandbox being created on it")
	}
	if err := e.p.Start(t.Context(), h); err != nil {
		t.Fatal(err)
	}
	if got := e.mustExec(t, h.ID, "cat", "/workspace/note"); got != "kept\n" {
		t.Fatalf("the new sandbox's workspace: %q", got)
	}
}

// TestDiskReleaseWaitsForCreateOnAnotherReplica: as
// TestDiskReleaseWaitsForCreate, with the Destroy on another server of the
// installation on the host (a replica sharing the run directory and the
// disks): it waits for the Create's container too.
func TestDiskReleaseWaitsForCreateOnAnotherReplica(t *testing.T) {
	e := newEnv(t)
	other := e.provider(t, e.shim)
	spec := e.spec()
	first := e.started(t, spec)
	mnt := filepath.Join(e.diskDir, spec.Workspace)
	destroyed := make(chan error, 1)
	docker.SetAfterDiskMount(e.p, func() {
		go func() { destroyed <- other.Destroy(context.WithoutCancel(t.Context()), first) }()
		// Until the other replica's Destroy waits for the disk's lock on
		// the host (or, without it, has released the disk).
		lock := filepath.Join(e.runDir, ".disk-"+spec.Workspace+".lock")
		testenv.Eventually(t, func() error {
			select {
			case err := <-destroyed:
				destroyed <- err
				return nil
			default:
			}
			if !flockWaited(t, lock) {
				return fmt.Errorf("the other replica's Destroy neither waits for %s nor has ended", lock)
			}
			return nil
		})
	})
	spec2 := e.spec()
	spec2.Workspace = spec.Workspace
	h, err := e.p.Create(t.Context(), spec2)
	docker.SetAfterDiskMount(e.p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-destroyed; err != nil {
		t.Fatal(err)
	}
	if len(testenv.MountsUnder(mnt)) == 0 {
		t.Fatal("another replica's Destroy unmounted the workspace disk under a sandbox being created on it")
	}
	if err := e.p.Start(t.Context(), h); err != nil {
		t.Fatal(err)
	}
}

// flockWaited reports whether a flock on path has a waiter (/proc/locks
// lists it with "->").
func flockWaited(t *testing.T, path string) bool {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return false
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		t.Fatal(err)
	}
	suffix := ":" + strconv.FormatUint(st.Ino, 10)
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 7 && f[1] == "->" && f[2] == "FLOCK" && strings.HasSuffix(f[6], suffix) {
			return true
		}
	}
	return false
}

// TestDiskReleasedWhenContainerGone: Destroy of a sandbox whose container
// is already gone (removed outside paddock, or by a Destroy that stopped
// before releasing the disk) still unmounts its workspace disk.
func TestDiskReleasedWhenContainerGone(t *testing.T) {
	e := newEnv(t)
	spec := e.spec()
	h := e.started(t, spec)
	img, mnt := filepath.Join(e.diskDir, spec.Workspace+".img"), filepath.Join(e.diskDir, spec.Workspace)
	if err := e.cli.ContainerRemove(t.Context(), h.ID, container.RemoveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if err := e.p.Destroy(t.Context(), h); err != nil {
		t.Fatal(err)
	}
	if len(testenv.MountsUnder(mnt)) > 0 || len(testenv.LoopsOfSettled(img, 0)) > 0 {
		t.Fatal("the workspace disk of a sandbox whose container was gone is still mounted")
	}
}

// TestFailedCreateReleasesDisk: a Create that fails after mounting an
// existing workspace's disk (here: a container of that sandbox id exists)
// unmounts it again.
func TestFailedCreateReleasesDisk(t *testing.T) {
	e := newEnv(t)
	spec := e.spec()
	e.started(t, spec)
	other := e.spec()
	if err := e.p.Destroy(t.Context(), e.started(t, other)); err != nil {
		t.Fatal(err)
	}
	img, mnt := filepath.Join(e.diskDir, other.Workspace+".img"), filepath.Join(e.diskDir, other.Workspace)
	if len(testenv.MountsUnder(mnt)) > 0 {
		t.Fatal("the workspace disk of a destroyed sandbox is still mounted")
	}
	clash := e.spec()
	clash.SandboxID, clash.Workspace = spec.SandboxID, other.Workspace
	if _, err := e.p.Create(t.Context(), clash); err == nil || !strings.Contains(err.Error(), docker.CodeSandboxExists) {
		t.Fatalf("Create with a taken sandbox id = %v, want %s", err, docker.CodeSandboxExists)
	}
	if len(testenv.MountsUnder(mnt)) > 0 || len(testenv.LoopsOfSettled(img, 0)) > 0 {
		t.Fatal("a failed Create left the existing workspace's disk mounted")
	}
}

// TestDiskImageStartsSmall: a workspace of the default quota (10 GiB)
// costs the host little disk until it is written to: its image is sparse,
// and making its filesystem writes no more than the metadata.
func TestDiskImageStartsSmall(t *testing.T) {
	e := newEnv(t)
	spec := e.spec()
	spec.Resources.DiskMB = 0 // the default
	e.started(t, spec)
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(e.diskDir, spec.Workspace+".img"), &st); err != nil {
		t.Fatal(err)
	}
	if st.Size != docker.DefaultDiskMB<<20 || st.Blocks*512 > 16<<20 {
		t.Fatalf("a new default workspace's image: size %d, %d bytes allocated; want %d, at most 16 MiB", st.Size, st.Blocks*512, docker.DefaultDiskMB<<20)
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

// TestCreateDiscardsAnInterruptedDisk: a server killed while it made a
// workspace's disk leaves an image (formatted, even mounted) and no
// volume; the next Create of that workspace makes it afresh instead of
// failing on the file for ever.
func TestCreateDiscardsAnInterruptedDisk(t *testing.T) {
	e := newEnv(t)
	spec := e.spec()
	img, mnt := filepath.Join(e.diskDir, spec.Workspace+".img"), filepath.Join(e.diskDir, spec.Workspace)
	if err := os.WriteFile(img, []byte("half made"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(mnt, 0o700); err != nil {
		t.Fatal(err)
	}
	h := e.started(t, spec)
	if len(testenv.MountsUnder(mnt)) != 1 {
		t.Fatal("the workspace's new disk is not mounted")
	}
	if err := e.p.Destroy(t.Context(), h); err != nil {
		t.Fatal(err)
	}
}
