package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/volume"

	"github.com/paddockhq/paddock/internal/agentauth"
	"github.com/paddockhq/paddock/internal/agentpb"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

// cleanupTimeout bounds the undo of a failed Create, which runs even when
// the caller's ctx is done.
const cleanupTimeout = 30 * time.Second

// Create ensures the workspace volume and creates a hardened container for
// spec; it does not start it.
//
// The image is checked first, so a missing image (image_not_found) leaves
// nothing behind, not even a volume. A later failure removes the container
// and socket directory this call made, and the workspace volume too when
// this call created it (it is still empty then); a volume that existed
// before is never removed here.
func (p *Provider) Create(ctx context.Context, spec provider.Spec) (_ provider.Handle, retErr error) {
	if err := p.validateSpec(&spec); err != nil {
		return provider.Handle{}, err
	}
	if err := p.prepareMachine(ctx); err != nil {
		return provider.Handle{}, err
	}
	if err := p.checkRuntime(ctx); err != nil {
		return provider.Handle{}, err
	}
	if err := p.ensureImage(ctx, spec.Image); err != nil {
		return provider.Handle{}, err
	}
	if err := p.checkSnapshotOwner(ctx, spec); err != nil {
		return provider.Handle{}, err
	}
	if err := p.checkWritableRoot(ctx, spec); err != nil {
		return provider.Handle{}, err
	}

	var undo []func(context.Context)
	defer func() {
		if retErr == nil {
			return
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		for _, u := range slices.Backward(undo) {
			u(cctx)
		}
	}()

	// From mounting the disk until the container holds it, no release may
	// unmount it (see diskLocks).
	unlockDisk := p.lockDisk(spec.Workspace)
	defer unlockDisk()
	undoVolume, err := p.workspaceVolume(ctx, spec)
	if err != nil {
		return provider.Handle{}, err
	}
	undo = append(undo, undoVolume)

	key, err := agentauth.NewKey()
	if err != nil {
		return provider.Handle{}, err
	}
	sockDir, err := p.makeSocketDir(ctx)
	if err != nil {
		return provider.Handle{}, err
	}
	undo = append(undo, func(context.Context) { p.removeSocketDir(ctx, sockDir) })

	cfg, hostCfg, err := p.containerConfig(spec, sockDir)
	if err != nil {
		return provider.Handle{}, errdefs.FailedPrecondition("run_dir_unusable", "the sandbox's configuration files cannot be written").WithCause(err)
	}
	name := containerName(spec.SandboxID)
	if p.afterDiskMount != nil {
		p.afterDiskMount()
	}
	resp, err := p.cli.ContainerCreate(ctx, cfg, hostCfg, groupEndpoint(spec), nil, name)
	unlockDisk()
	if err != nil {
		return provider.Handle{}, containerCreateErr(spec, err)
	}
	undo = append(undo, func(ctx context.Context) {
		if err := p.cli.ContainerRemove(ctx, resp.ID, container.RemoveOptions{Force: true}); err != nil && !cerrdefs.IsNotFound(err) {
			p.logger.WarnContext(ctx, "removing a container after a failed create", "container", resp.ID, "err", err)
		}
	})
	for _, w := range resp.Warnings {
		p.logger.DebugContext(ctx, "container create warning", "container", resp.ID, "warning", w)
	}
	if err := ctx.Err(); err != nil { // the caller gave up; do not leave a container it does not know of
		return provider.Handle{}, fmt.Errorf("create: %w", err)
	}
	p.logger.DebugContext(ctx, "sandbox created", "sandbox", spec.SandboxID, "container", resp.ID)
	st := handleState{V: stateVersion, Container: resp.ID, Name: name, SocketDir: sockDir, Workspace: spec.Workspace, Key: agentauth.EncodeKey(key), Trust: string(spec.TrustedCA)}
	return provider.Handle{Provider: p.Name(), ID: resp.ID, State: st.encode()}, nil
}

// workspaceVolume makes spec's workspace volume, or mounts the disk of the
// one there, and returns how to undo that after a failed create: remove
// the volume it made, or release the disk it mounted (unmounted unless
// another sandbox holds it).
func (p *Provider) workspaceVolume(ctx context.Context, spec provider.Spec) (undo func(context.Context), err error) {
	created, err := p.ensureVolume(ctx, spec)
	if err != nil {
		return nil, err
	}
	if !created {
		return func(ctx context.Context) { p.releaseDisk(ctx, spec.Workspace) }, nil
	}
	return func(ctx context.Context) {
		if err := p.cli.VolumeRemove(ctx, spec.Workspace, false); err != nil && !cerrdefs.IsNotFound(err) {
			p.logger.WarnContext(ctx, "removing a workspace volume after a failed create", "volume", spec.Workspace, "err", err)
			return
		}
		p.removeDisk(ctx, spec.Workspace)
	}, nil
}

// makeSocketDir makes a sandbox's run directory, where its agent socket
// will be, under the run dir. Its name is random, not derived from the
// sandbox's id: a sandbox that learns where run directories live still
// cannot name another sandbox's.
func (p *Provider) makeSocketDir(ctx context.Context) (string, error) {
	dirID := make([]byte, runDirIDLen/2)
	if _, err := rand.Read(dirID); err != nil {
		return "", fmt.Errorf("run directory name: %w", err)
	}
	sockDir := filepath.Join(p.cfg.RunDir, hex.EncodeToString(dirID))
	if err := p.machine.mkdir(ctx, sockDir); err != nil {
		return "", errdefs.FailedPrecondition("run_dir_unusable", "the sandbox's socket directory cannot be created").WithCause(err)
	}
	return sockDir, nil
}

// containerCreateErr is the error for the engine's refusal err to create
// spec's container.
func containerCreateErr(spec provider.Spec, err error) error {
	if cerrdefs.IsConflict(err) || cerrdefs.IsAlreadyExists(err) {
		return errdefs.Conflict(CodeSandboxExists, "a sandbox with id %q already exists", spec.SandboxID).WithCause(err)
	}
	if cerrdefs.IsNotFound(err) { // the image went away since we looked
		return imageNotFound(spec.Image, err)
	}
	return engineErr("create", err)
}

// containerConfig builds the hardened container for spec.
func (p *Provider) containerConfig(spec provider.Spec, sockDir string) (*container.Config, *container.HostConfig, error) {
	pids, mem, cpu, tmp, shm := p.limits(spec.Resources)
	user := sandboxUser(spec)
	envList := containerEnv(spec, user)

	entry := []string{shimTarget, "serve", "--socket", agentSocket, "--key-file", keyTarget, "--user", user}
	if len(spec.TrustedCA) > 0 {
		entry = append(entry, "--trust", trustTarget)
	}
	noInit := false
	cfg := &container.Config{
		Image:      spec.Image,
		Entrypoint: entry,
		Cmd:        []string{},
		WorkingDir: provider.WorkspacePath,
		Env:        envList,
		Labels:     p.labels(spec),
	}
	netMode := p.networkMode(spec.Network)
	if spec.Group != "" {
		netMode = groupNetwork(spec.Group)
		cfg.Hostname = spec.GroupName
	}
	hostCfg := &container.HostConfig{
		NetworkMode:    container.NetworkMode(netMode),
		CapDrop:        []string{"ALL"},
		CapAdd:         agentCaps,
		SecurityOpt:    []string{"no-new-privileges"},
		ReadonlyRootfs: !spec.WritableRoot,
		IpcMode:        container.IPCModePrivate,
		Init:           &noInit, // paddock-shim is PID 1
		Runtime:        p.cfg.Runtime,
		// Only the agent's own log reaches the engine (processes it starts
		// write to pipes), and that log lives on the host's disk: bound it.
		LogConfig: container.LogConfig{Type: "json-file", Config: map[string]string{"max-size": "1m", "max-file": "2"}},
		// The engine's /dev/shm is 64 MiB whatever the memory limit.
		ShmSize: shm << 20,
		Tmpfs: map[string]string{
			// exec is allowed: agents build and run things in /tmp.
			"/tmp": fmt.Sprintf("rw,exec,nosuid,nodev,mode=1777,size=%dm", tmp),
		},
		Resources: container.Resources{
			Memory:     mem << 20,
			MemorySwap: mem << 20, // equal to Memory: no swap beyond it
			NanoCPUs:   cpu * 1_000_000,
			PidsLimit:  &pids,
		},
		Mounts: []mount.Mount{
			// The engine copies nothing of the image's directory into the
			// volume (it would give its owner to the volume's root, which
			// ownWorkspace set).
			{Type: mount.TypeVolume, Source: spec.Workspace, Target: provider.WorkspacePath, VolumeOptions: &mount.VolumeOptions{NoCopy: true}},
			// The user's home is the workspace too: it persists, and the
			// image need not have it.
			{Type: mount.TypeVolume, Source: spec.Workspace, Target: provider.UserHome, VolumeOptions: &mount.VolumeOptions{NoCopy: true}},
			{Type: mount.TypeBind, Source: p.cfg.shimSource, Target: shimTarget, ReadOnly: true},
			{Type: mount.TypeBind, Source: sockDir, Target: runTarget},
		},
	}
	if m, ok, err := p.resolvConfMount(spec.Network); err != nil {
		return nil, nil, err
	} else if ok {
		hostCfg.Mounts = append(hostCfg.Mounts, m)
	}
	if spec.WritableRoot {
		hostCfg.CapAdd = append(slices.Clip(agentCaps), writableRootCaps...)
		if p.rootQuota.Load() {
			// The writable layer counts against the same quota as the
			// workspace: writes past it fail with ENOSPC.
			hostCfg.StorageOpt = map[string]string{"size": fmt.Sprintf("%dM", diskMB(spec.Resources.DiskMB))}
		}
	}
	return cfg, hostCfg, nil
}

// limits are the container's limits for r, the provider's defaults where
// r has none: processes (the agent's threads on top; more under gVisor,
// whose own threads count), memory in MiB, CPU in millicores, and the
// sizes in MiB of /tmp and /dev/shm, which share a part of the memory.
func (p *Provider) limits(r provider.Resources) (pids, memMB, cpuMillis, tmpMB, shmMB int64) {
	pids = r.PidsLimit
	if pids == 0 {
		pids = DefaultPidsLimit
	}
	if p.gvisor() {
		pids = GVisorPidsLimit(pids)
	} else {
		pids += agentpb.AgentThreads
	}
	memMB = r.MemoryMB
	if memMB == 0 {
		memMB = DefaultMemoryMB
	}
	cpuMillis = r.CPUMillis
	if cpuMillis == 0 {
		cpuMillis = DefaultCPUMillis
	}
	tmpMB = r.TmpMB
	if tmpMB == 0 {
		tmpMB = DefaultTmpMB
	}
	shmMB = max(memMB/TmpMemoryDivisor, 1)
	return pids, memMB, cpuMillis, min(tmpMB, shmMB), shmMB
}

// containerEnv is the container's environment, sorted: user's HOME, then
// spec's.
func containerEnv(spec provider.Spec, user string) []string {
	env := map[string]string{"HOME": userHomes[user]}
	maps.Copy(env, spec.Env)
	envList := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		envList = append(envList, k+"="+env[k])
	}
	return envList
}

