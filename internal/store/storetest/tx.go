package storetest

import (
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

func testInTx(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	errBoom := errors.New("boom")

	t.Run("commit", func(t *testing.T) { testInTxCommit(t, f) })

	o := f.org()
	w := f.workspace(o)
	stale := f.runtime(w)
	stale.Version = 99
	rollbacks := []struct {
		name    string
		fn      func(q store.Queries, org store.Org) error
		wantErr error // matched with errors.Is
	}{
		{"fn error is returned unchanged", func(q store.Queries, org store.Org) error {
			if err := q.CreateOrg(ctx, org); err != nil {
				return err
			}
			return errBoom
		}, errBoom},
		{"store error inside", func(q store.Queries, org store.Org) error {
			if err := q.CreateOrg(ctx, org); err != nil {
				return err
			}
			return q.CreateWorkspace(ctx, store.Workspace{ID: w.ID, OrgID: org.ID, Name: "dup-id", CreatedAt: base})
		}, errdefs.ErrConflict},
		{"version conflict inside", func(q store.Queries, org store.Org) error {
			if err := q.CreateOrg(ctx, org); err != nil {
				return err
			}
			_, err := q.SetRuntimeState(ctx, stale.ID, stale.Version, store.RuntimeState{Status: store.RuntimeRunning}, base)
			return err
		}, errdefs.ErrConflict},
	}
	for _, tc := range rollbacks {
		t.Run("rollback: "+tc.name, func(t *testing.T) {
			org := store.Org{ID: uuid.NewString(), Name: "tx-" + uuid.NewString(), CreatedAt: base}
			err := s.InTx(ctx, func(q store.Queries) error { return tc.fn(q, org) })
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("InTx error = %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr == errBoom && err != errBoom {
				t.Fatalf("InTx error = %#v, want fn's error unchanged", err)
			}
			_, err = s.GetOrg(ctx, org.ID)
			wantKind(t, err, errdefs.ErrNotFound)
		})
	}

	t.Run("rollback: panic", func(t *testing.T) { testInTxPanic(t, f) })

	t.Run("rollback keeps earlier commits", func(t *testing.T) {
		r := f.runtime(w)
		err := s.InTx(ctx, func(q store.Queries) error {
			if _, err := q.SetRuntimeState(ctx, r.ID, r.Version, store.RuntimeState{Status: store.RuntimeStarting}, base); err != nil {
				return err
			}
			return errBoom
		})
		if !errors.Is(err, errBoom) {
			t.Fatalf("InTx error = %v, want %v", err, errBoom)
		}
		got, err := s.GetRuntime(ctx, r.ID)
		must(t, err)
		equal(t, "runtime version after rollback", got.Version, int64(1))
		equal(t, "runtime status after rollback", got.Status, store.RuntimeIdle)
	})
}

// testInTxCommit creates an org and its workspace in one transaction,
// which reads its own writes, and finds them after the commit.
func testInTxCommit(t *testing.T, f *fixture) {
	s, ctx := f.s, f.ctx
	o := store.Org{ID: uuid.NewString(), Name: "tx-commit", CreatedAt: base}
	w := store.Workspace{ID: uuid.NewString(), OrgID: o.ID, Name: "main", CreatedAt: base}
	err := s.InTx(ctx, func(q store.Queries) error {
		if err := q.CreateOrg(ctx, o); err != nil {
			return err
		}
		if err := q.CreateWorkspace(ctx, w); err != nil {
			return err
		}
		// A transaction reads its own writes.
		got, err := q.GetWorkspaceByName(ctx, o.ID, "main")
		if err != nil {
			return err
		}
		equal(t, "workspace read inside the transaction", got, normWorkspace(w))
		return q.SetMeta(ctx, "tx", "committed")
	})
	must(t, err)
	_, err = s.GetWorkspace(ctx, w.ID)
	must(t, err)
	v, err := s.GetMeta(ctx, "tx")
	must(t, err)
	equal(t, "meta", v, "committed")
}

// testInTxPanic panics inside a transaction: the panic propagates, the
// write is gone and the store still works.
func testInTxPanic(t *testing.T, f *fixture) {
	s, ctx := f.s, f.ctx
	org := store.Org{ID: uuid.NewString(), Name: "tx-panic", CreatedAt: base}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatalf("the panic did not propagate")
			}
		}()
		_ = s.InTx(ctx, func(q store.Queries) error {
			must(t, q.CreateOrg(ctx, org))
			panic("boom")
		})
	}()
	_, err := s.GetOrg(ctx, org.ID)
	wantKind(t, err, errdefs.ErrNotFound)
	// The store still works.
	must(t, s.SetMeta(ctx, "after-panic", "ok"))
}

