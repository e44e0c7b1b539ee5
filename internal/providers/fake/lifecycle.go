package fake

import (
	"cmp"
	"context"
	"encoding/json"
	"net"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

// Codes, the same as the Docker provider's.
const (
	CodeImageNotFound       = "image_not_found"
	CodeImageNotAllowed     = "image_not_allowed"
	CodeSandboxNotFound     = "sandbox_not_found"
	CodeSandboxExists       = "sandbox_exists"
	CodeSandboxNotRunning   = "sandbox_not_running"
	CodeSandboxPaused       = "sandbox_paused"
	CodeAgentUnavailable    = "agent_unavailable"
	CodeAgentNotImplemented = "agent_not_implemented"
	CodeInvalidSpec         = provider.CodeInvalidSpec
	CodeInvalidHandle       = "invalid_handle"
	CodeNetworkNotSupported = provider.CodeNetworkNotSupported
	CodeWorkspaceInUse      = "workspace_in_use"
	CodePauseNotSupported   = "pause_not_supported"
	CodeSnapshotUnsupported = "snapshot_not_supported"
)

const stateVersion = 1

type handleState struct {
	V  int    `json:"v"`
	ID string `json:"id"`
}

// Create records new compute, stopped, and its workspace.
func (p *Provider) Create(ctx context.Context, spec provider.Spec) (provider.Handle, error) {
	if err := p.enter(ctx, OpCreate); err != nil {
		return provider.Handle{}, err
	}
	if err := p.validateSpec(&spec); err != nil {
		return provider.Handle{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.hasImage(spec.Image) {
		return provider.Handle{}, errdefs.FailedPrecondition(CodeImageNotFound, "image %q is not available on this host", spec.Image)
	}
	if s, ok := p.snapshots[spec.Image]; ok && (spec.RuntimeID == "" || s.Labels[provider.LabelRuntime] != spec.RuntimeID) {
		return provider.Handle{}, errdefs.FailedPrecondition(CodeImageNotAllowed, "image %q is a snapshot of another runtime", spec.Image)
	}
	for _, c := range p.compute {
		if c.Spec.SandboxID == spec.SandboxID {
			return provider.Handle{}, errdefs.Conflict(CodeSandboxExists, "a sandbox with id %q already exists", spec.SandboxID)
		}
	}
	if _, ok := p.workspaces[spec.Workspace]; !ok {
		owner := cmp.Or(spec.RuntimeID, spec.SandboxID)
		p.workspaces[spec.Workspace] = map[string]string{
			provider.LabelManaged:   "true",
			provider.LabelInstance:  spec.Instance,
			provider.LabelWorkspace: owner,
		}
	}
	id := "fake-" + uuid.NewString()
	state, _ := json.Marshal(handleState{V: stateVersion, ID: id})
	p.seq++
	c := &compute{seq: p.seq, Compute: Compute{
		Handle:    provider.Handle{Provider: p.cfg.Name, ID: id, State: state},
		Spec:      cloneSpec(spec),
		Labels:    provider.StandardLabels(spec, p.Name()),
		Status:    provider.Status{State: provider.StateStopped},
		CreatedAt: p.cfg.Now(),
	}}
	p.compute[id] = c
	return c.Handle, nil
}

// Start runs stopped compute. Starting running compute does nothing;
// starting paused compute is a failed precondition.
func (p *Provider) Start(ctx context.Context, h provider.Handle) error {
	return p.update(ctx, OpStart, h, func(c *compute) error {
		switch c.Status.State {
		case provider.StatePaused:
			return errdefs.FailedPrecondition(CodeSandboxPaused, "the sandbox is paused; resume it instead")
		case provider.StateStopped:
			c.Status = provider.Status{State: provider.StateRunning, StartedAt: p.cfg.Now()}
		}
		return nil
	})
}

// Pause suspends running compute. Pausing paused compute does nothing;
// pausing stopped compute is a failed precondition.
func (p *Provider) Pause(ctx context.Context, h provider.Handle) error {
	if p.cfg.NoPause {
		return errdefs.NotImplemented(CodePauseNotSupported, "provider %q cannot pause compute", p.Name())
	}
	return p.update(ctx, OpPause, h, func(c *compute) error {
		switch c.Status.State {
		case provider.StateStopped:
			return errdefs.FailedPrecondition(CodeSandboxNotRunning, "the sandbox is not running")
		case provider.StateRunning:
			c.Status.State = provider.StatePaused
		}
		return nil
	})
}

// Resume continues paused compute. Resuming running compute does nothing;
// resuming stopped compute is a failed precondition.
func (p *Provider) Resume(ctx context.Context, h provider.Handle) error {
	if p.cfg.NoPause {
		return errdefs.NotImplemented(CodePauseNotSupported, "provider %q cannot pause compute", p.Name())
	}
	return p.update(ctx, OpResume, h, func(c *compute) error {
		switch c.Status.State {
		case provider.StateStopped:
			return errdefs.FailedPrecondition(CodeSandboxNotRunning, "the sandbox is not running")
		case provider.StatePaused:
			c.Status.State = provider.StateRunning
		}
		return nil
	})
}

// Destroy forgets the compute; its workspace stays. Destroying compute that
// does not exist is not an error.
func (p *Provider) Destroy(ctx context.Context, h provider.Handle) error {
	if err := p.enter(ctx, OpDestroy); err != nil {
		return err
	}
	if err := p.checkHandle(h); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.compute, h.ID)
	return nil
}

// Inspect reports the compute's status; compute that does not exist is not
// found.
func (p *Provider) Inspect(ctx context.Context, h provider.Handle) (provider.Status, error) {
	var st provider.Status
	err := p.update(ctx, OpInspect, h, func(c *compute) error {
		st = c.Status
		return nil
	})
	return st, err
}

// DialAgent dials through Config.Agent; without it the agent is not
// implemented. Compute that is neither running nor paused is unavailable.
func (p *Provider) DialAgent(ctx context.Context, h provider.Handle) (net.Conn, error) {
	err := p.update(ctx, OpDial, h, func(c *compute) error {
		if p.cfg.Agent == nil {
			return errdefs.NotImplemented(CodeAgentNotImplemented, "the fake provider has no agent")
		}
		if c.Status.State == provider.StateStopped {
			return errdefs.Unavailable(CodeAgentUnavailable, "the sandbox is not running")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return p.cfg.Agent(ctx, h.ID)
}

// List returns the compute labelled with instance, oldest first.
func (p *Provider) List(ctx context.Context, instance string) ([]provider.Listed, error) {
	if err := p.enter(ctx, OpList); err != nil {
		return nil, err
	}
	if instance == "" {
		return nil, errdefs.InvalidArgument("instance_required", "an installation id (instance) is required")
	}
	var out []provider.Listed
	for _, c := range p.Live() {
		if c.Labels[provider.LabelInstance] == instance {
			out = append(out, provider.Listed{Handle: c.Handle, Labels: c.Labels, Status: c.Status})
		}
	}
	return out, nil
}

// RemoveWorkspace forgets a workspace. One that does not exist is not an
// error; one that live compute uses is a conflict.
func (p *Provider) RemoveWorkspace(ctx context.Context, name string) error {
	if err := p.enter(ctx, OpRemoveWorkspace); err != nil {
		return err
	}
	if !validName(name, 255) || len(name) < 2 {
		return errdefs.InvalidArgument(CodeInvalidSpec, "workspace volume name %q is not valid", name)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.compute {
		if c.Spec.Workspace == name {
			return errdefs.Conflict(CodeWorkspaceInUse, "workspace %q is still used by a sandbox", name)
		}
	}
	delete(p.workspaces, name)
	return nil
}

// update runs f on the compute h names, under the lock.
func (p *Provider) update(ctx context.Context, op string, h provider.Handle, f func(*compute) error) error {
	if err := p.enter(ctx, op); err != nil {
		return err
	}
	if err := p.checkHandle(h); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.compute[h.ID]
	if !ok {
		return errdefs.NotFound(CodeSandboxNotFound, "the sandbox's compute does not exist")
	}
	return f(c)
}

// checkHandle rejects handles that are not this provider's.
func (p *Provider) checkHandle(h provider.Handle) error {
	if h.Provider != "" && h.Provider != p.cfg.Name {
		return errdefs.InvalidArgument(CodeInvalidHandle, "the handle belongs to provider %q, not %q", h.Provider, p.cfg.Name)
	}
	if h.ID == "" {
		return errdefs.InvalidArgument(CodeInvalidHandle, "the handle has no id")
	}
	if len(h.State) > 0 {
		var st handleState
		if err := json.Unmarshal(h.State, &st); err != nil {
			return errdefs.InvalidArgument(CodeInvalidHandle, "the handle's state cannot be read").WithCause(err)
		}
		if st.V != stateVersion || (st.ID != "" && st.ID != h.ID) {
			return errdefs.InvalidArgument(CodeInvalidHandle, "the handle's state is not valid")
		}
	}
	return nil
}