// CodeWritableRootUnbounded refuses a writable root the engine cannot
// bound.
const CodeWritableRootUnbounded = "writable_root_unbounded"

// checkWritableRoot refuses a writable root whose writes nothing would
// bound, unless the operator allowed that: nothing in a sandbox may write
// to host storage outside its quota.
func (p *Provider) checkWritableRoot(ctx context.Context, spec provider.Spec) error {
	if !spec.WritableRoot || p.cfg.WritableRootUnbounded {
		return nil
	}
	if _, err := p.Capacity(ctx); err != nil { // learns whether the engine can bound it
		return err
	}
	if !p.rootQuota.Load() {
		return errdefs.FailedPrecondition(CodeWritableRootUnbounded,
			"this Docker engine cannot bound a writable root's size (overlay2 over xfs with project quotas can); its operator may allow unbounded writable roots (--writable-root-unbounded)")
	}
	return nil
}

// writableRootCaps are the capabilities a sandbox with a writable root
// gets back, the fewest with which apt-get and dpkg install packages as
// its root user: CHOWN and FOWNER to give unpacked files their owners and
// modes, DAC_OVERRIDE to write where packages' files are not root's. The
// default image tells apt not to drop to its _apt user, which would need
// SETUID and SETGID. no-new-privileges still holds, so no setuid binary
// gains anything.
var writableRootCaps = []string{"CHOWN", "DAC_OVERRIDE", "FOWNER"}

