package e2e

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docker/docker/api/types/network"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/lease"
	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// cutStore is a replica's way to the store, which the test can cut: once
// cut, the replica renews and releases nothing, as one that died.
type cutStore struct {
	lease.PresenceStore
	cut atomic.Bool
}

var errCut = errors.New("the replica is gone")

func (s *cutStore) AcquireLease(ctx context.Context, name, holder string, at time.Time, ttl time.Duration) (store.Lease, bool, error) {
	if s.cut.Load() {
		return store.Lease{}, false, errCut
	}
	return s.PresenceStore.AcquireLease(ctx, name, holder, at, ttl)
}

func (s *cutStore) ReleaseLease(ctx context.Context, name, holder string, token int64) (bool, error) {
	if s.cut.Load() {
		return false, errCut
	}
	return s.PresenceStore.ReleaseLease(ctx, name, holder, token)
}

// TestWorldStaysWithItsReplica: a world being made belongs to the replica
// making it. Replica B (a server on PostgreSQL, replica-b) and replica A
// (its presence, kept beside it on the same database) share the store. A
// world A is making (starting, its runner A) is left alone by B's sweep
// and by B's start-up reconciliation, its member running and its network
// there, while B's reconciliation tears down B's own world left starting
// (B restarted), which B's sweep, while B runs, leaves alone. Once A dies
// (it stops renewing its presence, which lapses within the 2 s TTL), B's
// sweep tears A's world down: failed, its member killed interrupted, no
// container, volume or network left.
func TestWorldStaysWithItsReplica(t *testing.T) {
	instance := testenv.Instance(t)
	env := servertest.New(t, servertest.Options{
		Provider: testenv.RuncProvider(t, instance), Instance: instance, Image: testenv.TestImage,
		Pricing:      &ledger.Pricing{Default: ledger.Rate{CPUMicros: 1000}, FirstSlice: time.Minute},
		NewOrgMicros: 1_000_000_000,
		Store:        testenv.Postgres(t),
		Configure: func(c *config.Config) {
			c.ReplicaID, c.LeaseTTL = "replica-b", 2*time.Second
		},
	})
	env.Must(t, 201, "POST", "/api/v1/orgs", pc.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", pc.CreateWorkspaceRequest{Name: "dev"})
	e := &worldEnv{env: env, cli: testenv.DockerClient(t)}
	ctx := t.Context()

	// Replica A, live: its presence renewed until the test cuts it off.
	cut := &cutStore{PresenceStore: env.Store}
	a := lease.NewPresence(cut, lease.Config{Replica: "replica-a", TTL: 2 * time.Second})
	if err := a.Announce(ctx); err != nil {
		t.Fatal(err)
	}
	keepCtx, stopKeeping := context.WithCancel(context.Background())
	var keeping sync.WaitGroup
	keeping.Go(func() { a.Keep(keepCtx) })
	t.Cleanup(func() {
		stopKeeping()
		keeping.Wait()
	})

	// starting puts world w back in starting with runner, as the replica
	// runner making it leaves it.
	starting := func(w pc.World, runner string) {
		t.Helper()
		row, err := env.Store.GetWorld(ctx, w.ID)
		if err != nil {
			t.Fatal(err)
		}
		row.Status, row.Runner = store.WorldStarting, runner
		if ok, err := env.Store.UpdateWorld(ctx, row, store.WorldRunning); err != nil || !ok {
			t.Fatalf("update: %v %v", ok, err)
		}
	}
	theirs := e.create(t, "theirs", plainMember("a"))
	starting(theirs, "replica-a")
	mine := e.create(t, "mine", plainMember("a"))
	starting(mine, "replica-b")
	// untouched fails unless A's world is still starting, its member
	// running and its network there.
	untouched := func(when string) {
		t.Helper()
		got := e.get(t, theirs.ID)
		if got.Status != "starting" || got.Members[0].Sandbox.State != pc.SandboxRunning {
			t.Fatalf("%s: A's world: %+v", when, got)
		}
		if _, err := e.cli.NetworkInspect(ctx, "paddock-world-"+theirs.ID, network.InspectOptions{}); err != nil {
			t.Fatalf("%s: A's world's network: %v", when, err)
		}
	}

	if n, err := env.Worlds.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("B's sweep while A lives: %d, %v", n, err)
	}
	untouched("after B's sweep")
	if got := e.get(t, mine.ID); got.Status != "starting" {
		t.Fatalf("B's own world after its sweep: %+v", got)
	}
	if n, err := env.Worlds.Reconcile(ctx); err != nil || n != 1 {
		t.Fatalf("B's start-up reconciliation: %d, %v", n, err)
	}
	untouched("after B's start-up reconciliation")
	if got := e.get(t, mine.ID); got.Status != "failed" {
		t.Fatalf("B's own world after its start-up reconciliation: %+v", got)
	} else {
		e.noTrace(t, got)
	}

	cut.cut.Store(true) // A dies
	var got pc.World
	testenv.WaitFor(t, "B's sweep to tear down the world of A, gone", func() bool {
		if _, err := env.Worlds.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		got = e.get(t, theirs.ID)
		return got.Status != "starting"
	})
	if got.Status != "failed" || got.Error == "" || got.Members[0].Sandbox.KillReason != runtime.KillInterrupted {
		t.Fatalf("A's world once A died: %+v", got)
	}
	e.noTrace(t, got)
}
