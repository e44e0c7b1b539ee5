package runtime

import (
	"context"
	"reflect"
	"time"

	"github.com/paddockhq/paddock/internal/store"
)

// Billing charges for compute. The Service calls it inside its own
// transactions (q), so credits and ledger rows move together or not at
// all. A nil Billing makes compute free and records nothing.
//
// The life of a sandbox's money: a start or resume first Reserves a hold
// for the first slice of compute (refused with errdefs.ErrPaymentRequired
// when the org cannot pay or the workspace is over its member limit); as
// the sandbox begins running the hold is Captured, prepaying that slice;
// while it runs, the settler charges what it uses; when it stops running
// (pause, kill, reset) it is Settled up to that moment, which also refunds
// prepaid time that did not run and releases a hold whose compute never
// started.
type Billing interface {
	// Reserve places a hold for the first slice of sb's compute before it
	// starts (sb not yet stored) or resumes.
	Reserve(ctx context.Context, q store.Queries, sb store.Sandbox, at time.Time) error
	// Capture turns the sandbox's open hold, if any, into the charge for
	// its first slice as it begins running at `at`.
	Capture(ctx context.Context, q store.Queries, sandboxID string, at time.Time) error
	// Settle closes the sandbox's books up to at: running time past its
	// watermark is charged, prepaid time after at is refunded, and an
	// open hold is released.
	Settle(ctx context.Context, q store.Queries, sandboxID string, at time.Time) error
}

// bill moves credits for the change of sb's state an action made, inside
// the action's transaction: leaving running settles, entering running
// captures the hold the action placed. sb then carries the billed amount,
// watermark and version the ledger wrote, and any later expiry activity
// wrote, so the write that follows keeps them.
func (s *Service) bill(ctx context.Context, q store.Queries, before store.Sandbox, sb *store.Sandbox, now time.Time) error {
	wasRunning, isRunning := before.State == store.SandboxRunning, sb.State == store.SandboxRunning
	switch {
	case s.billing == nil:
	case wasRunning && !isRunning:
		if err := s.billing.Settle(ctx, q, sb.ID, now); err != nil {
			return err
		}
	case !wasRunning && isRunning:
		if err := s.billing.Capture(ctx, q, sb.ID, now); err != nil {
			return err
		}
	}
	cur, err := q.GetSandbox(ctx, sb.ID)
	if err != nil {
		return err
	}
	adoptLedger(sb, before, cur)
	return nil
}

// adoptLedger lets sb, read as before and changed in memory, be written
// over the stored row cur when the only writers since were the ledger (a
// settlement moves the billed amount and the watermark and bumps the
// version) and activity (which moves the expiry later). After any other
// change sb keeps its stale version, so its write fails as a lost race, as
// it always did.
func adoptLedger(sb *store.Sandbox, before, cur store.Sandbox) {
	if cur.Version == before.Version {
		return
	}
	a, b := before, cur
	for _, x := range []*store.Sandbox{&a, &b} {
		x.BilledMicros, x.LastSettledAt, x.Version, x.UpdatedAt = 0, time.Time{}, 0, time.Time{}
		x.ExpiresAt = time.Time{}
	}
	if !reflect.DeepEqual(a, b) {
		return
	}
	sb.BilledMicros, sb.LastSettledAt, sb.Version = cur.BilledMicros, cur.LastSettledAt, cur.Version
	if sb.ExpiresAt.Equal(before.ExpiresAt) && cur.ExpiresAt.After(sb.ExpiresAt) {
		sb.ExpiresAt = cur.ExpiresAt // the action kept the window; activity moved it
	}
}

// settleAfterFailure closes the books of a sandbox whose action failed
// after it may have placed a hold (a resume), in its own transaction. A
// failure here is logged: the settler and the next settlement retry.
func (s *Service) settleAfterFailure(ctx context.Context, sb store.Sandbox) {
	if s.billing == nil || sb.State != store.SandboxPaused {
		return
	}
	err := s.store.InTx(ctx, func(q store.Queries) error {
		return s.billing.Settle(ctx, q, sb.ID, s.now())
	})
	if err != nil {
		s.logger.ErrorContext(ctx, "releasing the hold of a failed action", "sandbox", sb.ID, "err", err)
	}
}

// settle closes a sandbox's books inside the caller's transaction before
// its row stops accruing.
func (s *Service) settle(ctx context.Context, q store.Queries, sandboxID string, now time.Time) error {
	if s.billing == nil {
		return nil
	}
	return s.billing.Settle(ctx, q, sandboxID, now)
}