// agentCaps are the capabilities every sandbox keeps, for its agent only:
// it starts processes as the sandbox's user or as root, and signals them
// (KILL: the user's processes are not root's). A process started as the
// user has no capabilities (the uid change clears them); one started as
// root is forked without these three (internal/shim, dropAgentCaps), so it
// has root's others: none, or writableRootCaps.
var agentCaps = []string{"SETUID", "SETGID", "KILL"}

// userHomes are the homes of the sandbox's accounts.
var userHomes = map[string]string{provider.UserDefault: provider.UserHome, provider.UserRoot: "/root"}

// sandboxUser is the account spec's processes run as.
func sandboxUser(spec provider.Spec) string {
	if spec.User == "" {
		return provider.UserDefault
	}
	return spec.User
}

// ownWorkspace gives the root of a workspace's filesystem to the account
// the sandbox runs as, so that it may write there; what is inside keeps its
// owners.
func (p *Provider) ownWorkspace(ctx context.Context, spec provider.Spec) error {
	id := 0
	if sandboxUser(spec) == provider.UserDefault {
		id = provider.UserUID
	}
	_, mnt := p.diskPaths(spec.Workspace)
	if err := p.machine.lchown(ctx, mnt, id, id); err != nil {
		return diskErr("give the workspace to its user", err)
	}
	return nil
}

// labels returns the container's labels: spec.Labels, then the standard
// ones, which a spec cannot override.
func (p *Provider) labels(spec provider.Spec) map[string]string {
	return provider.StandardLabels(spec, p.Name())
}

