package runtime

import (
	"context"
	"reflect"
	"slices"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/sidecar"
	"github.com/paddockhq/paddock/internal/store"
)

// Patch changes some of a runtime's settings; nil fields stay as they are.
// The provider and the disk quota are fixed when the runtime is created.
type Patch struct {
	Image               *string
	CPUMillis           *int64
	MemoryMB            *int64
	PidsLimit           *int64
	NetworkMode         *string
	Allow, Deny         *[]string // each replaces the runtime's list
	IdleTimeoutSeconds  *int64
	MaxLifetimeSeconds  *int64
	ArchiveAfterSeconds *int64
	Secrets             *[]string
	RootFS              *string
	User                *string
	// Sidecars replaces the sidecar capabilities (already parsed).
	Sidecars *[]string
	// Harness and Model are what a prompt runs when it names none; ""
	// is the default again.
	Harness, Model *string
}

// Change says when a configuration change takes effect: Live settings
// apply to the runtime's current sandbox now (or there is none); NextStart
// settings apply to the next sandbox the runtime starts. Both name the
// settings that changed, as the API spells them.
type Change struct {
	Live      []string
	NextStart []string
}

// liveSettings take effect at once, with or without a sandbox: the egress
// proxy reads the rules at every request, and the lifecycle reads its
// timeouts at every tick.
var liveSettings = []string{"network.allow", "network.deny", "idle_timeout_seconds", "max_lifetime_seconds", "archive_after_seconds", "harness", "model"}

// Configure applies patch to a runtime's configuration, validated as at
// creation. It answers which settings apply now and which at the next
// start.
func (s *Service) Configure(ctx context.Context, runtimeID string, patch Patch) (store.Runtime, Change, error) {
	// At creation 0 means "the default"; a patch that names a setting
	// must give it a value.
	for _, v := range []struct {
		name, code string
		p          *int64
	}{
		{"cpu_millis", "invalid_resources", patch.CPUMillis},
		{"memory_mb", "invalid_resources", patch.MemoryMB},
		{"pids_limit", "invalid_resources", patch.PidsLimit},
		{"idle_timeout_seconds", "invalid_idle_timeout", patch.IdleTimeoutSeconds},
	} {
		if v.p != nil && *v.p <= 0 {
			return store.Runtime{}, Change{}, errdefs.InvalidArgument(v.code, "%s must be positive", v.name)
		}
	}
	var change Change
	rt, err := onRuntime(ctx, s, runtimeID, func(ctx context.Context, rt store.Runtime) (store.Runtime, error) {
		next := patch.apply(rt.Config)
		// The image is checked against today's allow-list even when
		// unchanged by this patch: the resolved config must be valid as a
		// whole.
		resolved, err := s.resolveConfig(ctx, rt.OrgID, next)
		if err != nil {
			return rt, err
		}
		if err := checkRulesApply(resolved.Network.Mode, deref(patch.Allow), deref(patch.Deny)); err != nil {
			return rt, err
		}
		if err := s.checkOffered(ctx, resolved); err != nil {
			return rt, err
		}
		if resolved.Image != rt.Config.Image {
			if err := s.checkImagePresent(ctx, resolved); err != nil {
				return rt, err
			}
		}
		if err := s.checkSecretRefs(ctx, rt, resolved); err != nil {
			return rt, err
		}
		changed := changedSettings(rt.Config, resolved)
		if len(changed) == 0 {
			return rt, nil
		}
		for _, name := range changed {
			if rt.CurrentSandboxID == "" || slices.Contains(liveSettings, name) {
				change.Live = append(change.Live, name)
			} else {
				change.NextStart = append(change.NextStart, name)
			}
		}
		// Checked and classified on rt's config and sandbox: another
		// server's write that changed neither does not stop it.
		still := func(fresh store.Runtime) bool {
			return reflect.DeepEqual(fresh.Config, rt.Config) && (fresh.CurrentSandboxID == "") == (rt.CurrentSandboxID == "")
		}
		saved, err := writeRuntime(ctx, s.store, rt, still, func(rt store.Runtime) (store.Runtime, error) {
			return s.store.SetRuntimeConfig(ctx, rt.ID, rt.Version, resolved, s.now())
		})
		if err == nil {
			s.publishUpdated(ctx, saved)
		}
		return saved, err
	})
	return rt, change, err
}

