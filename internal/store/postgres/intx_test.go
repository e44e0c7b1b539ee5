package postgres_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/postgres"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestInTxOneAtATimeAcrossStores: InTx bodies on two stores of one
// database (two replicas) run one after another, each once: the second
// waits in the database for the first to commit, then sees what it wrote.
func TestInTxOneAtATimeAcrossStores(t *testing.T) {
	ctx := context.Background()
	dsn := testDSN(t)
	a, err := postgres.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := postgres.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var runsA, runsB atomic.Int32
	inside, release := make(chan struct{}), make(chan struct{})
	doneA := make(chan error, 1)
	go func() {
		doneA <- a.InTx(ctx, func(q store.Queries) error {
			if runsA.Add(1) == 1 {
				close(inside)
			}
			<-release
			return q.SetMeta(ctx, "first", "a")
		})
	}()
	<-inside
	var seen string
	doneB := make(chan error, 1)
	go func() {
		doneB <- b.InTx(ctx, func(q store.Queries) error {
			runsB.Add(1)
			var err error
			seen, err = q.GetMeta(ctx, "first")
			return err
		})
	}()
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	testenv.WaitFor(t, "the second transaction to wait for the first", func() bool {
		var waiting int
		err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted").Scan(&waiting)
		return err == nil && waiting == 1
	})
	if runsB.Load() != 0 {
		t.Fatal("the second body ran while the first held the transactions' lock")
	}
	close(release)
	if err := <-doneA; err != nil {
		t.Fatal(err)
	}
	if err := <-doneB; err != nil {
		t.Fatal(err)
	}
	if seen != "a" || runsA.Load() != 1 || runsB.Load() != 1 {
		t.Fatalf("second body saw %q; bodies ran %d and %d times, want %q, once each", seen, runsA.Load(), runsB.Load(), "a")
	}
}
