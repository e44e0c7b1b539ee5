package ledger_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/sqlite"
)

// BenchmarkTick measures one settler tick over 10,000 running sandboxes
// of 100 orgs in a real SQLite file: the scan, 10,000 guarded deductions
// and their journal entries. "batched" is the settler as it is (one
// SettleMany per org per transaction of rows); "one-by-one" is the same
// tick with every settlement made by its own Settle call, as the settler
// used to, for comparison.
//
//	go test -run '^$' -bench 'Tick$' -benchtime 5x -count 5 ./internal/ledger/
func BenchmarkTick(b *testing.B) {
	const sandboxes, orgs = 10_000, 100
	for _, bc := range []struct {
		name string
		wrap func(store.Store) store.Store
	}{
		{"one-by-one", func(st store.Store) store.Store { return oneByOne{st} }},
		{"batched", func(st store.Store) store.Store { return st }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := b.Context()
			st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "paddock.db"), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			c := newClock()
			if err := seedRunning(ctx, st, c.Now(), orgs, sandboxes); err != nil {
				b.Fatal(err)
			}
			l := ledger.New(ledger.Config{
				Store: bc.wrap(st), Meter: ledger.NewMeter(ledger.DefaultPricing), Now: c.Now, Logger: slog.New(slog.DiscardHandler),
			})
			cpu0 := cpuTime(b)
			for b.Loop() {
				c.Advance(30 * time.Second)
				res, err := l.Tick(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if res.Settled != sandboxes {
					b.Fatalf("settled %d of %d", res.Settled, sandboxes)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/sandboxes, "ns/sandbox")
			// CPU time is steadier than wall time on a shared machine: the
			// tick is CPU-bound (SQLite's page cache and the OS's absorb
			// its I/O), so it shows what the tick costs, not who else ran.
			b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// seedRunning stores orgs orgs with ample credits and a workspace each,
// and n running sandboxes dealt among them, each in a runtime and project
// of its own, settled up to at.
func seedRunning(ctx context.Context, st store.Store, at time.Time, orgs, n int) error {
	return st.InTx(ctx, func(q store.Queries) error {
		ws := make([]store.Workspace, orgs)
		for i := range ws {
			o := store.Org{ID: uuid.NewString(), Name: fmt.Sprintf("org-%d", i), CreatedAt: at}
			if err := q.CreateOrg(ctx, o); err != nil {
				return err
			}
			if _, err := q.PostCredit(ctx, store.CreditPosting{OrgID: o.ID, Kind: store.EntryGrant,
				AmountMicros: 1 << 50, IdempotencyKey: "seed", At: at}); err != nil {
				return err
			}
			ws[i] = store.Workspace{ID: uuid.NewString(), OrgID: o.ID, Name: "dev", CreatedAt: at}
			if err := q.CreateWorkspace(ctx, ws[i]); err != nil {
				return err
			}
		}
		for i := range n {
			w := ws[i%orgs]
			err := q.CreateSandbox(ctx, store.Sandbox{
				ID: uuid.NewString(), OrgID: w.OrgID, WorkspaceID: w.ID, ProjectID: uuid.NewString(), RuntimeID: uuid.NewString(),
				Kind: store.KindRuntime, State: store.SandboxRunning, Provider: "docker", CPUMillis: 1000, MemoryMB: 1024,
				StartedAt: at, LastSettledAt: at, RunningSince: at, CreatedAt: at,
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// oneByOne is a store whose SettleMany makes each settlement with its own
// Settle call, reading and writing the org's account every time: the
// settler's cost before SettleMany.
type oneByOne struct{ store.Store }

func (s oneByOne) InTx(ctx context.Context, fn func(q store.Queries) error) error {
	return s.Store.InTx(ctx, func(q store.Queries) error { return fn(oneByOneQueries{q}) })
}

type oneByOneQueries struct{ store.Queries }

func (q oneByOneQueries) SettleMany(ctx context.Context, orgID string, ss []store.Settlement) ([]store.JournalEntry, []error, error) {
	es, errs := make([]store.JournalEntry, len(ss)), make([]error, len(ss))
	for i, s := range ss {
		es[i], errs[i] = q.Settle(ctx, s)
	}
	return es, errs, nil
}