// apply is c with the patch's settings, unresolved.
func (patch Patch) apply(c store.RuntimeConfig) store.RuntimeConfig {
	set(&c.Image, patch.Image)
	set(&c.CPUMillis, patch.CPUMillis)
	set(&c.MemoryMB, patch.MemoryMB)
	set(&c.PidsLimit, patch.PidsLimit)
	set(&c.Network.Mode, patch.NetworkMode)
	set(&c.Network.Allow, patch.Allow)
	set(&c.Network.Deny, patch.Deny)
	set(&c.IdleTimeoutSeconds, patch.IdleTimeoutSeconds)
	set(&c.MaxLifetimeSeconds, patch.MaxLifetimeSeconds)
	set(&c.ArchiveAfterSeconds, patch.ArchiveAfterSeconds)
	set(&c.Secrets, patch.Secrets)
	set(&c.RootFS, patch.RootFS)
	set(&c.User, patch.User)
	set(&c.Harness, patch.Harness)
	set(&c.Model, patch.Model)
	if patch.Sidecars != nil {
		if patch.Image == nil && sidecar.IsImage(c.Image) {
			c.Image = "" // chosen by the sidecars: chosen again
		}
		c.Sidecars = *patch.Sidecars
	}
	return c
}

// deref is *p, or the zero value for nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// changedSettings names the settings that differ between a and b.
func changedSettings(a, b store.RuntimeConfig) []string {
	var out []string
	add := func(name string, x, y any) {
		if !reflect.DeepEqual(x, y) {
			out = append(out, name)
		}
	}
	add("image", a.Image, b.Image)
	add("cpu_millis", a.CPUMillis, b.CPUMillis)
	add("memory_mb", a.MemoryMB, b.MemoryMB)
	add("pids_limit", a.PidsLimit, b.PidsLimit)
	add("network.mode", a.Network.Mode, b.Network.Mode)
	add("network.allow", normalRules(a.Network.Allow), normalRules(b.Network.Allow))
	add("network.deny", normalRules(a.Network.Deny), normalRules(b.Network.Deny))
	add("idle_timeout_seconds", a.IdleTimeoutSeconds, b.IdleTimeoutSeconds)
	add("max_lifetime_seconds", a.MaxLifetimeSeconds, b.MaxLifetimeSeconds)
	add("archive_after_seconds", a.ArchiveAfterSeconds, b.ArchiveAfterSeconds)
	add("secrets", normalRules(a.Secrets), normalRules(b.Secrets))
	add("capabilities_json", sidecar.JSON(a.Sidecars), sidecar.JSON(b.Sidecars))
	add("rootfs", a.RootFSMode(), b.RootFSMode())
	add("user", a.UserName(), b.UserName())
	add("harness", a.Harness, b.Harness)
	add("model", a.Model, b.Model)
	return out
}

// normalRules treats nil and empty alike.
func normalRules(r []string) []string {
	if len(r) == 0 {
		return nil
	}
	return r
}

// SecretResolver finds the secrets a runtime names (see internal/secrets).
type SecretResolver interface {
	Resolve(ctx context.Context, orgID, workspaceID string, refs []string) ([]store.Secret, error)
}

// Error codes of secret references.
const (
	CodeSecretNotFound           = "secret_not_found"
	CodeBrokeredSecretNeedsProxy = "brokered_secret_needs_proxy"
)

// resolveSecrets resolves the runtime's bound secrets and extra (by id or
// name) into secret ids, for a sandbox in network mode. A brokered secret
// needs the proxy mode: only the egress proxy can use it.
func (s *Service) resolveSecrets(ctx context.Context, rt store.Runtime, mode string, extra []string) ([]string, error) {
	refs := append(slices.Clone(rt.Config.Secrets), extra...)
	if len(refs) == 0 {
		return nil, nil
	}
	if s.secrets == nil {
		return nil, errdefs.NotFound(CodeSecretNotFound, "secret %q not found: this server keeps no secrets", refs[0])
	}
	found, err := s.secrets.Resolve(ctx, rt.OrgID, rt.WorkspaceID, refs)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(found))
	for _, sec := range found {
		if sec.Brokered && mode != string(provider.NetworkProxy) {
			return nil, errdefs.FailedPrecondition(CodeBrokeredSecretNeedsProxy,
				"secret %q is brokered: only the egress proxy can use it, so the runtime's network mode must be proxy (it is %s)", sec.Name, mode)
		}
		ids = append(ids, sec.ID)
	}
	return ids, nil
}

// checkSecretRefs checks a configuration's bound secrets as a start
// would.
func (s *Service) checkSecretRefs(ctx context.Context, rt store.Runtime, c store.RuntimeConfig) error {
	rt.Config = c
	_, err := s.resolveSecrets(ctx, rt, c.Network.Mode, nil)
	return err
}

// publishUpdated tells the subscribers that rt's configuration changed,
// with its current sandbox's row.
func (s *Service) publishUpdated(ctx context.Context, rt store.Runtime) {
	var sb store.Sandbox
	if cur, err := s.CurrentSandbox(ctx, rt); err == nil && cur != nil {
		sb = *cur
	}
	s.publish(Event{Kind: EventUpdated, Runtime: rt, Sandbox: sb})
}
