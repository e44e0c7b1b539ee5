package runtime

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/sidecar"
	"github.com/paddockhq/paddock/internal/store"
)

// ConfigRequest is a requested runtime configuration; zero fields take the
// installation's defaults.
type ConfigRequest = store.RuntimeConfig

// Bounds of the lifecycle settings of a runtime.
const (
	maxLifetimeSeconds     = 30 * 24 * 60 * 60  // 30 days
	maxArchiveAfterSeconds = 365 * 24 * 60 * 60 // a year
	minDiskMB              = 64
)

// CodeImageNotAllowed refuses an image outside the installation's
// allow-list, or a snapshot named as an image.
const CodeImageNotAllowed = "image_not_allowed"

// CodeImageNotFound refuses an image the provider does not have and
// nothing is building.
const CodeImageNotFound = "image_not_found"

// CodeSidecarImageConflict refuses an image other than the one the
// runtime's sidecar capabilities choose.
const CodeSidecarImageConflict = "sidecar_image_conflict"

// resolveConfig fills defaults and validates req, a configuration of a
// runtime of orgID ("" for the installation's own, a warm pool's).
func (s *Service) resolveConfig(ctx context.Context, orgID string, req ConfigRequest) (store.RuntimeConfig, error) {
	d := s.defaults
	c := req
	if want := sidecar.Image(c.Sidecars); want != "" {
		// The sidecar capabilities choose the image: one named too must
		// be theirs.
		if c.Image != "" && c.Image != d.Image && c.Image != want {
			return c, errdefs.InvalidArgument(CodeSidecarImageConflict,
				"capabilities_json %s runs on the image %s, not %s; leave image out", sidecar.JSON(c.Sidecars), want, c.Image)
		}
		c.Image = want
	}
	if c.Image == "" {
		c.Image = d.Image
	}
	if c.Provider == "" {
		c.Provider = d.Provider
		if c.Provider == "" {
			c.Provider = s.providers.Default()
		}
	}
	var err error
	if c.Provider, err = s.providerFor(ctx, orgID, c.Provider); err != nil {
		return c, err
	}
	c = withDefaults(c, d)
	if err := checkBounds(c, d); err != nil {
		return c, err
	}
	c, err = checkDeclaredPorts(c)
	if err != nil {
		return c, err
	}
	if err := s.checkNetwork(c.Network); err != nil {
		return c, err
	}
	if !validImageRef(c.Image) {
		return c, errdefs.InvalidArgument("invalid_image", "image reference %q is not valid", c.Image)
	}
	if err := s.checkImage(ctx, orgID, c.Provider, c.Image); err != nil {
		return c, err
	}
	return c, checkAgent(c)
}

// withDefaults fills what c leaves out from the installation's defaults d.
func withDefaults(c store.RuntimeConfig, d Defaults) store.RuntimeConfig {
	if c.CPUMillis == 0 {
		c.CPUMillis = d.CPUMillis
	}
	if c.MemoryMB == 0 {
		c.MemoryMB = d.MemoryMB
	}
	if c.PidsLimit == 0 {
		c.PidsLimit = d.PidsLimit
	}
	if c.DiskMB == 0 {
		c.DiskMB = d.DiskMB
	}
	if c.Network.Mode == "" {
		c.Network.Mode = string(provider.NetworkNone)
	}
	if c.RootFS == "" {
		c.RootFS = store.RootFSReadOnly
	}
	if c.User == "" {
		c.User = store.UserDefault
	}
	if c.IdleTimeoutSeconds == 0 {
		c.IdleTimeoutSeconds = int64(d.IdleTimeout.Seconds())
	}
	return c
}

