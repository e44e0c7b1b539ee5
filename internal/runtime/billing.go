package runtime

import (
	"context"
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
	Reserve(ctx context.Context, q BillingTx, sb store.Sandbox, at time.Time) error
	// Capture turns the sandbox's open hold, if any, into the charge for
	// its first slice as it begins running at `at`.
	Capture(ctx context.Context, q BillingTx, sandboxID string, at time.Time) error
	// Settle closes the sandbox's books up to at: running time past its
	// watermark is charged, prepaid time after at is refunded, and an
	// open hold is released.
	Settle(ctx context.Context, q BillingTx, sandboxID string, at time.Time) error
}

// BillingTx is what Billing uses of the transaction it is handed: the
// org's credits and seats, and the sandbox it bills.
type BillingTx interface {
	store.CreditQueries
	GetSandbox(ctx context.Context, id string) (store.Sandbox, error)
}

// bill moves credits for the change of a sandbox's state an action made,
// inside the action's transaction, before the new state is written:
// leaving running settles, entering running captures the hold the action
// placed.
func (s *Service) bill(ctx context.Context, q BillingTx, before, sb store.Sandbox, now time.Time) error {
	wasRunning, isRunning := before.State == store.SandboxRunning, sb.State == store.SandboxRunning
	switch {
	case s.billing == nil:
	case wasRunning && !isRunning:
		return s.billing.Settle(ctx, q, sb.ID, now)
	case !wasRunning && isRunning:
		return s.billing.Capture(ctx, q, sb.ID, now)
	}
	return nil
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
func (s *Service) settle(ctx context.Context, q BillingTx, sandboxID string, now time.Time) error {
	if s.billing == nil {
		return nil
	}
	return s.billing.Settle(ctx, q, sandboxID, now)
}
