package docker

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// What a sandbox can learn of the host from its mounts: the run directory
// is a small tmpfs of its own, so a sandbox's /.paddock/run shows as
// "/<random name>" on tmpfs, and its shim as "/paddock-shim-<hash>", not
// as paths on the host. (The workspace shows as the root of its own
// loop-mounted filesystem; see quota.go.)

// runDirSize bounds the run directory's tmpfs: sockets, which take no
// space, and one copy of the shim per version.
const runDirSize = "64m"

// prepareRunDir creates cfg.RunDir, makes it a mount of its own
// (privateRunDir) and copies the shim into it (cfg.shimSource): the run
// directory is private to the server, and each sandbox's own directory
// inside it is shared with that sandbox only; sandboxes run the copy, so
// the shim's host path is not theirs to see either. If a step fails, the
// tmpfs it mounted goes again.
//
// Servers of one installation on one host (replicas) share the run
// directory: the first to start mounts it, under a lock beside it
// (<run dir>.lock), and the others use that mount. Each holds a shared
// flock on the directory while it runs (the returned use), so a server
// whose start fails knows whether another one uses the mount it made.
func prepareRunDir(cfg *Config, logger *slog.Logger) (use *runDirUse, err error) {
	runDir := cfg.RunDir
	if err := os.MkdirAll(runDir, 0o700); err != nil {
		return nil, errdefs.FailedPrecondition("run_dir_unusable", "the run directory %q cannot be created", runDir).WithCause(err)
	}
	unlock, err := lockFile(runDir + ".lock")
	if err != nil {
		return nil, errdefs.FailedPrecondition("run_dir_unusable", "the run directory %q cannot be locked", runDir).WithCause(err)
	}
	defer unlock()
	private, mounted, err := privateRunDir(runDir)
	if err != nil {
		return nil, errdefs.FailedPrecondition("run_dir_unusable", "the run directory %q cannot be mounted", runDir).WithCause(err)
	}
	if !private {
		logger.Warn("the run directory is not a mount of its own, so sandboxes can see its host path; start with an empty run directory to fix it", "run_dir", runDir)
	}
	undo := func() {
		if mounted {
			_ = unix.Unmount(runDir, unix.MNT_DETACH)
		}
	}
	if cfg.shimSource, err = copyShim(cfg.ShimPath, runDir); err != nil {
		undo()
		return nil, errdefs.FailedPrecondition("run_dir_unusable", "the paddock-shim binary cannot be copied into the run directory").WithCause(err)
	}
	use, err = useRunDir(runDir, mounted)
	if err != nil {
		undo()
		return nil, errdefs.FailedPrecondition("run_dir_unusable", "the run directory %q cannot be locked", runDir).WithCause(err)
	}
	return use, nil
}

// runDirUse is a server's use of the run directory: a shared flock on it,
// held until the provider closes. mounted says this server made the mount.
type runDirUse struct {
	dir     *os.File
	mounted bool
}

// useRunDir takes a shared flock on runDir.
func useRunDir(runDir string, mounted bool) (*runDirUse, error) {
	f, err := os.Open(runDir)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH); err != nil {
		_ = f.Close()
		return nil, err
	}
	return &runDirUse{dir: f, mounted: mounted}, nil
}

// othersUse reports whether another server holds the run directory. It
// gives up this server's shared lock to ask.
func (u *runDirUse) othersUse() bool {
	err := unix.Flock(int(u.dir.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	return err != nil
}

// privateRunDir mounts a tmpfs at runDir unless it is a mount already. A
// run directory that holds anything (sockets of running sandboxes, left by
// a server from before run directories were mounts) is left as it is, and
// private is false. mounted says this call made the mount.
func privateRunDir(runDir string) (private, mounted bool, err error) {
	private, err = isMountPoint(runDir)
	if err != nil || private {
		return private, false, err
	}
	entries, err := os.ReadDir(runDir)
	if err != nil {
		return false, false, err
	}
	if len(entries) > 0 {
		return false, false, nil
	}
	if err := unix.Mount("paddock-run", runDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0700,size="+runDirSize); err != nil {
		return false, false, fmt.Errorf("mount a tmpfs at %s: %w", runDir, err)
	}
	return true, true, nil
}

// ReleaseRunDir undoes what New did to the run directory when the server
// that made the provider fails to start: it unmounts the tmpfs that New
// mounted, unless a sandbox has a directory in it by now or another
// server of the installation uses it. A run directory that was a mount
// already (a restart, with sandboxes running; a replica beside one that
// serves) is kept.
func (p *Provider) ReleaseRunDir() error {
	if p.runDir == nil || !p.runDir.mounted {
		return nil
	}
	unlock, err := lockFile(p.cfg.RunDir + ".lock")
	if err != nil {
		return err
	}
	defer unlock()
	if p.runDir.othersUse() {
		return nil
	}
	entries, err := os.ReadDir(p.cfg.RunDir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			return nil // a sandbox's socket directory
		}
	}
	if err := unix.Unmount(p.cfg.RunDir, unix.MNT_DETACH); err != nil {
		return fmt.Errorf("unmount the run directory %s: %w", p.cfg.RunDir, err)
	}
	p.runDir.mounted = false
	return nil
}

// copyShim puts a copy of the shim at runDir/paddock-shim-<hash of its
// content> (once per version) and returns its path.
func copyShim(shim, runDir string) (string, error) {
	src, err := os.Open(shim)
	if err != nil {
		return "", err
	}
	defer src.Close()
	h := sha256.New()
	if _, err := io.Copy(h, src); err != nil {
		return "", err
	}
	dst := filepath.Join(runDir, "paddock-shim-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(dst); err == nil {
		return dst, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(runDir, ".shim-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, src); err != nil {
		_ = tmp.Close()
		return "", err
	}
	if err := tmp.Chmod(0o555); err != nil {
		_ = tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return dst, os.Rename(tmp.Name(), dst)
}
