package runtime

import (
	"context"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// The machines an org brought (internal/host) are providers of that org
// only, registered as store.HostProviderPrefix + the host's id. A runtime
// of the org names one by the host's name (or by that registry name, as a
// stored configuration holds it); to any other org, and to the
// installation's own configurations, the names are unknown, as a name
// nothing has.

// providerFor is the registry name of the provider a runtime of orgID
// names: one of the installation's, or a machine of the org's.
func (s *Service) providerFor(ctx context.Context, orgID, name string) (string, error) {
	if owner, owned := s.providers.Owner(name); owned {
		if owner != "" && owner == orgID {
			return name, nil
		}
		return "", unknownProvider(name)
	}
	if _, err := s.providers.Get(name); err == nil {
		return name, nil
	}
	if orgID != "" {
		h, err := s.store.GetHostByName(ctx, orgID, name)
		switch {
		case err == nil:
			if _, err := s.providers.Get(h.ProviderName()); err != nil {
				return "", errdefs.Unavailable(CodeHostUnavailable, "the machine %q is registered but its provider could not be made at start (see the server's log); remove and add it again", name)
			}
			return h.ProviderName(), nil
		case !errdefs.IsNotFound(err):
			return "", err
		}
	}
	return "", unknownProvider(name)
}

// CodeHostUnavailable answers a machine of the org whose provider is not
// registered.
const CodeHostUnavailable = "host_unavailable"

func unknownProvider(name string) error {
	return errdefs.InvalidArgument("unknown_provider", "provider %q is not offered by this installation", name)
}

// ArchiveForTeardown archives a paused runtime now, whatever its
// archive_after, so that the machine it is on can be torn down (see
// internal/host); it reports whether it did. A runtime that is not
// paused, or whose root would lose its changes, is left as it is.
func (s *Service) ArchiveForTeardown(ctx context.Context, runtimeID string) (bool, error) {
	return onRuntime(ctx, s, runtimeID, func(ctx context.Context, rt store.Runtime) (bool, error) {
		if rt.Status != store.RuntimePaused || rt.CurrentSandboxID == "" {
			return false, nil
		}
		sb, err := s.store.GetSandbox(ctx, rt.CurrentSandboxID)
		if err != nil || sb.State != store.SandboxPaused {
			return false, err
		}
		p, err := s.providers.Get(sb.Provider)
		if err != nil {
			return false, err
		}
		if !canArchive(p, rt) {
			return false, nil
		}
		return true, s.archive(ctx, p, rt, sb)
	})
}
