package ledger

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// settleBatch is how many running rows one transaction of a tick settles.
const settleBatch = 500

// TickResult is what one settler tick did.
type TickResult struct {
	Scanned         int   // running sandboxes seen
	Settled         int   // deductions recorded
	ChargedMicros   int64 // credits they took
	ShortfallMicros int64 // credits they could not take
	Stale           int   // rows another writer settled first (retried next tick)
	PausedCredits   int   // runtimes paused for insufficient credits
	PausedSeats     int   // runtimes paused for a workspace over its member limit
}

// Tick charges every running sandbox up to now, then pauses the running
// runtimes of each org whose balance ran out and of each workspace over
// its member limit. Deductions are made in transactions of settleBatch
// rows; each is guarded by the row's watermark, so a sandbox that an
// action settled meanwhile is skipped, never charged twice.
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
		exhausted = map[string]bool{}     // orgs whose credits ran out
		running   = map[string][]string{} // org → its running runtimes
		seatless  []string                // running runtimes in workspaces over their limit
	)
	after := ""
	for {
		rows, err := l.store.ListRunningSandboxes(ctx, after, settleBatch)
		if err != nil {
			return res, err
		}
		if len(rows) == 0 {
			break
		}
		after = rows[len(rows)-1].ID
		due := make([]store.Settlement, 0, len(rows))
		for _, sb := range rows {
			res.Scanned++
			if sb.RuntimeID != "" {
				running[sb.OrgID] = append(running[sb.OrgID], sb.RuntimeID)
				if overWS[sb.WorkspaceID] {
					seatless = append(seatless, sb.RuntimeID)
				}
			}
			if st, ok := l.meter.due(sb, upTo); ok {
				due = append(due, st)
			}
		}
		if len(due) == 0 {
			continue
		}
		var batch TickResult
		ran := map[string]bool{}
		err = l.store.InTx(ctx, func(q store.Queries) error {
			batch, ran = TickResult{}, map[string]bool{}
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
				batch.ShortfallMicros += e.ShortfallMicros
				if e.ShortfallMicros > 0 || e.BalanceAfterMicros == 0 {
					ran[e.OrgID] = true
				}
			}
			return nil
		})
		if err != nil {
			return res, err
		}
		res.Settled += batch.Settled
		res.ChargedMicros += batch.ChargedMicros
		res.ShortfallMicros += batch.ShortfallMicros
		res.Stale += batch.Stale
		for org := range ran {
			exhausted[org] = true
		}
	}

	// Pausing settles each sandbox's final seconds through the runtime
	// service, under each runtime's lock.
	orgs := make([]string, 0, len(exhausted))
	for org := range exhausted {
		orgs = append(orgs, org)
	}
	slices.Sort(orgs)
	done := map[string]bool{}
	for _, org := range orgs {
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
	return res, nil
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
	ticks := s.cfg.Ticks
	var ticker *time.Ticker
	if ticks == nil {
		ticker = time.NewTicker(s.cfg.Interval)
		ticks = ticker.C
	}
	go func() {
		defer close(s.done)
		if ticker != nil {
			defer ticker.Stop()
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
			case res.Settled > 0 || res.PausedCredits > 0 || res.PausedSeats > 0:
				s.l.logger.DebugContext(ctx, "settled running sandboxes", "scanned", res.Scanned, "settled", res.Settled,
					"charged", FormatCredits(res.ChargedMicros), "shortfall", FormatCredits(res.ShortfallMicros),
					"paused_credits", res.PausedCredits, "paused_seats", res.PausedSeats)
			}
			if s.cfg.AfterTick != nil {
				s.cfg.AfterTick(res, err)
			}
		}
	}()
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
