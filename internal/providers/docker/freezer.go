package docker

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
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
// tasks inside its kernel and leaves the cgroup THAWED. There the truth is
// what runsc itself says (`runsc state`, the OCI runtime's own command,
// which takes the container's lock), the same answer containerd's shim
// gets. The engine's flag is no better under gVisor than under runc
// (TestGVisorPauseResume saw it say paused after a resume).

// Frozen reports whether the container whose init is pid is paused, as the
// kernel's freezer says; ok is false when it cannot be told. Tests use it
// to check the truth rather than the engine's flag. It does not see a
// gVisor sandbox's pause; RunscPaused does.
func Frozen(pid int) (isFrozen, ok bool) { return frozen(pid) }

// RunscPaused reports whether the gVisor sandbox whose init is pid is
// paused, as runsc says; ok is false when it cannot be told.
func RunscPaused(pid int) (paused, ok bool) { return runscPaused(pid) }

// frozen is whether this provider's container whose init is pid is
// paused: from runsc under gVisor, else from the freezer.
func (p *Provider) frozen(pid int) (isFrozen, ok bool) {
	if p.cfg.Machine != nil {
		return false, false // the pid is the machine's: its engine's flag tells
	}
	if p.gvisor() {
		return runscPaused(pid)
	}
	return frozen(pid)
}

// runscSandboxName is the argv[0] runsc gives a sandbox's process, which
// is the container's init as the engine sees it.
const runscSandboxName = "runsc-sandbox"

// runscPaused asks runsc whether the sandbox whose process is pid is
// paused. That process names everything needed: its executable is the
// runsc binary, its argv carries the --root runsc keeps state under (the
// engine's, which differs between engines) and ends with the container's
// id. ok is false when pid is not a runsc sandbox or runsc cannot answer.
func runscPaused(pid int) (paused, ok bool) {
	if pid <= 0 {
		return false, false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false, false
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	if len(args) < 3 || args[0] != runscSandboxName {
		return false, false
	}
	var root string
	for i, a := range args {
		if v, found := strings.CutPrefix(a, "--root="); found {
			root = v
			break
		}
		if a == "--root" && i+1 < len(args) {
			root = args[i+1]
			break
		}
	}
	id := args[len(args)-1]
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil || root == "" || id == "" || strings.HasPrefix(id, "-") || strings.HasSuffix(exe, " (deleted)") {
		return false, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), runscStateTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, exe, "--root", root, "state", id).Output()
	if err != nil {
		return false, false
	}
	var st struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(out, &st); err != nil {
		return false, false
	}
	switch st.Status {
	case "paused":
		return true, true
	case "running":
		return false, true
	}
	return false, false
}

// runscStateTimeout bounds one `runsc state`; it answers in about 10 ms.
const runscStateTimeout = 2 * time.Second

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
// truth (the freezer, or runsc) for container id: the engine refuses to pause what its
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
