// Package ledger is paddock's money: the price of compute, org credit
// balances and their append-only journal, the settler that charges running
// sandboxes, auto-pause when an org's credits or a workspace's seats run
// out, and usage reports.
//
// Amounts are integers in micro-credits. Every movement is a journal entry
// with an idempotency key unique per org, so a retried request never moves
// money twice. A deduction changes the balance, the sandbox's row
// (BilledMicros and its LastSettledAt watermark) and the journal in one
// transaction inside the store, and never takes the balance below zero:
// what it cannot take is recorded as a shortfall, and the org's running
// sandboxes are paused with pause_reason insufficient_credits.
//
// The pieces:
//
//   - Pricing and Class (pricing.go): resource classes, micro-credits per
//     core-second and per GiB-second, per provider.
//   - Meter (meter.go): the runtime.Billing the runtime service calls in
//     its transactions. A start or resume holds the first slice of compute
//     (402 when the org cannot pay or its workspace is over its member
//     limit), captures it as the compute begins running (the slice is
//     prepaid), and a pause, reset or kill settles the final seconds,
//     refunding prepaid time that did not run.
//   - Ledger (this file): grants, balances, the journal, usage, workspace
//     members and limits, and auto-pause.
//   - Settler (settler.go): a goroutine that charges every running sandbox
//     up to now on each tick.
package ledger

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Pauser pauses a runtime: the runtime service, which serializes actions
// per runtime.
type Pauser interface {
	Pause(ctx context.Context, runtimeID string, reason store.PauseReason) (store.Runtime, error)
}

// Store is what the ledger uses of the store: accounts, the journal and
// usage, the settler's scan, seats, the runtimes of a workspace over its
// member limit, and transactions (postings and settlements are made in
// them).
type Store interface {
	store.Transactor
	GetCreditAccount(ctx context.Context, orgID string) (store.CreditAccount, error)
	ListJournal(ctx context.Context, f store.JournalFilter, page store.Page) ([]store.JournalEntry, string, error)
	SumUsage(ctx context.Context, q store.UsageQuery) ([]store.UsageRow, error)
	ListOpenHolds(ctx context.Context, orgID string, page store.Page) ([]store.JournalEntry, string, error)
	ListRunningSandboxes(ctx context.Context, afterID string, limit int) ([]store.Sandbox, error)
	ListSnapshotsAfter(ctx context.Context, afterID string, limit int) ([]store.Snapshot, error)
	ChargeSnapshotStorage(ctx context.Context, c store.SnapshotCharge) (store.JournalEntry, error)

	AddWorkspaceMember(ctx context.Context, m store.WorkspaceMember) error
	RemoveWorkspaceMember(ctx context.Context, workspaceID, userID string) error
	ListWorkspaceMembers(ctx context.Context, workspaceID string, page store.Page) ([]store.WorkspaceMember, string, error)
	GetWorkspaceSeats(ctx context.Context, workspaceID string) (store.WorkspaceSeats, error)
	SetWorkspaceMemberLimit(ctx context.Context, workspaceID string, limit int) error
	ListWorkspacesOverMemberLimit(ctx context.Context) ([]store.WorkspaceSeats, error)

	ListRuntimes(ctx context.Context, workspaceID string, page store.Page) ([]store.Runtime, string, error)
}