// checkBounds refuses settings outside what the installation allows.
func checkBounds(c store.RuntimeConfig, d Defaults) error {
	switch {
	case c.RootFS != store.RootFSReadOnly && c.RootFS != store.RootFSWritable:
		return errdefs.InvalidArgument("invalid_rootfs", "rootfs must be %q or %q, not %q", store.RootFSReadOnly, store.RootFSWritable, c.RootFS)
	case c.User != store.UserDefault && c.User != store.UserRoot:
		return errdefs.InvalidArgument("invalid_user", "user must be %q or %q, not %q", store.UserDefault, store.UserRoot, c.User)
	case len(c.Image) > 255:
		return errdefs.InvalidArgument("invalid_image", "image reference is longer than 255 characters")
	case c.CPUMillis < 100 || c.CPUMillis > d.MaxCPUMillis:
		return errdefs.InvalidArgument("invalid_resources", "%s cores is out of range: cpu must be between 0.1 and %s cores (cpu_millis 100 to %d)", cores(c.CPUMillis), cores(d.MaxCPUMillis), d.MaxCPUMillis)
	case c.MemoryMB < 32 || c.MemoryMB > d.MaxMemoryMB:
		return errdefs.InvalidArgument("invalid_resources", "memory_mb must be between 32 and %d", d.MaxMemoryMB)
	case c.PidsLimit < 16 || c.PidsLimit > 65536:
		return errdefs.InvalidArgument("invalid_resources", "pids_limit must be between 16 and 65536")
	case c.DiskMB < minDiskMB || c.DiskMB > d.MaxDiskMB:
		return errdefs.InvalidArgument("invalid_resources", "disk_mb must be between %d and %d", minDiskMB, d.MaxDiskMB)
	case c.IdleTimeoutSeconds < 10 || c.IdleTimeoutSeconds > int64(d.MaxKeepalive.Seconds()):
		return errdefs.InvalidArgument("invalid_idle_timeout", "idle_timeout_seconds must be between 10 and %d", int64(d.MaxKeepalive.Seconds()))
	case c.MaxLifetimeSeconds != 0 && (c.MaxLifetimeSeconds < 10 || c.MaxLifetimeSeconds > maxLifetimeSeconds):
		return errdefs.InvalidArgument("invalid_max_lifetime", "max_lifetime_seconds must be 0 (none) or between 10 and %d", maxLifetimeSeconds)
	case c.ArchiveAfterSeconds != 0 && (c.ArchiveAfterSeconds < 60 || c.ArchiveAfterSeconds > maxArchiveAfterSeconds):
		return errdefs.InvalidArgument("invalid_archive_after", "archive_after_seconds must be 0 (the installation default) or between 60 and %d", maxArchiveAfterSeconds)
	}
	return checkEnv(c.Env)
}

// Bounds of a runtime's default environment.
const (
	maxEnvVars  = 256
	maxEnvBytes = 64 << 10
)

// checkEnv refuses a default environment a process could not be given:
// names of letters, digits and '_' not starting with a digit, values
// without NUL, within bounds.
func checkEnv(env map[string]string) error {
	if len(env) > maxEnvVars {
		return errdefs.InvalidArgument("invalid_env", "at most %d environment variables", maxEnvVars)
	}
	size := 0
	for k, v := range env {
		size += len(k) + len(v)
		if !envNameRE.MatchString(k) || strings.IndexByte(v, 0) >= 0 {
			return errdefs.InvalidArgument("invalid_env", "environment variable %q is not valid: a name is letters, digits and '_', not starting with a digit, and a value has no NUL", k)
		}
	}
	if size > maxEnvBytes {
		return errdefs.InvalidArgument("invalid_env", "the environment is larger than %d bytes", maxEnvBytes)
	}
	return nil
}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checkImage refuses an image the installation does not allow, and any
// provider's snapshot: snapshots are internal, restored only by the
// runtime they were taken of.
func (s *Service) checkImage(ctx context.Context, orgID, providerName, image string) error {
	if p, err := s.providers.Get(providerName); err == nil {
		if snap, ok := p.(provider.Snapshotter); ok && snap.IsSnapshot(image) {
			return errdefs.InvalidArgument(CodeImageNotAllowed, "image %q is a snapshot; snapshots cannot be named as a runtime's image", image)
		}
	}
	if strings.HasPrefix(image, OrgImagePrefix) {
		return s.checkOrgImage(ctx, orgID, image)
	}
	if !imageAllowed(image, s.defaults.Image, s.defaults.AllowedImages) {
		return errdefs.InvalidArgument(CodeImageNotAllowed, "image %q is not on this installation's allow-list (ask its operator, or see --allowed-images)", image)
	}
	return nil
}

