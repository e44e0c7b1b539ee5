package ledger

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// batchRows is about how many rows one transaction of a tick settles, and
// how many the scan reads at a time.
const batchRows = 500

// TickResult is what one settler tick did.
type TickResult struct {
	Scanned         int   // running sandboxes seen
	Settled         int   // deductions recorded
	ChargedMicros   int64 // credits they took
	ShortfallMicros int64 // credits they could not take
	Stale           int   // rows another writer settled first (retried next tick)
	FailedOrgs      int   // orgs whose settlements failed (logged by id; retried next tick)
	PausedCredits   int   // runtimes paused for insufficient credits
	PausedSeats     int   // runtimes paused for a workspace over its member limit
	// Storage is what the round charged for snapshots' storage.
	Storage StorageResult
}

// Tick charges every running sandbox up to now, then pauses the running
// runtimes of each org whose balance ran out and of each workspace over
// its member limit, then charges snapshots' storage (an org its storage
// emptied is paused by the next round's compute charge). Each deduction is guarded by the row's watermark, so a
// sandbox that an action settled meanwhile is skipped, never charged
// twice. An org whose settlements fail is logged and counted, and its rows
// wait for the next tick; the other orgs are charged.
func (l *Ledger) Tick(ctx context.Context) (TickResult, error) {
	var res TickResult
	upTo := l.now()
	over, err := l.store.ListWorkspacesOverMemberLimit(ctx)
	if err != nil {
		return res, err
	}
	overWS := make(map[string]bool, len(over))
	for _, s := range over {
		overWS[s.WorkspaceID] = true
	}
	var (
		running  = map[string][]string{}           // org → its running runtimes
		seatless []string                          // running runtimes in workspaces over their limit
		due      = map[string][]store.Settlement{} // org → what its rows owe
	)
	after := ""
	for {
		rows, err := l.store.ListRunningSandboxes(ctx, after, batchRows)
		if err != nil {
			return res, err
		}
		if len(rows) == 0 {
			break
		}
		after = rows[len(rows)-1].ID
		for _, sb := range rows {
			res.Scanned++
			if sb.RuntimeID != "" {
				running[sb.OrgID] = append(running[sb.OrgID], sb.RuntimeID)
				if overWS[sb.WorkspaceID] {
					seatless = append(seatless, sb.RuntimeID)
				}
			}
			if st, ok := l.meter.due(sb, upTo); ok {
				due[sb.OrgID] = append(due[sb.OrgID], st)
			}
		}
	}
	settled, err := l.settleAll(ctx, due)
	if err != nil {
		return res, err
	}
	res.Settled, res.ChargedMicros, res.ShortfallMicros = settled.Settled, settled.ChargedMicros, settled.ShortfallMicros
	res.Stale, res.FailedOrgs = settled.Stale, len(settled.failed)
	for _, org := range slices.Sorted(maps.Keys(settled.failed)) {
		l.logger.ErrorContext(ctx, "settling an org's running sandboxes failed; retrying next tick", "org", org, "err", settled.failed[org])
	}

	// Pausing settles each sandbox's final seconds through the runtime
	// service, under each runtime's lock.
	done := map[string]bool{}
	for _, org := range slices.Sorted(maps.Keys(settled.ran)) {
		l.logger.InfoContext(ctx, "org out of credits; pausing its compute", "org", org, "runtimes", len(running[org]))
		for _, id := range running[org] {
			if !done[id] && l.pause(ctx, id, store.PauseInsufficientCredits) {
				res.PausedCredits++
			}
			done[id] = true
		}
	}
	for _, id := range seatless {
		if !done[id] && l.pause(ctx, id, store.PauseMemberLimitExceeded) {
			res.PausedSeats++
		}
		done[id] = true
	}
	res.Storage, err = l.chargeSnapshots(ctx, upTo)
	return res, err
}

// orgDue is settlements of one org.
type orgDue struct {
	org string
	due []store.Settlement
}

// settleAll makes the settlements in due and returns what they did.
//
// It settles org by org, in order of org id, in transactions of about
// batchRows rows holding whole orgs (an org with more rows spans several).
// Every journal index but the entry id's begins with the org, so a
// transaction that settles a few orgs entirely writes a few runs of
// adjacent index pages; one that took a slice of every org, as batches in
// the scan's order (by sandbox id) did, rewrote pages all over each index
// every time, and that was most of a tick's cost.
func (l *Ledger) settleAll(ctx context.Context, due map[string][]store.Settlement) (batchResult, error) {
	all := newBatchResult()
	orgs := slices.Sorted(maps.Keys(due))
	var batch []orgDue
	size := 0
	for i, org := range orgs {
		for ss := due[org]; len(ss) > 0; {
			n := min(len(ss), batchRows-size)
			batch = append(batch, orgDue{org, ss[:n]})
			ss, size = ss[n:], size+n
			if size < batchRows && i < len(orgs)-1 {
				continue // room for the next org
			}
			b, err := l.settleBatch(ctx, batch)
			if err != nil {
				return all, err
			}
			all.add(b)
			batch, size = batch[:0], 0
		}
	}
	return all, nil
}

