package docker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

// A workspace's disk quota: every workspace volume is its own ext4
// filesystem in a sparse image file of the quota's size
// (<DiskDir>/<volume>.img), loop-mounted at <DiskDir>/<volume>; the Docker
// volume is a bind of that mount. Writing past the quota fails inside the
// sandbox with ENOSPC, the image never grows past its size, and the
// sandbox's mount shows a loop device, not a host path.
//
// The filesystem is mounted, and so holds a loop device, only while a
// container uses the volume: Create mounts it (mountDisk), and Destroy
// unmounts it once no container is left on it (releaseDisk), which
// detaches the loop device (mount -o loop sets it to clear itself). An
// idle, archived or reset runtime holds none, so a host's loop devices
// bound how many sandboxes exist at once, not how many runtimes.

// LabelDiskMB records a workspace volume's quota.
const LabelDiskMB = "dev.paddock.disk-mb"

// DefaultDiskMB is the quota of a workspace whose spec names none.
const DefaultDiskMB = 10240

// minDiskMB is the smallest filesystem worth making.
const minDiskMB = provider.MinDiskMB

// diskPaths returns a workspace's image file and mount point.
func (p *Provider) diskPaths(volume string) (img, mnt string) {
	return filepath.Join(p.cfg.DiskDir, volume+".img"), filepath.Join(p.cfg.DiskDir, volume)
}

// makeDisk creates and mounts a workspace's filesystem of sizeMB. On error
// nothing of it is left.
//
// It is called only for a volume the engine does not have, and the volume
// is made only once its disk is ready: an image or mount point already
// there is what a server killed part-way through this (or through removing
// a volume's disk) left, which no sandbox ever used, so it goes first.
// Creates of one workspace do not run at once: the runtime's lock
// serializes them, across replicas too.
func (p *Provider) makeDisk(ctx context.Context, volume string, sizeMB int64) (retErr error) {
	img, mnt := p.diskPaths(volume)
	imgThere, err := p.machine.exists(ctx, img)
	if imgThere {
		p.logger.WarnContext(ctx, "removing a workspace disk an interrupted create left", "image", img)
		p.removeDisk(ctx, volume)
	} else if isMnt, _ := p.machine.isMountPoint(ctx, mnt); isMnt || err != nil {
		p.removeDisk(ctx, volume)
	} else {
		_ = p.machine.remove(ctx, mnt) // an empty mount point made before the crash
	}
	// Sparse: the host pays for what is written.
	if err := p.machine.createSparse(ctx, img, sizeMB<<20); err != nil {
		p.removeDisk(context.WithoutCancel(ctx), volume)
		return diskErr("create the workspace disk image", err)
	}
	defer func() {
		if retErr != nil {
			p.removeDisk(context.WithoutCancel(ctx), volume)
		}
	}()
	// No reserved blocks (the whole quota is the sandbox's), an inode per
	// 8 KiB (package trees are many small files), root-owned root; inode
	// tables and journal not written out: the fresh sparse image reads as
	// zeros already, and writing the journal would cost the host 64 MiB of
	// disk for every 10 GiB workspace before it holds a byte.
	if err := p.machine.run(ctx, "mkfs.ext4", "-q", "-F", "-m", "0", "-i", "8192", "-E", "root_owner=0:0,lazy_itable_init=1,lazy_journal_init=1", img); err != nil {
		return diskErr("format the workspace disk", err)
	}
	if err := p.machine.mkdir(ctx, mnt); err != nil {
		return diskErr("create the workspace mount point", err)
	}
	if err := p.mountDisk(ctx, volume); err != nil {
		return err
	}
	// A workspace starts empty.
	if err := p.machine.remove(ctx, filepath.Join(mnt, "lost+found")); err != nil {
		return diskErr("prepare the workspace disk", err)
	}
	return nil
}

// mountDisk mounts a workspace's image at its mount point unless it is
// mounted already (it is not after the host rebooted).
func (p *Provider) mountDisk(ctx context.Context, volume string) error {
	img, mnt := p.diskPaths(volume)
	mounted, err := p.machine.isMountPoint(ctx, mnt)
	if err != nil {
		return diskErr("check the workspace mount", err)
	}
	if mounted {
		return nil
	}
	if err := p.machine.run(ctx, "mount", "-t", "ext4", "-o", "loop,nosuid,nodev", img, mnt); err != nil {
		return diskErr("mount the workspace disk", err)
	}
	return nil
}