// checkImagePresent refuses an image the provider cannot run (it is not
// there and, for a provider that pulls, its registry has it not) and that
// is not being built, when a runtime is configured with it, rather than
// at every start. A provider that cannot tell is taken at its word.
func (s *Service) checkImagePresent(ctx context.Context, c store.RuntimeConfig) error {
	if images := s.imagesFor(c.Provider); images != nil && images.Expected(c.Image) {
		return nil
	}
	p, err := s.providers.Get(c.Provider)
	if err != nil {
		return err
	}
	ch, ok := p.(provider.ImageChecker)
	if !ok {
		return nil
	}
	err = ch.CheckImage(ctx, c.Image)
	switch {
	case errdefs.IsNotFound(err):
		return errdefs.InvalidArgument(CodeImageNotFound, "image %q is not on this host and is not being built (GET /api/images lists the images there and those being built)", c.Image).WithCause(err)
	case errors.Is(err, errdefs.ErrNotImplemented):
		return nil
	}
	return err
}

// Codes for a config the provider cannot offer.
const (
	CodeExceedsHost         = "exceeds_host_capacity"
	CodeNetworkNotSupported = "network_policy_not_supported"
)

// CodeRootFSNotSupported refuses a writable root a provider cannot give.
const CodeRootFSNotSupported = "rootfs_not_supported"

// checkRootFS refuses a writable root the provider cannot give within the
// disk quota (asked after the provider learnt its host).
func checkRootFS(p provider.Provider, c store.RuntimeConfig) error {
	caps := p.Capabilities()
	if c.RootFS == store.RootFSWritable && !caps.Pause && !caps.Snapshot {
		return errdefs.FailedPrecondition(CodeRootFSNotSupported,
			"provider %q can neither pause nor snapshot a sandbox, so a writable root would lose its changes whenever the runtime stops; keep the root read-only (the workspace is always kept)", p.Name())
	}
	if c.RootFS == store.RootFSWritable && !caps.WritableRoot {
		return errdefs.FailedPrecondition(CodeRootFSNotSupported,
			"provider %q cannot give this runtime a writable root within its disk quota (for Docker: overlay2 over xfs with project quotas, or the operator's --writable-root-unbounded)", p.Name())
	}
	return nil
}

// checkOffered refuses a config its provider cannot run: a network policy
// it does not offer, or more cores or memory than its host has. Caught here,
// it is a 422 when the runtime is configured, not an error at every start.
func (s *Service) checkOffered(ctx context.Context, c store.RuntimeConfig) error {
	p, err := s.providers.Get(c.Provider)
	if err != nil {
		return err
	}
	if !slices.Contains(p.Capabilities().Networks, provider.NetworkPolicy(c.Network.Mode)) {
		return errdefs.FailedPrecondition(CodeNetworkNotSupported, "provider %q does not offer network policy %q (it offers %v)", p.Name(), c.Network.Mode, p.Capabilities().Networks)
	}
	sz, ok := p.(provider.Sizer)
	if !ok {
		return checkRootFS(p, c)
	}
	host, err := sz.Capacity(ctx)
	if err != nil {
		return err
	}
	if err := checkRootFS(p, c); err != nil {
		return err
	}
	if host.CPUMillis > 0 && c.CPUMillis > host.CPUMillis {
		return errdefs.FailedPrecondition(CodeExceedsHost, "%s cores is more than the host has (%s; cpu_millis %d > %d)", cores(c.CPUMillis), cores(host.CPUMillis), c.CPUMillis, host.CPUMillis)
	}
	if host.MemoryMB > 0 && c.MemoryMB > host.MemoryMB {
		return errdefs.FailedPrecondition(CodeExceedsHost, "%d MiB of memory is more than the host has (%d MiB)", c.MemoryMB, host.MemoryMB)
	}
	return nil
}

// imageAllowed reports whether image is the default image or matches an
// allow-list entry: an exact reference, or a prefix ending in '*'.
func imageAllowed(image, def string, allowed []string) bool {
	if image == def {
		return true
	}
	for _, a := range allowed {
		if prefix, ok := strings.CutSuffix(a, "*"); ok {
			if prefix != "" && strings.HasPrefix(image, prefix) {
				return true
			}
		} else if image == a {
			return true
		}
	}
	return false
}

