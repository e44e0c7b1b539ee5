package providertest

import (
	"errors"
	"testing"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

// testSnapshot checks that a sandbox can be snapshotted while it runs and
// while it is paused without being disturbed, that a new sandbox starts from
// a snapshot, that removing a snapshot still in use untags it, and that
// removal is idempotent and refuses what is not a snapshot.
func (s *suite) testSnapshot(t *testing.T, p provider.Provider) {
	sn, ok := p.(provider.Snapshotter)
	switch {
	case !p.Capabilities().Snapshot && ok:
		h := s.create(t, p, s.spec(t, p))
		_, err := sn.Snapshot(s.ctx(t), h, nil)
		wantKind(t, "Snapshot without the capability", err, errdefs.ErrNotImplemented)
		return
	case !p.Capabilities().Snapshot:
		// Declared and offered alike: no snapshots, no Snapshotter.
		return
	case !ok:
		t.Fatal("Capabilities.Snapshot is set but the provider does not implement provider.Snapshotter")
	}
	labels := map[string]string{provider.LabelInstance: s.instance, "dev.paddock.test": "snapshot"}
	snapshot := func(what string, h provider.Handle) string {
		t.Helper()
		ref, err := sn.Snapshot(s.ctx(t), h, labels)
		must(t, what, err)
		if ref == "" {
			t.Fatalf("%s returned an empty reference", what)
		}
		s.removeSnapshotAtEnd(t, sn, ref)
		return ref
	}

	spec := s.spec(t, p)
	h := s.create(t, p, spec)
	must(t, "Start", p.Start(s.ctx(t), h))
	refs := []string{snapshot("Snapshot while running", h)}
	s.wantState(t, p, h, provider.StateRunning)
	if p.Capabilities().Pause {
		must(t, "Pause", p.Pause(s.ctx(t), h))
		paused := snapshot("Snapshot while paused", h)
		s.wantState(t, p, h, provider.StatePaused)
		if paused == refs[0] {
			t.Fatalf("two snapshots share the reference %q", paused)
		}
		refs = append(refs, paused)
	}

	from := refs[len(refs)-1]
	s.wantSnapshotInternal(t, p, sn, from, spec.Image)
	h2 := s.startFromSnapshot(t, p, from, spec.RuntimeID)

	// Removing a snapshot in use untags it: the sandbox runs on, and no new
	// sandbox can be created from it.
	must(t, "RemoveSnapshot while in use", sn.RemoveSnapshot(s.ctx(t), from))
	s.wantState(t, p, h2, provider.StateRunning)
	s.wantNoImage(t, p, from)

	must(t, "Destroy the sandbox started from a snapshot", p.Destroy(s.ctx(t), h2))
	must(t, "Destroy", p.Destroy(s.ctx(t), h))
	_, err := sn.Snapshot(s.ctx(t), h, labels)
	wantKind(t, "Snapshot after Destroy", err, errdefs.ErrNotFound)

	for _, ref := range refs {
		must(t, "RemoveSnapshot", sn.RemoveSnapshot(s.ctx(t), ref))
		must(t, "RemoveSnapshot twice", sn.RemoveSnapshot(s.ctx(t), ref))
		s.wantNoImage(t, p, ref)
	}
	_, err = sn.Snapshot(s.ctx(t), provider.Handle{}, labels)
	wantKind(t, "Snapshot of an empty handle", err, errdefs.ErrInvalidArgument)
	wantKind(t, "RemoveSnapshot of the sandbox image", sn.RemoveSnapshot(s.ctx(t), spec.Image), errdefs.ErrInvalidArgument)
	wantKind(t, "RemoveSnapshot of an empty reference", sn.RemoveSnapshot(s.ctx(t), ""), errdefs.ErrInvalidArgument)
}

// removeSnapshotAtEnd removes ref when the test ends, after the compute
// created later (cleanups run last-in first-out).
func (s *suite) removeSnapshotAtEnd(t *testing.T, sn provider.Snapshotter, ref string) {
	t.Cleanup(func() {
		ctx, cancel := s.cleanupCtx()
		defer cancel()
		if err := sn.RemoveSnapshot(ctx, ref); err != nil {
			t.Errorf("cleanup: RemoveSnapshot(%s): %v", ref, err)
		}
	})
}

// wantNoImage fails the test unless Create refuses image as missing (a
// failed precondition).
func (s *suite) wantNoImage(t *testing.T, p provider.Provider, image string) {
	t.Helper()
	spec := s.spec(t, p)
	spec.Image = image
	h, err := p.Create(s.ctx(t), spec)
	if err == nil {
		s.destroyAtEnd(t, p, h)
	}
	wantKind(t, "Create from removed snapshot "+image, err, errdefs.ErrFailedPrecondition)
}

// wantSnapshotInternal checks that sn tells the snapshot from from the
// ordinary image, and that no other runtime can start from the snapshot:
// snapshots are internal.
func (s *suite) wantSnapshotInternal(t *testing.T, p provider.Provider, sn provider.Snapshotter, from, image string) {
	t.Helper()
	if !sn.IsSnapshot(from) {
		t.Fatalf("IsSnapshot(%q) = false", from)
	}
	if sn.IsSnapshot(image) {
		t.Fatalf("IsSnapshot(%q) = true for an ordinary image", image)
	}
	other := s.spec(t, p)
	other.Image = from
	if _, err := p.Create(s.ctx(t), other); !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Fatalf("Create from another runtime's snapshot = %v, want failed precondition", err)
	}
}

// startFromSnapshot starts a new sandbox of the runtime runtimeID from its
// snapshot from, and checks that it runs and its agent answers.
func (s *suite) startFromSnapshot(t *testing.T, p provider.Provider, from, runtimeID string) provider.Handle {
	t.Helper()
	restored := s.spec(t, p)
	restored.Image = from
	restored.RuntimeID = runtimeID
	h2 := s.create(t, p, restored)
	must(t, "Start from a snapshot", p.Start(s.ctx(t), h2))
	s.wantState(t, p, h2, provider.StateRunning)
	if p.Capabilities().Agent {
		conn, err := p.DialAgent(s.ctx(t), h2)
		must(t, "DialAgent in a sandbox started from a snapshot", err)
		must(t, "agent health in a sandbox started from a snapshot", CheckAgent(s.ctx(t), conn))
	}
	return h2
}
