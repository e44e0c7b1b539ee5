package ledger

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
)

// Public error codes of billing.
const (
	CodeInsufficientCredits = "insufficient_credits"
	CodeMemberLimitExceeded = "member_limit_exceeded"
	CodeKeyReused           = "idempotency_key_reused"
)

// Idempotency key prefixes of the entries the meter writes. A hold's key
// is "hold:<sandbox>:<nonce>"; the charge that captures it and the release
// that frees it share its suffix, so at most one of them can ever exist.
const (
	keyHold    = "hold:"
	keyCharge  = "charge:"
	keyRelease = "release:"
	keySettle  = "settle:"
	keyRefund  = "refund:"
)

// Meter prices compute and moves credits for the runtime service: it is
// the runtime.Billing the service calls inside its transactions.
type Meter struct {
	pricing Pricing
}

var _ runtime.Billing = (*Meter)(nil)

// NewMeter returns a meter with pricing p (validate it first).
func NewMeter(p Pricing) *Meter {
	return &Meter{pricing: p}
}

// Pricing returns the meter's price list.
func (m *Meter) Pricing() Pricing { return m.pricing }

// ClassOf returns a sandbox's resource class.
func (m *Meter) ClassOf(sb store.Sandbox) Class {
	return m.pricing.ClassOf(sb.Provider, sb.CPUMillis, sb.MemoryMB)
}

// RunningMicros is sb's running credits at now: the running time since
// its billing watermark, priced. It is zero unless sb is running, and
// while sb runs on prepaid time.
func (m *Meter) RunningMicros(sb store.Sandbox, now time.Time) int64 {
	if sb.State != store.SandboxRunning {
		return 0
	}
	return m.ClassOf(sb).Cost(now.Sub(watermark(sb)))
}

// watermark is where sb's unbilled running time starts: where it was last
// settled up to, or when it last began running if that is later (time
// paused is never billed; the lifecycle records when running began, the
// ledger alone moves LastSettledAt).
func watermark(sb store.Sandbox) time.Time {
	w := sb.LastSettledAt
	if sb.RunningSince.After(w) {
		w = sb.RunningSince
	}
	if w.IsZero() {
		return sb.StartedAt
	}
	return w
}

// due returns the settlement that charges sb's running time up to upTo,
// or false when nothing is due.
func (m *Meter) due(sb store.Sandbox, upTo time.Time) (store.Settlement, bool) {
	from := watermark(sb)
	if sb.State != store.SandboxRunning || from.IsZero() || !upTo.After(from) {
		return store.Settlement{}, false
	}
	amount := m.ClassOf(sb).Cost(upTo.Sub(from))
	if amount <= 0 {
		return store.Settlement{}, false // less than a micro-credit: it waits for more
	}
	return store.Settlement{
		OrgID:          sb.OrgID,
		SandboxID:      sb.ID,
		From:           sb.LastSettledAt,
		Since:          from,
		UpTo:           upTo,
		AmountMicros:   amount,
		IdempotencyKey: keySettle + sb.ID + ":" + span(from, upTo),
		At:             upTo,
	}, true
}

func span(a, b time.Time) string {
	return strconv.FormatInt(a.UnixMicro(), 10) + "-" + strconv.FormatInt(b.UnixMicro(), 10)
}

// ErrMemberLimit is the refusal of compute in a workspace over its member
// limit.
func errMemberLimit(s store.WorkspaceSeats) error {
	return errdefs.PaymentRequired(CodeMemberLimitExceeded,
		"the workspace has %d members and its limit is %d; remove members or raise the limit to use its compute", s.Members, s.MemberLimit)
}

// Reserve holds the first slice of sb's compute before it starts or
// resumes. It refuses with 402 member_limit_exceeded when sb's workspace
// has more members than its limit, and with 402 insufficient_credits when
// the org cannot pay for the slice.
func (m *Meter) Reserve(ctx context.Context, q runtime.BillingTx, sb store.Sandbox, at time.Time) error {
	if sb.WorkspaceID != "" {
		seats, err := q.GetWorkspaceSeats(ctx, sb.WorkspaceID)
		switch {
		case err == nil && seats.OverLimit():
			return errMemberLimit(seats)
		case err != nil && !errdefs.IsNotFound(err):
			return err
		}
	}
	// A hold an interrupted start or resume left behind is freed first.
	if err := m.releaseOpenHold(ctx, q, sb.OrgID, sb.ID, at); err != nil {
		return err
	}
	class := m.ClassOf(sb)
	amount := class.Cost(m.pricing.FirstSlice)
	if amount == 0 {
		return nil
	}
	acct, err := q.GetCreditAccount(ctx, sb.OrgID)
	if err != nil {
		return err
	}
	insufficient := func(avail int64) error {
		return errdefs.PaymentRequired(CodeInsufficientCredits,
			"the org has %s credits available; this sandbox needs %s for its first %s (%s credits per hour); grant the org credits",
			FormatCredits(avail), FormatCredits(amount), m.pricing.FirstSlice, FormatCredits(class.PerHour()))
	}
	if acct.AvailableMicros() < amount {
		return insufficient(acct.AvailableMicros())
	}
	_, err = q.PostCredit(ctx, store.CreditPosting{
		OrgID:          sb.OrgID,
		Kind:           store.EntryHold,
		AmountMicros:   amount,
		SandboxID:      sb.ID,
		RuntimeID:      sb.RuntimeID,
		ProjectID:      sb.ProjectID,
		WorkspaceID:    sb.WorkspaceID,
		IdempotencyKey: keyHold + sb.ID + ":" + uuid.NewString(),
		Note:           "first " + m.pricing.FirstSlice.String() + " of compute",
		At:             at,
	})
	if errors.Is(err, errdefs.ErrPaymentRequired) {
		return insufficient(0)
	}
	return err
}

