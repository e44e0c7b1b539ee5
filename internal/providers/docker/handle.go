package docker

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"

	"github.com/paddockhq/paddock/internal/agentauth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

// stateVersion is the version of handleState's encoding.
const stateVersion = 1

// handleState is the recovery state in a provider.Handle: enough for a
// restarted server to re-attach to a sandbox. Its encoding is versioned;
// decoders refuse versions they do not know.
type handleState struct {
	V         int    `json:"v"`
	Container string `json:"container"`
	Name      string `json:"name,omitempty"`
	SocketDir string `json:"socket_dir,omitempty"`
	// Key is the agent's key (hex; see internal/agentauth). Handles made
	// before keys existed have none: their agent is checked by its peer
	// credentials alone.
	Key string `json:"key,omitempty"`
	// Trust is the CA certificate (PEM) the sandbox trusts beside its
	// image's roots (provider.Spec.TrustedCA); "" for none.
	Trust string `json:"trust,omitempty"`
	// Workspace is the sandbox's workspace volume, whose disk Destroy
	// releases even when the container is already gone.
	Workspace string `json:"workspace,omitempty"`
}

// key returns the agent key, nil when the handle has none.
func (s handleState) key() ([]byte, error) {
	if s.Key == "" {
		return nil, nil
	}
	k, err := agentauth.DecodeKey(s.Key)
	if err != nil {
		return nil, errdefs.InvalidArgument(CodeInvalidHandle, "the handle's agent key cannot be read").WithCause(err)
	}
	return k, nil
}

func (s handleState) encode() []byte {
	b, err := json.Marshal(s)
	if err != nil { // a struct of strings always marshals
		panic(err)
	}
	return b
}

// decodeHandle checks h and returns its state. A handle without state
// (for example one built from a container id alone) is accepted; its
// socket directory is then found by inspecting the container. A handle
// naming another provider is refused, even another docker provider on the
// same engine: its compute runs under another runtime.
func (p *Provider) decodeHandle(h provider.Handle) (handleState, error) {
	if h.Provider != "" && h.Provider != p.Name() {
		return handleState{}, errdefs.InvalidArgument(CodeInvalidHandle, "the handle belongs to provider %q, not %q", h.Provider, p.Name())
	}
	if !isContainerID(h.ID) {
		return handleState{}, errdefs.InvalidArgument(CodeInvalidHandle, "the handle's id is not a container id")
	}
	if len(h.State) == 0 {
		return handleState{V: stateVersion, Container: h.ID}, nil
	}
	var st handleState
	if err := json.Unmarshal(h.State, &st); err != nil {
		return handleState{}, errdefs.InvalidArgument(CodeInvalidHandle, "the handle's state cannot be read").WithCause(err)
	}
	if st.V != stateVersion {
		return handleState{}, errdefs.InvalidArgument(CodeInvalidHandle, "the handle's state has version %d; this server reads version %d", st.V, stateVersion)
	}
	if st.Container != "" && st.Container != h.ID {
		return handleState{}, errdefs.InvalidArgument(CodeInvalidHandle, "the handle's state names another container")
	}
	st.Container = h.ID
	return st, nil
}

// isContainerID reports whether s is a full container id (64 lowercase hex
// digits). Only full ids are accepted, so a handle can never be read as a
// container name or an id prefix of someone else's container.
func isContainerID(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// lookup inspects a container and checks that paddock manages it, through
// this provider. A container that does not exist, is not paddock's, or was
// made by another provider on the same engine (see owns) is not found.
func (p *Provider) lookup(ctx context.Context, id string) (container.InspectResponse, error) {
	c, err := p.cli.ContainerInspect(ctx, id)
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return c, notFound(id, err)
		}
		return c, engineErr("inspect", err)
	}
	if c.ContainerJSONBase == nil || c.State == nil || c.Config == nil {
		return c, errdefs.Unavailable(CodeProviderError, "the Docker engine returned an incomplete container").WithCause(fmt.Errorf("inspect %s: missing state or config", id))
	}
	if c.Config.Labels[provider.LabelManaged] != "true" {
		return c, notFound(id, fmt.Errorf("container %s is not managed by paddock", id))
	}
	if !p.owns(c.Config.Labels) {
		return c, notFound(id, fmt.Errorf("container %s belongs to provider %q", id, c.Config.Labels[provider.LabelProvider]))
	}
	return c, nil
}

// socketDirOf returns the host directory holding the agent socket: from the
// handle's state, else from the container's mounts.
func socketDirOf(st handleState, c *container.InspectResponse) string {
	if st.SocketDir != "" {
		return st.SocketDir
	}
	if c == nil {
		return ""
	}
	for _, m := range c.Mounts {
		if m.Destination == runTarget {
			return m.Source
		}
	}
	return ""
}

// ownedSocketDir reports whether dir is a sandbox socket directory directly
// under this provider's RunDir, so it may be removed.
func (p *Provider) ownedSocketDir(dir string) bool {
	if dir == "" || !filepath.IsAbs(dir) {
		return false
	}
	dir = filepath.Clean(dir)
	return filepath.Dir(dir) == p.cfg.RunDir && filepath.Base(dir) != "." && filepath.Base(dir) != ".."
}

// statusOf maps a container's state to a provider.Status. Whether a
// running container is paused comes from the kernel's freezer (runsc
// under gVisor) when it can be read (see freezer.go), else from the
// engine's flag.
func (p *Provider) statusOf(s *container.State) provider.Status {
	if s == nil {
		return provider.Status{State: provider.StateStopped}
	}
	st := provider.Status{ExitCode: s.ExitCode, Error: s.Error}
	paused := s.Paused
	if s.Running {
		if f, ok := p.frozen(s.Pid); ok {
			paused = f
		}
	}
	switch {
	case paused:
		st.State = provider.StatePaused
	case s.Running || s.Restarting:
		st.State = provider.StateRunning
	default:
		st.State = provider.StateStopped
	}
	st.StartedAt = parseTime(s.StartedAt)
	return st
}