// settleBatch settles a batch of orgs' rows in one transaction. If
// anything fails, that transaction rolls back and the batch is settled
// again one org per transaction, so a failing org undoes only its own
// settlements: the others are charged and it is recorded in failed, to be
// retried next tick. Only a cancelled ctx ends it with an error.
func (l *Ledger) settleBatch(ctx context.Context, batch []orgDue) (batchResult, error) {
	var b batchResult
	err := l.store.InTx(ctx, func(q store.Queries) error {
		b = newBatchResult()
		for _, od := range batch {
			if err := b.settle(ctx, q, od.org, od.due); err != nil {
				return fmt.Errorf("org %s: %w", od.org, err)
			}
		}
		return nil
	})
	if err == nil || ctx.Err() != nil {
		return b, err
	}
	b = newBatchResult()
	for _, od := range batch {
		var one batchResult
		err := l.store.InTx(ctx, func(q store.Queries) error {
			one = newBatchResult()
			return one.settle(ctx, q, od.org, od.due)
		})
		switch {
		case ctx.Err() != nil:
			return b, err
		case err != nil:
			b.failed[od.org] = err
		default:
			b.add(one)
		}
	}
	return b, nil
}

// batchResult is what settling a batch, or all of a tick's, did.
type batchResult struct {
	TickResult
	ran    map[string]bool  // orgs whose credits ran out
	failed map[string]error // org → the first failure of its settlements
}

func newBatchResult() batchResult {
	return batchResult{ran: map[string]bool{}, failed: map[string]error{}}
}

// settle applies one org's settlements of the batch. A settlement the store
// refused changed nothing: a stale one is counted, any other failure is
// recorded against the org, and the rest of its settlements stand. An
// error means the transaction must roll back.
func (b *batchResult) settle(ctx context.Context, q store.CreditQueries, org string, due []store.Settlement) error {
	es, errs, err := q.SettleMany(ctx, org, due)
	if err != nil {
		return err
	}
	for i, err := range errs {
		if pe, ok := errdefs.Public(err); ok && pe.Code == "settlement_stale" {
			b.Stale++
			continue
		}
		if err != nil {
			if b.failed[org] == nil {
				b.failed[org] = fmt.Errorf("sandbox %s: %w", due[i].SandboxID, err)
			}
			continue
		}
		e := es[i]
		b.Settled++
		b.ChargedMicros -= e.AmountMicros
		b.ShortfallMicros += e.ShortfallMicros
		if e.ShortfallMicros > 0 || e.BalanceAfterMicros == 0 {
			b.ran[org] = true
		}
	}
	return nil
}

// add adds what another transaction did.
func (b *batchResult) add(o batchResult) {
	b.Settled += o.Settled
	b.ChargedMicros += o.ChargedMicros
	b.ShortfallMicros += o.ShortfallMicros
	b.Stale += o.Stale
	for org := range o.ran {
		b.ran[org] = true
	}
	for org, err := range o.failed {
		if b.failed[org] == nil {
			b.failed[org] = err
		}
	}
}

// SettlerConfig configures a Settler.
type SettlerConfig struct {
	// Interval between ticks; 0 means 30 seconds.
	Interval time.Duration
	// Ticks, when set, drives the settler instead of a timer (for tests).
	Ticks <-chan time.Time
	// AfterTick, when set, is called after each tick with its result.
	AfterTick func(TickResult, error)
}

// DefaultSettleInterval is the settler's default tick interval.
const DefaultSettleInterval = 30 * time.Second

// Settler runs Ledger.Tick periodically in one goroutine it owns: Start
// starts it, Stop cancels a tick in progress and waits for it to end.
type Settler struct {
	l    *Ledger
	cfg  SettlerConfig
	once sync.Once

	cancel context.CancelFunc
	done   chan struct{}
}

// NewSettler returns a settler of l.
func NewSettler(l *Ledger, cfg SettlerConfig) *Settler {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultSettleInterval
	}
	return &Settler{l: l, cfg: cfg, done: make(chan struct{})}
}

// Start starts the settler's goroutine. It is called at most once.
func (s *Settler) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go func() {
		defer close(s.done)
		s.Run(ctx)
	}()
}

// Run ticks until ctx ends, and returns when the tick in progress has
// (the server runs it while its replica holds the settler's lease).
func (s *Settler) Run(ctx context.Context) {
	ticks := s.cfg.Ticks
	if ticks == nil {
		ticker := time.NewTicker(s.cfg.Interval)
		defer ticker.Stop()
		ticks = ticker.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
		}
		res, err := s.l.Tick(ctx)
		switch {
		case errors.Is(err, context.Canceled):
			return
		case err != nil:
			s.l.logger.ErrorContext(ctx, "settler tick failed", "err", err)
		case res.Settled > 0 || res.FailedOrgs > 0 || res.PausedCredits > 0 || res.PausedSeats > 0:
			s.l.logger.DebugContext(ctx, "settled running sandboxes", "scanned", res.Scanned, "settled", res.Settled,
				"charged", FormatCredits(res.ChargedMicros), "shortfall", FormatCredits(res.ShortfallMicros),
				"failed_orgs", res.FailedOrgs, "paused_credits", res.PausedCredits, "paused_seats", res.PausedSeats)
		}
		if s.cfg.AfterTick != nil {
			s.cfg.AfterTick(res, err)
		}
	}
}

// Stop stops the settler and waits for its goroutine. It is safe to call
// more than once, and without Start.
func (s *Settler) Stop() {
	s.once.Do(func() {
		if s.cancel == nil {
			close(s.done)
			return
		}
		s.cancel()
	})
	<-s.done
}
