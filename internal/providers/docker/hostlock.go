package docker

import (
	"path/filepath"

	"github.com/paddockhq/paddock/internal/flock"
)

// Several servers of one installation on one host (replicas) share a run
// directory, the workspace disks and the firewall chains. What one of them
// changes there in several steps (mount the run directory's tmpfs; mount a
// disk and make the container that holds it; check who listens on the
// proxy port and take its ACCEPT back) happens under a lock that every
// server on the host takes: flock on a file, which the kernel drops when
// its holder dies.

// lockFile is flock.Lock.
var lockFile = flock.Lock

// firewallLock is the lock of the egress firewall's read-then-change
// steps, in the run directory every server of the installation shares.
func (p *Provider) firewallLock() (unlock func(), err error) {
	return lockFile(filepath.Join(p.cfg.RunDir, ".firewall.lock"))
}