// diskLocks serialise, per workspace volume, Create's span from mounting
// the disk to making the container that holds it with releaseDisk's check
// that no container holds it and unmount: without them a release between
// the two finds no container and unmounts the disk under the new sandbox,
// which then gets an empty /workspace without a quota. Replicas on one
// host share the disks, so the lock is also a flock on a file of the
// volume's in the run directory they share (see hostlock.go).
type diskLocks struct {
	mu sync.Mutex
	m  map[string]*diskLock
}

type diskLock struct {
	mu    sync.Mutex
	users int // holders and waiters
}

// lockDisk locks volume's disk; unlock may be called more than once.
func (p *Provider) lockDisk(volume string) (unlock func()) {
	d := &p.disks
	d.mu.Lock()
	if d.m == nil {
		d.m = map[string]*diskLock{}
	}
	l := d.m[volume]
	if l == nil {
		l = &diskLock{}
		d.m[volume] = l
	}
	l.users++
	d.mu.Unlock()
	l.mu.Lock()
	unlockHost := func() {}
	if p.cfg.RunDir != "" && p.cfg.Machine == nil { // replicas share a local host's disks only
		var err error
		if unlockHost, err = lockFile(filepath.Join(p.cfg.RunDir, ".disk-"+volume+".lock")); err != nil {
			p.logger.Warn("workspace disk locked for this server only", "volume", volume, "err", err)
			unlockHost = func() {}
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			unlockHost()
			l.mu.Unlock()
			d.mu.Lock()
			if l.users--; l.users == 0 {
				delete(d.m, volume)
			}
			d.mu.Unlock()
		})
	}
}

// releaseDisk unmounts a workspace's filesystem, which detaches its loop
// device, unless a container (of any state) still has the volume. It is
// best effort: a disk left mounted costs a loop device until the next
// release or removal.
func (p *Provider) releaseDisk(ctx context.Context, volume string) {
	defer p.lockDisk(volume)()
	_, mnt := p.diskPaths(volume)
	if mounted, err := p.machine.isMountPoint(ctx, mnt); err != nil || !mounted {
		return
	}
	cs, err := p.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("volume", volume))})
	if err != nil || len(cs) > 0 {
		return
	}
	if err := p.machine.unmount(ctx, mnt, false); err != nil {
		p.logger.DebugContext(ctx, "workspace disk kept mounted", "mount", mnt, "err", err)
	}
}

// removeDisk unmounts a workspace's filesystem and deletes its image. It is
// best effort; what it cannot remove is logged.
func (p *Provider) removeDisk(ctx context.Context, volume string) {
	img, mnt := p.diskPaths(volume)
	if mounted, _ := p.machine.isMountPoint(ctx, mnt); mounted {
		// Lazily: a sandbox being torn down may still hold it for a moment.
		if err := p.machine.unmount(ctx, mnt, true); err != nil {
			p.logger.WarnContext(ctx, "unmounting a workspace disk", "mount", mnt, "err", err)
			return
		}
	}
	if err := p.machine.remove(ctx, mnt); err != nil {
		p.logger.WarnContext(ctx, "removing a workspace mount point", "mount", mnt, "err", err)
	}
	if err := p.machine.remove(ctx, img); err != nil {
		p.logger.WarnContext(ctx, "removing a workspace disk image", "image", img, "err", err)
	}
}

// isMountPoint reports whether dir is the root of a mount (its device
// differs from its parent's). A missing dir is not.
func isMountPoint(dir string) (bool, error) {
	var st, parent unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return false, nil
		}
		return false, err
	}
	if err := unix.Lstat(filepath.Dir(dir), &parent); err != nil {
		return false, err
	}
	return st.Dev != parent.Dev || st.Ino == parent.Ino, nil
}

// run runs a host tool, with its output in the error.
func run(ctx context.Context, name string, args ...string) error {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}

func diskErr(what string, err error) error {
	return errdefs.Unavailable("workspace_disk_failed", "could not %s", what).WithCause(err)
}

// diskMB is the quota a spec asks for, defaulted.
func diskMB(asked int64) int64 {
	if asked == 0 {
		return DefaultDiskMB
	}
	return asked
}

// formatMB renders a quota for a label.
func formatMB(mb int64) string { return strconv.FormatInt(mb, 10) }
