package docker

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
)

// Whether a container is paused is read from the kernel, not from the
// engine's flag. The engine sets its flag when its pause or unpause call
// returns and again when it processes containerd's matching event, which
// arrives on a queue of its own: an event handled late flips the flag back
// for a moment. A "paused" event handled after the unpause showed a running
// container as paused (the flaky TestDockerRuntimeLifecycle); a "resumed"
// event handled after a later pause would show a frozen one as running.
// The cgroup freezer is what runc pauses with, so it is the truth.
//
// gVisor does not pause with the freezer: runsc pause stops the sandbox's
// tasks inside its kernel and leaves the cgroup THAWED, so under runsc the
// freezer says nothing and the engine's flag is all there is.

// Frozen reports whether the container whose init is pid is paused, as the
// kernel's freezer says; ok is false when it cannot be told. Tests use it
// to check the truth rather than the engine's flag. It does not see a
// gVisor sandbox's pause.
func Frozen(pid int) (isFrozen, ok bool) { return frozen(pid) }

// frozen is Frozen for this provider's containers: ok is false under
// gVisor, whose pause the freezer does not show.
func (p *Provider) frozen(pid int) (isFrozen, ok bool) {
	if p.gvisor() {
		return false, false
	}
	return frozen(pid)
}

// frozen reports whether the processes of the container whose init is pid
// are frozen, from the cgroup freezer (v1 freezer.state, v2 cgroup.events).
// ok is false when it cannot be told (no such process, another runtime).
func frozen(pid int) (isFrozen, ok bool) {
	if pid <= 0 {
		return false, false
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return false, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var v2 string
	for sc.Scan() {
		// hierarchy-id:controllers:path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "freezer" {
				b, err := os.ReadFile(filepath.Join("/sys/fs/cgroup/freezer", parts[2], "freezer.state"))
				if err != nil {
					return false, false
				}
				s := strings.TrimSpace(string(b))
				return s == "FROZEN" || s == "FREEZING", true
			}
		}
		if parts[0] == "0" && parts[1] == "" {
			v2 = parts[2]
		}
	}
	if v2 == "" {
		return false, false
	}
	b, err := os.ReadFile(filepath.Join("/sys/fs/cgroup", v2, "cgroup.events"))
	if err != nil {
		return false, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, found := strings.CutPrefix(line, "frozen "); found {
			return strings.TrimSpace(v) == "1", true
		}
	}
	return false, false
}

// engineAgrees waits, bounded, until the engine's paused flag matches the
// kernel's freezer for container id: the engine refuses to pause what its
// flag says is paused, and to unpause what it says is running, so a call
// made while a late event has flipped the flag would fail for nothing. It
// returns the container as last inspected.
func (p *Provider) engineAgrees(ctx context.Context, c container.InspectResponse) (container.InspectResponse, error) {
	const (
		bound = 2 * time.Second
		every = 10 * time.Millisecond
	)
	deadline := time.Now().Add(bound)
	for {
		f, ok := p.frozen(c.State.Pid)
		if !ok || !c.State.Running || f == c.State.Paused || time.Now().After(deadline) {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return c, ctx.Err()
		case <-time.After(every):
		}
		var err error
		if c, err = p.lookup(ctx, c.ID); err != nil {
			return c, err
		}
	}
}