// checkSnapshotOwner refuses to start one runtime from another's snapshot:
// a snapshot image may only back the runtime named on it.
func (p *Provider) checkSnapshotOwner(ctx context.Context, spec provider.Spec) error {
	if !p.IsSnapshot(spec.Image) {
		return nil
	}
	img, err := p.cli.ImageInspect(ctx, spec.Image)
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return imageNotFound(spec.Image, err)
		}
		return engineErr("inspect the image of", err)
	}
	var owner string
	if img.Config != nil {
		owner = img.Config.Labels[provider.LabelRuntime]
	}
	if spec.RuntimeID == "" || owner != spec.RuntimeID {
		return errdefs.FailedPrecondition(CodeImageNotAllowed, "image %q is a snapshot of another runtime", spec.Image)
	}
	return nil
}

// ensureImage checks that the image is present, pulling it when the
// provider is configured to. A missing image is a failed precondition with
// code image_not_found.
func (p *Provider) ensureImage(ctx context.Context, ref string) error {
	_, err := p.cli.ImageInspect(ctx, ref)
	if err == nil {
		return nil
	}
	if !cerrdefs.IsNotFound(err) {
		return engineErr("inspect the image of", err)
	}
	if !p.pullable(ref) {
		return imageNotFound(ref, err)
	}
	p.logger.InfoContext(ctx, "pulling image", "image", ref)
	if err := p.pull(ctx, ref); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return imageNotFound(ref, err)
	}
	return nil
}

func (p *Provider) pull(ctx context.Context, ref string) error {
	rc, err := p.cli.ImagePull(ctx, ref, image.PullOptions{})
	if err != nil {
		return err
	}
	defer rc.Close()
	// The stream reports failures as messages, not as an HTTP status.
	dec := json.NewDecoder(rc)
	for {
		var msg struct {
			Error string `json:"error"`
		}
		if err := dec.Decode(&msg); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return fmt.Errorf("reading the pull stream: %w", err)
		}
		if msg.Error != "" {
			return fmt.Errorf("pull %s: %s", ref, msg.Error)
		}
	}
	_, err = p.cli.ImageInspect(ctx, ref)
	return err
}

func imageNotFound(ref string, cause error) error {
	return errdefs.FailedPrecondition(CodeImageNotFound, "image %q is not available on this host", ref).WithCause(cause)
}

// ensureVolume makes sure the workspace volume exists, is paddock's, and
// has its quota's filesystem mounted (see quota.go). It reports whether
// this call created it.
func (p *Provider) ensureVolume(ctx context.Context, spec provider.Spec) (bool, error) {
	v, err := p.cli.VolumeInspect(ctx, spec.Workspace)
	switch {
	case err == nil:
		// Never mount a volume paddock does not manage into a sandbox.
		if v.Labels[provider.LabelManaged] != "true" {
			return false, errdefs.FailedPrecondition(CodeWorkspaceForeign, "volume %q exists and is not a paddock workspace", spec.Workspace)
		}
		if v.Labels[LabelDiskMB] == "" {
			// Made before quotas: it lives on the engine's disk, unbounded.
			p.logger.WarnContext(ctx, "workspace volume has no disk quota; reset with wipe_workspace to give it one", "volume", spec.Workspace)
			return false, nil
		}
		if err := p.mountDisk(ctx, spec.Workspace); err != nil {
			return false, err
		}
		return false, p.ownWorkspace(ctx, spec)
	case !cerrdefs.IsNotFound(err):
		return false, engineErr("inspect the workspace of", err)
	}
	owner := spec.RuntimeID
	if owner == "" {
		owner = spec.SandboxID
	}
	size := diskMB(spec.Resources.DiskMB)
	if err := p.makeDisk(ctx, spec.Workspace, size); err != nil {
		return false, err
	}
	if err := p.ownWorkspace(ctx, spec); err != nil {
		p.removeDisk(context.WithoutCancel(ctx), spec.Workspace)
		return false, err
	}
	_, mnt := p.diskPaths(spec.Workspace)
	_, err = p.cli.VolumeCreate(ctx, volume.CreateOptions{
		Name:       spec.Workspace,
		Driver:     "local",
		DriverOpts: map[string]string{"type": "none", "o": "bind", "device": mnt},
		Labels: map[string]string{
			provider.LabelManaged:   "true",
			provider.LabelInstance:  spec.Instance,
			provider.LabelWorkspace: owner,
			LabelDiskMB:             formatMB(size),
		},
	})
	if err != nil {
		p.removeDisk(context.WithoutCancel(ctx), spec.Workspace)
		return false, engineErr("create the workspace of", err)
	}
	return true, nil
}