// Config configures a Ledger.
type Config struct {
	Store Store
	Meter *Meter
	// Runtimes pauses compute when an org's credits or a workspace's
	// seats run out; nil pauses nothing.
	Runtimes Pauser
	// NewOrgMicros are the credits every new org starts with (0 = none).
	NewOrgMicros int64
	// Now is the clock; nil means time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Ledger is the credits service.
type Ledger struct {
	store    Store
	meter    *Meter
	runtimes Pauser
	newOrg   int64
	now      func() time.Time
	logger   *slog.Logger
}

// New returns a Ledger.
func New(cfg Config) *Ledger {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	meter := cfg.Meter
	if meter == nil {
		meter = NewMeter(Free)
	}
	return &Ledger{
		store:    cfg.Store,
		meter:    meter,
		runtimes: cfg.Runtimes,
		newOrg:   cfg.NewOrgMicros,
		now:      func() time.Time { return now().UTC().Truncate(time.Microsecond) },
		logger:   logger,
	}
}

// Meter returns the ledger's meter.
func (l *Ledger) Meter() *Meter { return l.meter }

// Account returns an org's credit account.
func (l *Ledger) Account(ctx context.Context, orgID string) (store.CreditAccount, error) {
	return l.store.GetCreditAccount(ctx, orgID)
}

// OpenOrg grants a new org its starting credits, inside the transaction
// that creates it.
func (l *Ledger) OpenOrg(ctx context.Context, q store.CreditQueries, orgID string) error {
	if l.newOrg <= 0 {
		return nil
	}
	_, err := q.PostCredit(ctx, store.CreditPosting{
		OrgID: orgID, Kind: store.EntryGrant, AmountMicros: l.newOrg,
		IdempotencyKey: "new-org", Note: "starting credits", At: l.now(),
	})
	return err
}

// Movement is a grant or a balance an admin sets.
type Movement struct {
	OrgID          string
	AmountMicros   int64 // the grant, or the new balance
	IdempotencyKey string
	Note           string
	Actor          string // the API key that asked
}

// Grant adds credits to an org. A movement retried with the same
// idempotency key returns the first entry and replayed true; the same key
// with another amount is 409 idempotency_key_reused. Granting resumes
// nothing: paused sandboxes stay paused until someone resumes them.
func (l *Ledger) Grant(ctx context.Context, m Movement) (store.JournalEntry, bool, error) {
	if m.AmountMicros <= 0 {
		return store.JournalEntry{}, false, errdefs.InvalidArgument("invalid_amount", "a grant must be a positive amount")
	}
	return l.post(ctx, store.EntryGrant, m)
}

// SetBalance sets an org's balance (an adjustment), as an admin correction
// or to prepare a test. Idempotent like Grant.
func (l *Ledger) SetBalance(ctx context.Context, m Movement) (store.JournalEntry, bool, error) {
	return l.post(ctx, store.EntryAdjustment, m)
}

// post records a grant or adjustment once per idempotency key.
func (l *Ledger) post(ctx context.Context, kind store.EntryKind, m Movement) (store.JournalEntry, bool, error) {
	if m.AmountMicros < 0 || m.AmountMicros > MaxAmountMicros {
		return store.JournalEntry{}, false, errdefs.InvalidArgument("invalid_amount", "an amount must be between 0 and %s credits", FormatCredits(MaxAmountMicros))
	}
	p := store.CreditPosting{
		OrgID: m.OrgID, Kind: kind, AmountMicros: m.AmountMicros,
		IdempotencyKey: m.IdempotencyKey, Note: m.Note, Actor: m.Actor, At: l.now(),
	}
	var (
		e        store.JournalEntry
		replayed bool
		raced    bool // the insert lost to a concurrent post of the same key
	)
	attempt := func() error {
		return l.store.InTx(ctx, func(q store.Queries) error {
			prev, err := q.GetJournalEntryByKey(ctx, m.OrgID, m.IdempotencyKey)
			switch {
			case err == nil:
				if !samePosting(prev, p) {
					return errdefs.Conflict(CodeKeyReused,
						"idempotency key %q was already used for another movement (a %s to %s credits)", m.IdempotencyKey, prev.Kind, FormatCredits(postedAmount(prev)))
				}
				e, replayed = prev, true
				return nil
			case !errdefs.IsNotFound(err):
				return err
			}
			e, err = q.PostCredit(ctx, p)
			raced = errdefs.IsConflict(err)
			return err
		})
	}
	err := attempt()
	if raced {
		// A concurrent request with the same key won the insert (possible
		// where transactions are not serialized): compare with it.
		err = attempt()
	}
	return e, replayed, err
}

// postedAmount is what a grant or adjustment asked for.
func postedAmount(e store.JournalEntry) int64 {
	if e.Kind == store.EntryAdjustment {
		return e.BalanceAfterMicros
	}
	return e.AmountMicros
}

func samePosting(e store.JournalEntry, p store.CreditPosting) bool {
	return e.Kind == p.Kind && postedAmount(e) == p.AmountMicros && e.SandboxID == p.SandboxID
}

// Journal lists an org's credit movements newest first.
func (l *Ledger) Journal(ctx context.Context, f store.JournalFilter, page store.Page) ([]store.JournalEntry, string, error) {
	return l.store.ListJournal(ctx, f, page)
}

// Usage sums what an org's compute cost, grouped.
func (l *Ledger) Usage(ctx context.Context, q store.UsageQuery) ([]store.UsageRow, error) {
	return l.store.SumUsage(ctx, q)
}

// OpenHolds lists an org's holds that still reserve credits, newest
// first: the starts and resumes neither captured nor released yet.
func (l *Ledger) OpenHolds(ctx context.Context, orgID string, page store.Page) ([]store.JournalEntry, string, error) {
	return l.store.ListOpenHolds(ctx, orgID, page)
}

// AddMember adds a user to a workspace. Going over the member limit
// pauses the workspace's running compute.
func (l *Ledger) AddMember(ctx context.Context, ws store.Workspace, userID string) (store.WorkspaceMember, error) {
	m := store.WorkspaceMember{ID: uuid.NewString(), OrgID: ws.OrgID, WorkspaceID: ws.ID, UserID: userID, CreatedAt: l.now()}
	if err := l.store.AddWorkspaceMember(ctx, m); err != nil {
		return store.WorkspaceMember{}, err
	}
	l.EnforceSeats(ctx, ws.ID)
	return m, nil
}

// RemoveMember removes a user from a workspace. Paused compute stays
// paused.
func (l *Ledger) RemoveMember(ctx context.Context, ws store.Workspace, userID string) error {
	return l.store.RemoveWorkspaceMember(ctx, ws.ID, userID)
}

// Members lists a workspace's members.
func (l *Ledger) Members(ctx context.Context, ws store.Workspace, page store.Page) ([]store.WorkspaceMember, string, error) {
	return l.store.ListWorkspaceMembers(ctx, ws.ID, page)
}

// Seats returns a workspace's member limit and count.
func (l *Ledger) Seats(ctx context.Context, ws store.Workspace) (store.WorkspaceSeats, error) {
	return l.store.GetWorkspaceSeats(ctx, ws.ID)
}

// SetMemberLimit sets a workspace's member limit (0 = none). A limit below
// the members pauses the workspace's running compute.
func (l *Ledger) SetMemberLimit(ctx context.Context, ws store.Workspace, limit int) (store.WorkspaceSeats, error) {
	if err := l.store.SetWorkspaceMemberLimit(ctx, ws.ID, limit); err != nil {
		return store.WorkspaceSeats{}, err
	}
	l.EnforceSeats(ctx, ws.ID)
	return l.store.GetWorkspaceSeats(ctx, ws.ID)
}

// EnforceSeats pauses the running runtimes of a workspace over its member
// limit with pause_reason member_limit_exceeded, and returns how many it
// paused. Failures are logged; the settler enforces again on every tick.
func (l *Ledger) EnforceSeats(ctx context.Context, workspaceID string) int {
	seats, err := l.store.GetWorkspaceSeats(ctx, workspaceID)
	if err != nil {
		l.logger.ErrorContext(ctx, "reading workspace seats", "workspace", workspaceID, "err", err)
		return 0
	}
	if !seats.OverLimit() {
		return 0
	}
	paused := 0
	page := store.Page{Limit: store.MaxLimit}
	for {
		rts, next, err := l.store.ListRuntimes(ctx, workspaceID, page)
		if err != nil {
			l.logger.ErrorContext(ctx, "listing runtimes to pause", "workspace", workspaceID, "err", err)
			return paused
		}
		for _, rt := range rts {
			if rt.Status == store.RuntimeRunning && l.pause(ctx, rt.ID, store.PauseMemberLimitExceeded) {
				paused++
			}
		}
		if next == "" {
			return paused
		}
		page.Cursor = next
	}
}

// pause pauses one runtime and reports whether it did. A runtime that is
// no longer running, or that another action holds, is left alone.
func (l *Ledger) pause(ctx context.Context, runtimeID string, reason store.PauseReason) bool {
	if l.runtimes == nil {
		return false
	}
	_, err := l.runtimes.Pause(ctx, runtimeID, reason)
	switch {
	case err == nil:
		l.logger.InfoContext(ctx, "runtime auto-paused", "runtime", runtimeID, "reason", reason)
		return true
	case errdefs.IsConflict(err) || errdefs.IsNotFound(err) || errors.Is(err, context.Canceled):
		l.logger.DebugContext(ctx, "runtime not auto-paused", "runtime", runtimeID, "reason", reason, "err", err)
	default:
		l.logger.WarnContext(ctx, "auto-pausing a runtime failed", "runtime", runtimeID, "reason", reason, "err", err)
	}
	return false
}