// validImageRef accepts the characters of a Docker image reference
// (name[:tag][@digest]) and nothing that could be read as a flag or path.
func validImageRef(s string) bool {
	if s == "" || s[0] == '-' || s[0] == '/' || s[0] == '.' {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case r == '.', r == '_', r == '-', r == '/', r == ':', r == '@':
		default:
			return false
		}
	}
	return true
}

// CreateProject creates a project and, in the same transaction, its one
// runtime in status idle. No compute is provisioned.
func (s *Service) CreateProject(ctx context.Context, ws store.Workspace, name, description string, req ConfigRequest) (store.Project, store.Runtime, error) {
	cfg, err := s.checkConfig(ctx, ws, req)
	if err != nil {
		return store.Project{}, store.Runtime{}, err
	}
	now := s.now()
	p := store.Project{
		ID:          newID(),
		OrgID:       ws.OrgID,
		WorkspaceID: ws.ID,
		Name:        name,
		Description: description,
		CreatedAt:   now,
	}
	rtID := newID()
	rt := store.Runtime{
		ID:              rtID,
		OrgID:           ws.OrgID,
		WorkspaceID:     ws.ID,
		ProjectID:       p.ID,
		Status:          store.RuntimeIdle,
		Config:          cfg,
		WorkspaceVolume: s.defaults.WorkspaceVolPrefix + rtID,
		CreatedAt:       now,
		UpdatedAt:       now,
	}
	err = s.store.InTx(ctx, func(q store.Queries) error {
		if err := q.CreateProject(ctx, p); err != nil {
			if errdefs.IsConflict(err) {
				return errdefs.Conflict("project_exists", "a project named %q already exists in this workspace", name).WithCause(err)
			}
			return err
		}
		return q.CreateRuntime(ctx, rt)
	})
	if err != nil {
		return store.Project{}, store.Runtime{}, err
	}
	rt, err = s.store.GetRuntime(ctx, rtID)
	if err == nil {
		s.publish(Event{Kind: EventCreated, Runtime: rt, At: now})
	}
	return p, rt, err
}

// DeleteProject releases the project's sandbox (its ledger row is killed
// with reason project_deleted and stays), deletes its workspace volume, then
// the runtime and the project.
func (s *Service) DeleteProject(ctx context.Context, p store.Project) error {
	rt, err := s.store.GetRuntimeByProject(ctx, p.ID)
	if err != nil && !errdefs.IsNotFound(err) {
		return err
	}
	if err == nil {
		unlock, err := s.lockRuntime(ctx, rt.ID)
		if err != nil {
			return err
		}
		defer unlock()
		ctx, cancel := s.detached(ctx)
		defer cancel()
		if rt, err = s.store.GetRuntime(ctx, rt.ID); err != nil {
			return err
		}
		if rt, err = s.release(ctx, rt, KillProjectDeleted, store.RuntimeIdle); err != nil {
			return err
		}
		if rt, err = s.dropSnapshot(ctx, rt); err != nil {
			return err
		}
		if err := s.removeWorkspace(ctx, rt); err != nil {
			return err
		}
		if err := s.store.DeleteRuntime(ctx, rt.ID); err != nil && !errdefs.IsNotFound(err) {
			return err
		}
		s.publish(Event{Kind: EventDeleted, Runtime: rt})
	}
	return s.store.DeleteProject(ctx, p.ID)
}

func (s *Service) removeWorkspace(ctx context.Context, rt store.Runtime) error {
	p, err := s.providers.Get(rt.Config.Provider)
	if err != nil {
		return err
	}
	wr, ok := p.(provider.WorkspaceRemover)
	if !ok {
		return nil // the provider keeps no volume outside its compute
	}
	if err := wr.RemoveWorkspace(ctx, rt.WorkspaceVolume); err != nil {
		return providerFailure("remove the workspace of", err)
	}
	return nil
}

// cores writes CPU millis as cores, the unit users give (--cpu 0.5).
func cores(millis int64) string {
	return strconv.FormatFloat(float64(millis)/1000, 'f', -1, 64)
}
