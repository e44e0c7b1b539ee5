package docker

import (
	"context"
	"slices"
	"strings"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// The gVisor flavour: Config.Runtime "runsc" runs every sandbox in gVisor's
// user-space kernel instead of directly on the host's. The engine must know
// the runtime (dockerd's "runtimes"; scripts/setup-host.sh registers it)
// with the flags in gvisorFlags. What differs from runc:
//
//   - The agent's socket is bound on the host by the sandbox's gofer, not
//     by the agent, so its peer credentials say nothing; the agent proves
//     itself by its key alone (identity.go).
//   - runsc pauses inside the sandbox and leaves the cgroup freezer thawed:
//     whether it is paused is asked of runsc itself (freezer.go).
//   - The pids cgroup counts the sandbox's own threads too; see
//     GVisorPidsLimit.
//   - Docker's embedded DNS server is out of reach; open sandboxes get the
//     host's resolvers instead (dns.go).

// CodeRuntimeUnavailable: the engine does not know the configured OCI
// runtime.
const CodeRuntimeUnavailable = "runtime_unavailable"

// gvisorFlags are the runsc flags the provider relies on, and why.
var gvisorFlags = []struct{ flag, why string }{
	// Without it a unix socket that the agent creates in its bind-mounted
	// run directory exists only inside the sandbox, and Start waits for
	// it in vain.
	{"--host-uds=create", "the agent's socket would not appear on the host"},
	// By default runsc keeps a writable root's changes in an overlay of
	// its own, backed by one opaque file in the container's root, so a
	// snapshot (docker commit) would hold that file instead of the
	// changes.
	{"--overlay2=none", "a writable root's changes would not be in its snapshots"},
}

// gvisor reports whether sandboxes run under gVisor's runsc.
func (p *Provider) gvisor() bool { return strings.HasPrefix(p.cfg.Runtime, "runsc") }

// GVisorPidsLimit is the pids cgroup limit of a gVisor sandbox whose spec
// allows pids processes and threads. The cgroup counts the host tasks of
// the whole sandbox: the sentry's and gofer's threads (about 30 with an
// idle agent) and, for each guest process, a systrap stub process and its
// threads (2 host tasks for an idle one, up to 3.5 when every one is busy
// in system calls, as the sentry then runs more threads). A sandbox over
// its cgroup's limit does not see fork fail with EAGAIN: the sentry cannot
// make a thread and the whole sandbox exits. So the limit is raised enough
// that a sandbox within its spec's limit never gets there, while a fork
// bomb still stops, with the sandbox, at a bound of the spec's size.
func GVisorPidsLimit(pids int64) int64 { return 4*pids + 64 }

// checkRuntime makes sure, once, that the engine knows Config.Runtime: a
// sandbox of a runtime the engine lacks fails its Create with an error that
// says so rather than as a rejected request. It warns about a runsc
// registered without the flags the provider relies on (gvisorFlags); it
// does not refuse one, as a wrapper script may add them.
func (p *Provider) checkRuntime(ctx context.Context) error {
	if p.cfg.Runtime == "" || p.runtimeKnown.Load() {
		return nil
	}
	info, err := p.cli.Info(ctx)
	if err != nil {
		return engineErr("inspect the host of", err)
	}
	rt, ok := info.Runtimes[p.cfg.Runtime]
	if !ok {
		return errdefs.FailedPrecondition(CodeRuntimeUnavailable,
			"the Docker engine has no OCI runtime %q; register it in dockerd's \"runtimes\" (scripts/setup-host.sh registers runsc)", p.cfg.Runtime)
	}
	if p.gvisor() {
		for _, f := range gvisorFlags {
			if !slices.Contains(rt.Args, f.flag) {
				p.logger.WarnContext(ctx, "the engine's runsc runtime lacks a flag paddock needs", "runtime", p.cfg.Runtime, "flag", f.flag, "without_it", f.why, "args", rt.Args)
			}
		}
	}
	p.runtimeKnown.Store(true)
	return nil
}
