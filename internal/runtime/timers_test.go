package runtime

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/store"
)

// The service's clock is the bubble's in these tests: time.Sleep moves it
// and no test waits for real time.

// TestIdleExpiryAndKeepalive: a running runtime's window is its idle
// timeout from the start; it is paused with reason timeout once the
// window has passed, never before, and a keepalive moves the window out
// (never in, and never past MaxKeepalive).
func TestIdleExpiryAndKeepalive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, fake.Config{}, Defaults{MaxKeepalive: time.Hour})
		idle := ConfigRequest{IdleTimeoutSeconds: 60}
		rt := r.started("idle", idle)
		kept := r.started("kept", idle)
		_, sb := r.get(rt.ID)
		if want := time.Now().Add(time.Minute); !sb.ExpiresAt.Equal(want.UTC().Truncate(time.Microsecond)) {
			t.Fatalf("expires at %v, want %v (start + idle timeout)", sb.ExpiresAt, want)
		}

		time.Sleep(30 * time.Second)
		paused, err := r.s.PauseIfExpired(r.ctx, rt.ID, time.Now())
		r.must(err)
		if paused {
			t.Fatal("paused at 30 s of a 60 s window")
		}
		_, err = r.s.Keepalive(r.ctx, kept.ID, 10*time.Minute)
		r.must(err)
		_, ksb := r.get(kept.ID)
		_, err = r.s.Keepalive(r.ctx, kept.ID, time.Second) // shorter: changes nothing
		r.must(err)
		if _, again := r.get(kept.ID); !again.ExpiresAt.Equal(ksb.ExpiresAt) {
			t.Fatalf("a shorter keepalive moved the window from %v to %v", ksb.ExpiresAt, again.ExpiresAt)
		}
		_, err = r.s.Keepalive(r.ctx, kept.ID, 48*time.Hour)
		r.must(err)
		if _, capped := r.get(kept.ID); capped.ExpiresAt.After(time.Now().Add(time.Hour)) {
			t.Fatalf("a keepalive past MaxKeepalive: window to %v", capped.ExpiresAt)
		}

		time.Sleep(31 * time.Second)
		for id, want := range map[string]bool{rt.ID: true, kept.ID: false} {
			paused, err := r.s.PauseIfExpired(r.ctx, id, time.Now())
			r.must(err)
			if paused != want {
				t.Fatalf("at 61 s, runtime %s paused %v, want %v", id, paused, want)
			}
		}
		got, sb := r.get(rt.ID)
		if got.Status != store.RuntimePaused || sb.State != store.SandboxPaused || sb.PauseReason != store.PauseTimeout {
			t.Fatalf("expired: runtime %s, row %s (%s); want paused with reason timeout", got.Status, sb.State, sb.PauseReason)
		}
		if len(r.fake.Live()) != 2 {
			t.Fatal("expiry destroyed compute; it only pauses")
		}
		// Resumed, its window starts again.
		_, err = r.s.Resume(r.ctx, rt.ID)
		r.must(err)
		if paused, _ := r.s.PauseIfExpired(r.ctx, rt.ID, time.Now()); paused {
			t.Fatal("a resumed runtime expired at once")
		}
	})
}

// TestExpiryWaitsForOpenOperations: an operation in flight (an attached
// exec, a terminal) holds a runtime past its window, which then runs
// from when it ends; the maximum lifetime ends it anyway.
func TestExpiryWaitsForOpenOperations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, fake.Config{}, Defaults{})
		rt := r.started("busy", ConfigRequest{IdleTimeoutSeconds: 60, MaxLifetimeSeconds: 600})
		end := r.s.activity.hold(rt.ID, r.s.now(), r.s.now)
		time.Sleep(2 * time.Minute)
		paused, err := r.s.PauseIfExpired(r.ctx, rt.ID, time.Now())
		r.must(err)
		if paused {
			t.Fatal("paused with an operation open")
		}
		end()
		time.Sleep(30 * time.Second)
		if paused, _ := r.s.PauseIfExpired(r.ctx, rt.ID, time.Now()); paused {
			t.Fatal("paused 30 s after the operation ended, within its window")
		}
		end = r.s.activity.hold(rt.ID, r.s.now(), r.s.now)
		defer end()
		time.Sleep(10 * time.Minute)
		paused, err = r.s.PauseIfExpired(r.ctx, rt.ID, time.Now())
		r.must(err)
		if !paused {
			t.Fatal("an open operation held the runtime past its maximum lifetime")
		}
	})
}

