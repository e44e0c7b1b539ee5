package ledger

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/postgres"
	"github.com/paddockhq/paddock/internal/store/sqlite"
	"github.com/paddockhq/paddock/internal/testenv"
)

// BenchmarkTick measures one settler tick over 10,000 running sandboxes
// of 100 orgs, each sandbox in a runtime and project of its own, in a real
// SQLite file and in a real PostgreSQL database (testenv's throwaway
// cluster, fsync off): the scan, 10,000 guarded deductions and their
// journal entries. "batched" is Tick; "one-by-one" is the settler as it
// was before SettleMany (pages of 500 rows by sandbox id, one Settle call
// per row), kept as the baseline. Each tick charges 30 more seconds, so
// the journal grows by 10,000 entries per op, as it does in production.
// Each reports the median and p99 wall time of a tick, and the process's
// CPU time per tick.
//
//	go test -run '^$' -bench 'Tick$' -benchtime 5x -count 5 ./internal/ledger/
func BenchmarkTick(b *testing.B) {
	const sandboxes, orgs = 10_000, 100
	var baseline float64 // the dialect's one-by-one median in this run
	for _, sc := range []struct {
		name string
		open func(b *testing.B) store.Store
	}{
		{"sqlite", func(b *testing.B) store.Store {
			st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "paddock.db"), nil)
			if err != nil {
				b.Fatal(err)
			}
			return st
		}},
		{"postgres", func(b *testing.B) store.Store {
			st, err := postgres.Open(b.Context(), testenv.Postgres(b), nil)
			if err != nil {
				b.Fatal(err)
			}
			return st
		}},
	} {
		baseline = 0
		for _, bc := range []struct {
			name string
			tick func(context.Context, *Ledger) (TickResult, error)
		}{
			{"one-by-one", tickOneByOne},
			{"batched", func(ctx context.Context, l *Ledger) (TickResult, error) { return l.Tick(ctx) }},
		} {
			b.Run(sc.name+"/"+bc.name, func(b *testing.B) {
				st := sc.open(b)
				defer st.Close()
				median := benchTick(b, st, bc.tick, orgs, sandboxes)
				if bc.name == "one-by-one" {
					baseline = median
				} else if baseline > 0 {
					b.ReportMetric(median/baseline, "x-one-by-one")
				}
			})
		}
	}
}

// benchTick seeds st and runs tick once per op, reporting the median and
// p99 of a tick's wall time and the process's CPU time per tick.
func benchTick(b *testing.B, st store.Store, tick func(context.Context, *Ledger) (TickResult, error), orgs, sandboxes int) (median float64) {
	ctx := b.Context()
	c := testenv.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	if err := seedRunning(ctx, st, c.Now(), orgs, sandboxes); err != nil {
		b.Fatal(err)
	}
	l := New(Config{Store: st, Meter: NewMeter(DefaultPricing), Now: c.Now, Logger: slog.New(slog.DiscardHandler)})
	cpu0 := cpuTime(b)
	median = testenv.BenchTimed(b, func() (time.Duration, error) {
		c.Advance(30 * time.Second)
		start := time.Now()
		res, err := tick(ctx, l)
		d := time.Since(start)
		if err == nil && res.Settled != sandboxes {
			err = fmt.Errorf("settled %d of %d", res.Settled, sandboxes)
		}
		return d, err
	})
	// CPU time is steadier than wall time on a shared machine: the tick
	// is mostly CPU (its I/O lands in the OS page cache), so it shows what
	// the tick costs, not who else was running. On PostgreSQL most of the
	// work is the database server's, another process: this counts only
	// paddock's side.
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
	return median
}

// tickOneByOne is the settlement half of Tick as it was before SettleMany,
// the baseline of BenchmarkTick: pages of batchRows rows by sandbox id,
// each settled in one transaction by one Settle call per row.
func tickOneByOne(ctx context.Context, l *Ledger) (TickResult, error) {
	var res TickResult
	upTo := l.now()
	after := ""
	for {
		rows, err := l.store.ListRunningSandboxes(ctx, after, batchRows)
		if err != nil || len(rows) == 0 {
			return res, err
		}
		after = rows[len(rows)-1].ID
		due := make([]store.Settlement, 0, len(rows))
		for _, sb := range rows {
			res.Scanned++
			if st, ok := l.meter.due(sb, upTo); ok {
				due = append(due, st)
			}
		}
		var batch TickResult
		err = l.store.InTx(ctx, func(q store.Queries) error {
			batch = TickResult{}
			for _, st := range due {
				e, err := q.Settle(ctx, st)
				if pe, ok := errdefs.Public(err); ok && pe.Code == "settlement_stale" {
					batch.Stale++
					continue
				}
				if err != nil {
					return err
				}
				batch.Settled++
				batch.ChargedMicros -= e.AmountMicros
			}
			return nil
		})
		if err != nil {
			return res, err
		}
		res.Settled += batch.Settled
		res.ChargedMicros += batch.ChargedMicros
		res.Stale += batch.Stale
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