// Capture turns the sandbox's open hold into the charge for its first
// slice as it begins running at `at`: the slice is prepaid and the row's
// watermark moves to its end. Without a hold (free compute) it does
// nothing.
func (m *Meter) Capture(ctx context.Context, q runtime.BillingTx, sandboxID string, at time.Time) error {
	sb, err := q.GetSandbox(ctx, sandboxID)
	if err != nil {
		return err
	}
	h, open, err := m.openHold(ctx, q, sb.OrgID, sb.ID)
	if err != nil || !open {
		return err
	}
	_, err = q.Settle(ctx, store.Settlement{
		OrgID:             sb.OrgID,
		SandboxID:         sb.ID,
		From:              sb.LastSettledAt,
		Since:             at,
		UpTo:              at.Add(m.pricing.FirstSlice),
		AmountMicros:      h.HeldMicros,
		ReleaseHeldMicros: h.HeldMicros,
		IdempotencyKey:    keyCharge + strings.TrimPrefix(h.IdempotencyKey, keyHold),
		Note:              "first " + m.pricing.FirstSlice.String() + " prepaid",
		At:                at,
	})
	return err
}

// Settle closes the sandbox's books up to at, before it stops accruing:
// an open hold is released (its compute never ran), running time past the
// watermark is charged, and prepaid time after at is refunded.
func (m *Meter) Settle(ctx context.Context, q runtime.BillingTx, sandboxID string, at time.Time) error {
	sb, err := q.GetSandbox(ctx, sandboxID)
	if err != nil {
		return err
	}
	if err := m.releaseOpenHold(ctx, q, sb.OrgID, sb.ID, at); err != nil {
		return err
	}
	if st, ok := m.due(sb, at); ok {
		_, err := q.Settle(ctx, st)
		return err
	}
	if sb.State != store.SandboxRunning || !at.Before(sb.LastSettledAt) {
		return nil
	}
	refund := m.ClassOf(sb).Cost(sb.LastSettledAt.Sub(at))
	if refund <= 0 {
		return nil
	}
	_, err = q.Settle(ctx, store.Settlement{
		OrgID:          sb.OrgID,
		SandboxID:      sb.ID,
		From:           sb.LastSettledAt,
		UpTo:           at,
		AmountMicros:   -refund,
		IdempotencyKey: keyRefund + sb.ID + ":" + span(at, sb.LastSettledAt),
		Note:           "prepaid compute that did not run",
		At:             at,
	})
	return err
}

// openHold returns the sandbox's newest hold if neither a charge nor a
// release has closed it.
func (m *Meter) openHold(ctx context.Context, q store.CreditQueries, orgID, sandboxID string) (store.JournalEntry, bool, error) {
	hs, _, err := q.ListJournal(ctx, store.JournalFilter{OrgID: orgID, SandboxID: sandboxID, Kind: store.EntryHold}, store.Page{Limit: 1})
	if err != nil || len(hs) == 0 {
		return store.JournalEntry{}, false, err
	}
	h := hs[0]
	suffix := strings.TrimPrefix(h.IdempotencyKey, keyHold)
	for _, key := range []string{keyCharge + suffix, keyRelease + suffix} {
		_, err := q.GetJournalEntryByKey(ctx, orgID, key)
		if err == nil {
			return h, false, nil
		}
		if !errdefs.IsNotFound(err) {
			return h, false, err
		}
	}
	return h, true, nil
}

// releaseOpenHold frees the sandbox's open hold, if any.
func (m *Meter) releaseOpenHold(ctx context.Context, q store.CreditQueries, orgID, sandboxID string, at time.Time) error {
	h, open, err := m.openHold(ctx, q, orgID, sandboxID)
	if err != nil || !open {
		return err
	}
	_, err = q.PostCredit(ctx, store.CreditPosting{
		OrgID:          orgID,
		Kind:           store.EntryRelease,
		AmountMicros:   h.HeldMicros,
		SandboxID:      h.SandboxID,
		RuntimeID:      h.RuntimeID,
		ProjectID:      h.ProjectID,
		WorkspaceID:    h.WorkspaceID,
		IdempotencyKey: keyRelease + strings.TrimPrefix(h.IdempotencyKey, keyHold),
		Note:           "the compute never ran",
		At:             at,
	})
	return err
}
