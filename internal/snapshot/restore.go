package snapshot

import (
	"context"
	"errors"
	"time"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/tenancy"
)

// RestoreInto replaces rt's workspace with snap's: a runtime with a
// sandbox is reset first (its processes end and its workspace volume is
// deleted), then started, its workspace emptied (an idle runtime keeps
// its volume) and filled from the artifact. rt keeps its own
// configuration. It returns rt running.
func (s *Service) RestoreInto(ctx context.Context, rt store.Runtime, snap store.Snapshot) (store.Runtime, error) {
	if snap.WorkspaceID != rt.WorkspaceID {
		return rt, errdefs.NotFound(CodeNotFound, "no snapshot %s in this workspace", snap.ID)
	}
	var err error
	if rt.Status != store.RuntimeIdle {
		if rt, err = s.runtimes.Reset(ctx, rt.ID, true); err != nil {
			return rt, err
		}
	}
	if rt, err = s.runtimes.Start(ctx, rt.ID, nil); err != nil {
		return rt, err
	}
	c, rt, err := s.runtimes.AgentOf(ctx, rt)
	if err != nil {
		return rt, err
	}
	return rt, s.copyIn(ctx, c, snap)
}

// RestoreAsProject creates project name in ws with snap's configuration
// (on providerName when not ""), starts its runtime and fills its
// workspace from snap. A failure deletes the project again. On another
// provider than the snapshot's, a configuration that provider refuses
// (its image, its root filesystem mode, a network policy it does not
// offer, more than its nodes have) is 422 snapshot_not_portable, naming
// the refusal.
func (s *Service) RestoreAsProject(ctx context.Context, ws store.Workspace, snap store.Snapshot, name, providerName string) (_ store.Project, _ store.Runtime, retErr error) {
	if snap.WorkspaceID != ws.ID {
		return store.Project{}, store.Runtime{}, errdefs.NotFound(CodeNotFound, "no snapshot %s in this workspace", snap.ID)
	}
	if err := tenancy.ValidName("project", name); err != nil {
		return store.Project{}, store.Runtime{}, err
	}
	cfg := snap.Config
	moved := providerName != "" && providerName != snap.Provider
	if moved {
		cfg.Provider = providerName
	}
	p, rt, err := s.runtimes.CreateProject(ctx, ws, name, "restored from snapshot "+snap.Name, cfg)
	if moved && (errors.Is(err, errdefs.ErrInvalidArgument) || errors.Is(err, errdefs.ErrFailedPrecondition)) {
		msg := errdefs.PublicMessage(err, "its configuration is refused there")
		return p, rt, errdefs.FailedPrecondition(CodeNotPortable, "snapshot %s (%s on %s) cannot be restored on provider %s: %s",
			snap.Name, snap.Image, snap.Provider, providerName, msg).WithCause(err)
	}
	if err != nil {
		return p, rt, err
	}
	defer func() {
		if retErr != nil {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
			defer cancel()
			if err := s.runtimes.DeleteProject(dctx, p); err != nil {
				s.logger.WarnContext(ctx, "deleting a project whose restore failed", "project", p.ID, "err", err)
			}
		}
	}()
	if rt, err = s.runtimes.Start(ctx, rt.ID, nil); err != nil {
		return p, rt, err
	}
	c, rt, err := s.runtimes.AgentOf(ctx, rt)
	if err != nil {
		return p, rt, err
	}
	return p, rt, s.copyIn(ctx, c, snap)
}

// FillWorkspace extracts the snapshot id of workspace wsID into the
// workspace of the sandbox whose agent is c (a task's): emptied first,
// as for a restore. A snapshot deleted since, or another workspace's, is
// not found.
func (s *Service) FillWorkspace(ctx context.Context, c *agentconn.Client, wsID, id string) error {
	snap, err := s.store.GetSnapshot(ctx, id)
	if errdefs.IsNotFound(err) || (err == nil && snap.WorkspaceID != wsID) {
		return errdefs.NotFound(CodeNotFound, "snapshot %s is gone from this workspace", id)
	}
	if err != nil {
		return err
	}
	return s.copyIn(ctx, c, snap)
}
