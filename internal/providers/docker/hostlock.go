package docker

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Several servers of one installation on one host (replicas) share a run
// directory, the workspace disks and the firewall chains. What one of them
// changes there in several steps (mount the run directory's tmpfs; mount a
// disk and make the container that holds it; check who listens on the
// proxy port and take its ACCEPT back) happens under a lock that every
// server on the host takes: flock on a file, which the kernel drops when
// its holder dies.

// lockFile takes an exclusive flock on path (a directory, or a file
// created if missing), waiting for it, and returns how to release it.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
	if errors.Is(err, unix.EISDIR) {
		f, err = os.Open(path)
	}
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { _ = f.Close() }, nil
}

// firewallLock is the lock of the egress firewall's read-then-change
// steps, in the run directory every server of the installation shares.
func (p *Provider) firewallLock() (unlock func(), err error) {
	return lockFile(filepath.Join(p.cfg.RunDir, ".firewall.lock"))
}
