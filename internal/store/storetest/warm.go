package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// warm builds (without storing) a warm sandbox of template.
func (f *fixture) warm(template string, state store.WarmState) store.WarmSandbox {
	at := f.next()
	id := uuid.NewString()
	return store.WarmSandbox{
		ID: id, Template: template, State: state, Provider: "fake",
		Image: "paddock/base:1", CPUMillis: 1000, MemoryMB: 512,
		WorkspaceVolume: "paddock-ws-" + id, CreatedAt: at, UpdatedAt: at,
	}
}

func normWarm(w store.WarmSandbox) store.WarmSandbox {
	w.CreatedAt, w.UpdatedAt = ts(w.CreatedAt), ts(w.UpdatedAt)
	if len(w.ProviderState) == 0 {
		w.ProviderState = nil
	}
	return w
}

func testWarmPool(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	tmpl := "fake|paddock/base:1|" + uuid.NewString()

	creating := f.warm(tmpl, store.WarmCreating)
	must(t, s.CreateWarmSandbox(ctx, creating))
	got, err := s.GetWarmSandbox(ctx, creating.ID)
	must(t, err)
	equal(t, "GetWarmSandbox", got, normWarm(creating))

	t.Run("a creating one is not claimed", func(t *testing.T) {
		_, err := s.ClaimWarmSandbox(ctx, tmpl)
		wantKind(t, err, errdefs.ErrNotFound)
	})

	t.Run("update", func(t *testing.T) {
		u := creating
		u.State = store.WarmReady
		u.ProviderSandboxID = "c0ffee"
		u.ProviderState = []byte(`{"v":1}`)
		u.UpdatedAt = f.next()
		must(t, s.UpdateWarmSandbox(ctx, u))
		got, err := s.GetWarmSandbox(ctx, u.ID)
		must(t, err)
		equal(t, "updated warm sandbox", got, normWarm(u))
		creating = u
	})

	older := f.warm(tmpl, store.WarmReady)
	older.CreatedAt = creating.CreatedAt.Add(-time.Hour)
	must(t, s.CreateWarmSandbox(ctx, older))
	otherTmpl := f.warm("another", store.WarmReady)
	must(t, s.CreateWarmSandbox(ctx, otherTmpl))

	t.Run("list oldest first", func(t *testing.T) {
		all, err := s.ListWarmSandboxes(ctx)
		must(t, err)
		equal(t, "warm ids", ids(all, func(w store.WarmSandbox) string { return w.ID }),
			[]string{older.ID, creating.ID, otherTmpl.ID})
	})

	t.Run("claim takes the oldest ready of the template and deletes it", func(t *testing.T) { testClaimWarm(t, f, tmpl, older, creating) })
	t.Run("a claim rolled back is not lost", func(t *testing.T) { testClaimWarmRolledBack(t, f, otherTmpl) })

	t.Run("errors", func(t *testing.T) {
		wantKind(t, s.DeleteWarmSandbox(ctx, uuid.NewString()), errdefs.ErrNotFound)
		u := f.warm(tmpl, store.WarmReady)
		wantKind(t, s.UpdateWarmSandbox(ctx, u), errdefs.ErrNotFound)
		_, err := s.GetWarmSandbox(ctx, u.ID)
		wantKind(t, err, errdefs.ErrNotFound)
		dup := otherTmpl
		wantKind(t, s.CreateWarmSandbox(ctx, dup), errdefs.ErrConflict)
		bad := f.warm(tmpl, "lukewarm")
		wantKind(t, s.CreateWarmSandbox(ctx, bad), errdefs.ErrInvalidArgument)
		bad = f.warm("", store.WarmReady)
		wantKind(t, s.CreateWarmSandbox(ctx, bad), errdefs.ErrInvalidArgument)
		must(t, s.DeleteWarmSandbox(ctx, otherTmpl.ID))
	})
}

// testClaimWarm claims the ready sandboxes of tmpl, older first, then
// creating (ready by now), then none.
func testClaimWarm(t *testing.T, f *fixture, tmpl string, older, creating store.WarmSandbox) {
	s, ctx := f.s, f.ctx
	got, err := s.ClaimWarmSandbox(ctx, tmpl)
	must(t, err)
	equal(t, "first claim", got, normWarm(older))
	_, err = s.GetWarmSandbox(ctx, older.ID)
	wantKind(t, err, errdefs.ErrNotFound)
	got, err = s.ClaimWarmSandbox(ctx, tmpl)
	must(t, err)
	equal(t, "second claim", got.ID, creating.ID)
	_, err = s.ClaimWarmSandbox(ctx, tmpl)
	wantKind(t, err, errdefs.ErrNotFound)
}

// testClaimWarmRolledBack claims otherTmpl in a transaction that fails.
func testClaimWarmRolledBack(t *testing.T, f *fixture, otherTmpl store.WarmSandbox) {
	s, ctx := f.s, f.ctx
	boom := fmt.Errorf("boom")
	err := s.InTx(ctx, func(q store.Queries) error {
		if _, err := q.ClaimWarmSandbox(ctx, "another"); err != nil {
			return err
		}
		return boom
	})
	if err != boom {
		t.Fatalf("InTx = %v; want boom", err)
	}
	if _, err := s.GetWarmSandbox(ctx, otherTmpl.ID); err != nil {
		t.Fatalf("warm sandbox after a rolled-back claim: %v", err)
	}
}

// testWarmClaimRace holds the store to "never hand one warm sandbox to two
// runtimes": claims race for the warm sandboxes of a template. As many
// claims as sandboxes all succeed, each with another one (a claim never
// comes back empty while a ready sandbox no other claim holds is left);
// more claims than sandboxes take each exactly once.
func testWarmClaimRace(t *testing.T, s store.Store) {
	// Several rounds: the first also opens the store's connections, which
	// spreads its claims out in time; later rounds overlap more.
	for round := range 4 {
		t.Run(fmt.Sprintf("as many claims as sandboxes %d", round), func(t *testing.T) { claimRace(t, newFixture(t, s), 10, 10) })
	}
	t.Run("more claims than sandboxes", func(t *testing.T) { claimRace(t, newFixture(t, s), 10, 40) })
}

// claimRace has claimers claims race for warm ready sandboxes of a new
// template: min(warm, claimers) succeed, each with another sandbox, and
// the rest find none.
func claimRace(t *testing.T, f *fixture, warm, claimers int) {
	s, ctx := f.s, f.ctx
	tmpl := "race-" + uuid.NewString()
	for range warm {
		must(t, s.CreateWarmSandbox(ctx, f.warm(tmpl, store.WarmReady)))
	}
	got := make([]string, claimers)
	errs := race(claimers, func(i int) error {
		w, err := s.ClaimWarmSandbox(ctx, tmpl)
		got[i] = w.ID
		return err
	})
	seen := map[string]bool{}
	for i, err := range errs {
		switch {
		case err == nil:
			if seen[got[i]] {
				t.Fatalf("warm sandbox %s was claimed twice", got[i])
			}
			seen[got[i]] = true
		case errdefs.IsNotFound(err):
		default:
			t.Fatalf("claim %d: %v", i, err)
		}
	}
	if want := min(warm, claimers); len(seen) != want {
		t.Fatalf("%d distinct claims of %d succeeded; want %d of the %d warm sandboxes claimed", len(seen), claimers, want, warm)
	}
}
