package world

import (
	"context"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
)

// conflict is the error for an action on w that its status refuses.
func conflict(w World, action string) error {
	return errdefs.Conflict(CodeConflict, "world %s is %s: it cannot be %s", w.ID, w.Status, action)
}

// Delete tears down a running or paused world of ws: every member's
// sandbox is killed (deleted) and its network removed; the world is kept,
// deleted, with its members' rows and their cost.
func (s *Service) Delete(ctx context.Context, ws store.Workspace, id string) (World, error) {
	defer s.lock(id)()
	w, err := s.Get(ctx, ws, id)
	if err != nil {
		return w, err
	}
	if w.Status != store.WorldRunning && w.Status != store.WorldPaused {
		return w, conflict(w, "deleted")
	}
	from := w.Status
	w.Runner = s.replica() // the delete is this replica's until it ends
	if ok, err := s.write(ctx, &w, store.WorldDeleting, from); err != nil || !ok {
		return w, firstErr(err, conflict(w, "deleted"))
	}
	if !s.teardown(ctx, w, runtime.KillDeleted) {
		return w, errdefs.Unavailable("world_teardown_failed", "part of world %s could not be removed; the next start of the server removes it", w.ID)
	}
	if _, err := s.write(ctx, &w, store.WorldDeleted, store.WorldDeleting); err != nil {
		return w, err
	}
	s.logger.InfoContext(ctx, "world deleted", "world", w.ID)
	return w, nil
}

// Pause suspends every member of a running world. If one cannot be
// paused, those paused are resumed and the world stays running.
func (s *Service) Pause(ctx context.Context, ws store.Workspace, id string) (World, error) {
	return s.move(ctx, ws, id, store.WorldRunning, store.WorldPaused, "paused",
		s.runtimes.PauseWorldSandbox, s.runtimes.ResumeWorldSandbox)
}

// Resume continues every member of a paused world. If one cannot be
// resumed, those resumed are paused again and the world stays paused.
func (s *Service) Resume(ctx context.Context, ws store.Workspace, id string) (World, error) {
	return s.move(ctx, ws, id, store.WorldPaused, store.WorldRunning, "resumed",
		s.runtimes.ResumeWorldSandbox, s.runtimes.PauseWorldSandbox)
}

// move applies do to every member of the world id, in status from, and
// records it in status to; a member that fails has undo applied to the
// members done.
func (s *Service) move(ctx context.Context, ws store.Workspace, id, from, to, verb string,
	do, undo func(context.Context, string) (store.Sandbox, error)) (World, error) {
	defer s.lock(id)()
	w, err := s.Get(ctx, ws, id)
	if err != nil {
		return w, err
	}
	if w.Status == to {
		return w, nil
	}
	if w.Status != from {
		return w, conflict(w, verb)
	}
	for i, m := range w.Spec.Members {
		if _, err := do(ctx, m.SandboxID); err != nil {
			for _, done := range w.Spec.Members[:i] {
				if _, uerr := undo(context.WithoutCancel(ctx), done.SandboxID); uerr != nil {
					s.logger.ErrorContext(ctx, "undoing a world's "+verb, "world", w.ID, "member", done.Name, "err", uerr)
				}
			}
			return w, err
		}
	}
	if ok, err := s.write(ctx, &w, to, from); err != nil || !ok {
		return w, firstErr(err, conflict(w, verb))
	}
	return w, nil
}

// Agent returns a client of the agent of member name of the running
// world id of ws, and the member's ledger row.
func (s *Service) Agent(ctx context.Context, ws store.Workspace, id, name string) (*agentconn.Client, store.Sandbox, error) {
	w, err := s.Get(ctx, ws, id)
	if err != nil {
		return nil, store.Sandbox{}, err
	}
	m, ok := w.Member(name)
	if !ok {
		return nil, store.Sandbox{}, errdefs.NotFound(CodeMemberNotFound, "world %s has no member %q", w.ID, name)
	}
	if w.Status != store.WorldRunning {
		return nil, store.Sandbox{}, conflict(w, "reached: resume it first")
	}
	sb, err := s.store.GetSandbox(ctx, m.SandboxID)
	if err != nil {
		return nil, sb, err
	}
	c, err := s.runtimes.WorldAgent(sb)
	return c, sb, err
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