// TestArchiveAfterPaused: a runtime paused longer than its archive_after
// is archived (its filesystem kept as a snapshot, its compute released,
// its row killed as archived); the next resume restores it.
func TestArchiveAfterPaused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, fake.Config{}, Defaults{})
		rt := r.started("p", ConfigRequest{ArchiveAfterSeconds: 3600})
		_, err := r.s.Pause(r.ctx, rt.ID, store.PauseUser)
		r.must(err)
		_, sb := r.get(rt.ID)

		time.Sleep(59 * time.Minute)
		archived, err := r.s.ArchiveIfDue(r.ctx, rt.ID, time.Now())
		r.must(err)
		if archived {
			t.Fatal("archived at 59 min of 60")
		}
		time.Sleep(time.Minute)
		archived, err = r.s.ArchiveIfDue(r.ctx, rt.ID, time.Now())
		r.must(err)
		if !archived {
			t.Fatal("not archived at 60 min")
		}
		got, _ := r.get(rt.ID)
		row, err := r.st.GetSandbox(r.ctx, sb.ID)
		r.must(err)
		if got.Status != store.RuntimeArchived || got.Snapshot == "" || got.CurrentSandboxID != "" ||
			row.State != store.SandboxKilled || row.KillReason != KillArchived || len(r.fake.Live()) != 0 {
			t.Fatalf("archived: runtime %s snapshot %q, row %s (%s), %d live", got.Status, got.Snapshot, row.State, row.KillReason, len(r.fake.Live()))
		}
		rt, err = r.s.Resume(r.ctx, rt.ID)
		r.must(err)
		_, restored := r.get(rt.ID)
		if rt.Status != store.RuntimeRunning || restored.Image != got.Snapshot {
			t.Fatalf("resumed: %s on image %q, want running on the snapshot %q", rt.Status, restored.Image, got.Snapshot)
		}
	})
}

// TestWarmPoolRefillsBehindAClaim: a start claims a warm sandbox, asks
// for a refill (WarmKicks, which the lifecycle manager waits on), and the
// refill makes one again.
func TestWarmPoolRefillsBehindAClaim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRigWith(t, rigOptions{WarmPools: []WarmPool{{Size: 1}}})
		made, err := r.s.FillWarmPools(r.ctx)
		r.must(err)
		if made != 1 {
			t.Fatalf("filled %d, want 1", made)
		}
		select {
		case <-r.s.WarmKicks():
			t.Fatal("a refill was asked for before any claim")
		default:
		}
		rt := r.started("p", ConfigRequest{})
		if pv := r.s.Provisions(); len(pv) == 0 || !pv[0].Warm {
			t.Fatalf("the start did not claim the warm sandbox: %+v", pv)
		}
		_, sb := r.get(rt.ID)
		if sb.ProviderSandboxID == "" || r.fake.Calls(fake.OpCreate) != 1 {
			t.Fatalf("a claimed start created compute (%d creates)", r.fake.Calls(fake.OpCreate))
		}
		select {
		case <-r.s.WarmKicks():
		default:
			t.Fatal("a claim did not ask for a refill")
		}
		made, err = r.s.FillWarmPools(r.ctx)
		r.must(err)
		if made != 1 || r.fake.Calls(fake.OpCreate) != 2 {
			t.Fatalf("refill made %d (%d creates), want 1", made, r.fake.Calls(fake.OpCreate))
		}
	})
}

// TestBreakerFailsStartsFast: once a provider's backend has failed enough
// calls in a row, a start answers provider_circuit_open before it records
// anything; after the cooldown one start probes it, and closes it.
func TestBreakerFailsStartsFast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var b *provider.Breaker
		r := newRigWith(t, rigOptions{Wrap: func(f *fake.Provider) provider.Provider {
			b = provider.NewBreaker(f, provider.BreakerConfig{Failures: 2, Cooldown: 5 * time.Second})
			return b
		}})
		t.Cleanup(b.Close)
		rt := r.project("p", ConfigRequest{})
		down := errdefs.Unavailable(provider.CodeProviderUnavailable, "the engine is down")
		for range 2 {
			r.fake.FailNext(fake.OpCreate, down)
			if _, err := r.s.Start(r.ctx, rt.ID, nil); err == nil {
				t.Fatal("a start on a failing backend succeeded")
			}
			_, err := r.s.Reset(r.ctx, rt.ID, false)
			r.must(err)
		}
		rows, _, err := r.st.ListSandboxes(r.ctx, store.SandboxFilter{OrgID: rt.OrgID, RuntimeID: rt.ID}, store.Page{Limit: 10})
		r.must(err)
		_, err = r.s.Start(r.ctx, rt.ID, nil)
		if pe, ok := errdefs.Public(err); !ok || pe.Code != provider.CodeCircuitOpen {
			t.Fatalf("a start with the breaker open: %v, want %s", err, provider.CodeCircuitOpen)
		}
		after, _, err := r.st.ListSandboxes(r.ctx, store.SandboxFilter{OrgID: rt.OrgID, RuntimeID: rt.ID}, store.Page{Limit: 10})
		r.must(err)
		if len(after) != len(rows) {
			t.Fatalf("a start refused by the breaker recorded a row: %d rows, were %d", len(after), len(rows))
		}
		time.Sleep(5 * time.Second)
		if _, err := r.s.Start(r.ctx, rt.ID, nil); err != nil {
			t.Fatalf("the probe after the cooldown: %v", err)
		}
		if st, _ := b.State(); st != provider.BreakerClosed {
			t.Fatalf("breaker %s after a probe that worked", st)
		}
	})
}