// conflicts checks that exactly one of errs is nil and the rest are
// conflicts.
func conflicts(t *testing.T, errs []error) {
	t.Helper()
	wins := 0
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, errdefs.ErrConflict):
			t.Fatalf("unexpected error: %v", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d writers won from the same version, want exactly 1", wins)
	}
}

func testConcurrentUpdates(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o := f.org()
	w := f.workspace(o)
	const n = 8

	t.Run("one runtime version, many writers", func(t *testing.T) {
		// Verbs of different columns still serialize on the version.
		r := f.runtime(w)
		conflicts(t, race(n, func(i int) error {
			var err error
			if i%2 == 0 {
				_, err = s.SetRuntimeState(ctx, r.ID, r.Version, store.RuntimeState{Status: store.RuntimeError, StatusReason: uuid.NewString()}, base)
			} else {
				_, err = s.SetRuntimeSnapshot(ctx, r.ID, r.Version, uuid.NewString(), base)
			}
			return err
		}))
		got, err := s.GetRuntime(ctx, r.ID)
		must(t, err)
		equal(t, "runtime version", got.Version, int64(2))
	})

	t.Run("one sandbox version, many writers", func(t *testing.T) {
		sb := f.sandbox(o, nil)
		conflicts(t, race(n, func(i int) error {
			_, err := s.MarkSandboxPaused(ctx, sb.ID, sb.Version, store.PauseUser, base)
			return err
		}))
	})

	t.Run("one runtime version, many transactions", func(t *testing.T) { testRaceTransactions(t, f, o, w, n) })
	t.Run("read-modify-write retries lose nothing", func(t *testing.T) { testRaceRetries(t, f, o, n) })
}

// testRaceTransactions races n transactions of w that each record a
// sandbox of o and point one runtime at it: only one may commit.
func testRaceTransactions(t *testing.T, f *fixture, o store.Org, w store.Workspace, n int) {
	s, ctx := f.s, f.ctx
	// Each writer records a sandbox and points the runtime at it in one
	// transaction; only one may commit, and the losers' rows vanish.
	r := f.runtime(w)
	sbs := make([]store.Sandbox, n)
	for i := range sbs {
		sbs[i] = f.sandboxFor(o)
		sbs[i].RuntimeID = r.ID
	}
	conflicts(t, race(n, func(i int) error {
		return s.InTx(ctx, func(q store.Queries) error {
			sb := sbs[i]
			if err := q.CreateSandbox(ctx, sb); err != nil {
				return err
			}
			_, err := q.SetRuntimeState(ctx, r.ID, r.Version, store.RuntimeState{Status: store.RuntimeStarting, CurrentSandboxID: sb.ID}, base)
			return err
		})
	}))
	rows, _, err := s.ListSandboxes(ctx, store.SandboxFilter{OrgID: o.ID, RuntimeID: r.ID}, store.Page{})
	must(t, err)
	got, err := s.GetRuntime(ctx, r.ID)
	must(t, err)
	if len(rows) != 1 || got.CurrentSandboxID != rows[0].ID {
		t.Fatalf("runtime points at %q; rows %v, want exactly the winner's", got.CurrentSandboxID, ids(rows, func(s store.Sandbox) string { return s.ID }))
	}
}

// testRaceRetries has n writers each update a sandbox of o ten times,
// reading it again after each conflict: no update is lost.
func testRaceRetries(t *testing.T, f *fixture, o store.Org, n int) {
	s, ctx := f.s, f.ctx
	sb := f.sandbox(o, nil)
	const perWriter = 10
	errs := race(n, func(int) error {
		for done := 0; done < perWriter; {
			cur, err := s.GetSandbox(ctx, sb.ID)
			if err != nil {
				return err
			}
			_, err = s.RecordSandboxProvider(ctx, cur.ID, cur.Version, uuid.NewString(), nil, base)
			switch {
			case err == nil:
				done++
			case !errors.Is(err, errdefs.ErrConflict):
				return err
			}
		}
		return nil
	})
	for _, err := range errs {
		must(t, err)
	}
	got, err := s.GetSandbox(ctx, sb.ID)
	must(t, err)
	equal(t, "version", got.Version, int64(1+n*perWriter))
}
