package api

import (
	"context"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/paddockhq/paddock/internal/auth"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// recentEntries is how many movements GET credits shows.
const recentEntries = 20

// maxKeyLen and maxNoteLen bound what a movement may carry.
const (
	maxKeyLen  = 255
	maxNoteLen = 1024
)

// creditsOrg resolves the ledger and {org}.
func (a *API) creditsOrg(r *http.Request) (*ledger.Ledger, store.Org, error) {
	o, err := a.org(r)
	return a.ledger, o, err
}

// creditsWorkspace resolves the ledger and {org}/{workspace}.
func (a *API) creditsWorkspace(r *http.Request) (*ledger.Ledger, store.Workspace, error) {
	_, ws, err := a.workspace(r)
	return a.ledger, ws, err
}

func entryOut(e store.JournalEntry) client.CreditEntry {
	return client.CreditEntry{
		ID: e.ID, Seq: e.Seq, Kind: string(e.Kind),
		Amount: ledger.Credits(e.AmountMicros), HeldChange: ledger.Credits(e.HeldMicros),
		BalanceAfter: ledger.Credits(e.BalanceAfterMicros), HeldAfter: ledger.Credits(e.HeldAfterMicros),
		Shortfall: ledger.Credits(e.ShortfallMicros),
		SandboxID: e.SandboxID, RuntimeID: e.RuntimeID, ProjectID: e.ProjectID, WorkspaceID: e.WorkspaceID,
		PeriodStart: timePtr(e.PeriodStart), PeriodEnd: timePtr(e.PeriodEnd),
		IdempotencyKey: e.IdempotencyKey, Note: e.Note, Actor: e.Actor, CreatedAt: e.CreatedAt,
	}
}

func (a *API) getCredits(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	l, o, err := a.creditsOrg(r)
	if err != nil {
		return err
	}
	acct, err := l.Account(ctx, o.ID)
	if err != nil {
		return err
	}
	es, _, err := l.Journal(ctx, store.JournalFilter{OrgID: o.ID}, store.Page{Limit: recentEntries})
	if err != nil {
		return err
	}
	out := client.CreditAccount{
		OrgID: o.ID, Balance: ledger.Credits(acct.BalanceMicros), Held: ledger.Credits(acct.HeldMicros),
		Available: ledger.Credits(acct.AvailableMicros()), UpdatedAt: timePtr(acct.UpdatedAt),
		Recent: make([]client.CreditEntry, 0, len(es)),
	}
	for _, e := range es {
		out.Recent = append(out.Recent, entryOut(e))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// movement validates what an admin asked to move.
func (a *API) movement(r *http.Request, o store.Org, amount float64, key, note string) (ledger.Movement, error) {
	micros, err := ledger.MicrosOf(amount)
	if err != nil {
		return ledger.Movement{}, err
	}
	switch {
	case key == "":
		return ledger.Movement{}, errdefs.InvalidArgument("invalid_idempotency_key", "idempotency_key is required: a retried request with the same key moves credits once")
	case len(key) > maxKeyLen || !utf8.ValidString(key) || strings.ContainsFunc(key, isControl):
		return ledger.Movement{}, errdefs.InvalidArgument("invalid_idempotency_key", "idempotency_key must be at most %d printable bytes", maxKeyLen)
	case len(note) > maxNoteLen || !utf8.ValidString(note):
		return ledger.Movement{}, errdefs.InvalidArgument("invalid_note", "note must be at most %d bytes of text", maxNoteLen)
	}
	return ledger.Movement{OrgID: o.ID, AmountMicros: micros, IdempotencyKey: key, Note: note, Actor: actor(identity(r))}, nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// moveCredits answers a grant or an adjustment of {org}'s credits: it
// decodes the request, checks the amount, key and note fields reads from
// it, posts the movement and answers 201 for a new entry, 200 for a retry
// that returns the first one.
func moveCredits[T any](a *API, w http.ResponseWriter, r *http.Request, fields func(T) (amount float64, key, note string), post func(ctx context.Context, l *ledger.Ledger, m ledger.Movement) (store.JournalEntry, bool, error)) error {
	l, o, err := a.creditsOrg(r)
	if err != nil {
		return err
	}
	var req T
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	amount, key, note := fields(req)
	m, err := a.movement(r, o, amount, key, note)
	if err != nil {
		return err
	}
	e, replayed, err := post(r.Context(), l, m)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if replayed {
		status = http.StatusOK
	}
	writeJSON(w, status, entryOut(e))
	return nil
}

func (a *API) grantCredits(w http.ResponseWriter, r *http.Request) error {
	return moveCredits(a, w, r,
		func(req client.GrantCreditsRequest) (float64, string, string) {
			return req.Amount, req.IdempotencyKey, req.Note
		},
		func(ctx context.Context, l *ledger.Ledger, m ledger.Movement) (store.JournalEntry, bool, error) {
			if m.AmountMicros <= 0 {
				return store.JournalEntry{}, false, errdefs.InvalidArgument("invalid_amount", "a grant must be at least 0.000001 credits")
			}
			return l.Grant(ctx, m)
		})
}

func (a *API) setCreditBalance(w http.ResponseWriter, r *http.Request) error {
	return moveCredits(a, w, r,
		func(req client.SetBalanceRequest) (float64, string, string) {
			return req.Balance, req.IdempotencyKey, req.Note
		},
		func(ctx context.Context, l *ledger.Ledger, m ledger.Movement) (store.JournalEntry, bool, error) {
			return l.SetBalance(ctx, m)
		})
}

// timeRange reads ?from= and ?to= (RFC 3339). Either may be absent.
func timeRange(r *http.Request) (from, to time.Time, err error) {
	q := r.URL.Query()
	parse := func(name string) (time.Time, error) {
		s := q.Get(name)
		if s == "" {
			return time.Time{}, nil
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return time.Time{}, errdefs.InvalidArgument("invalid_time", "%s must be an RFC 3339 time such as 2026-03-01T00:00:00Z", name)
		}
		return t.UTC(), nil
	}
	if from, err = parse("from"); err != nil {
		return from, to, err
	}
	if to, err = parse("to"); err != nil {
		return from, to, err
	}
	if !from.IsZero() && !to.IsZero() && !from.Before(to) {
		return from, to, errdefs.InvalidArgument("invalid_time_range", "from must be before to")
	}
	return from, to, nil
}

func (a *API) listCreditJournal(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	l, o, err := a.creditsOrg(r)
	if err != nil {
		return err
	}
	page, err := pageFrom(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := store.JournalFilter{
		OrgID:     o.ID,
		SandboxID: q.Get("sandbox_id"),
		RuntimeID: q.Get("runtime_id"),
		ProjectID: q.Get("project_id"),
		Kind:      store.EntryKind(q.Get("kind")),
	}
	for name, v := range map[string]string{"sandbox_id": f.SandboxID, "runtime_id": f.RuntimeID, "project_id": f.ProjectID} {
		if v != "" && !isUUID(v) {
			return errdefs.InvalidArgument("invalid_filter", "%s must be a UUID", name)
		}
	}
	if f.Kind != "" && !validKind(f.Kind) {
		return errdefs.InvalidArgument("invalid_filter", "kind must be one of grant, adjustment, hold, release, deduction, refund")
	}
	if f.From, f.To, err = timeRange(r); err != nil {
		return err
	}
	es, next, err := l.Journal(ctx, f, page)
	if err != nil {
		return listError(err)
	}
	writeJSON(w, http.StatusOK, listOf(es, next, entryOut))
	return nil
}

// listCreditHolds answers the org's open holds, newest first.
func (a *API) listCreditHolds(w http.ResponseWriter, r *http.Request) error {
	l, o, err := a.creditsOrg(r)
	if err != nil {
		return err
	}
	page, err := pageFrom(r)
	if err != nil {
		return err
	}
	hs, next, err := l.OpenHolds(r.Context(), o.ID, page)
	if err != nil {
		return listError(err)
	}
	writeJSON(w, http.StatusOK, listOf(hs, next, entryOut))
	return nil
}

func validKind(k store.EntryKind) bool {
	for _, x := range store.EntryKinds {
		if k == x {
			return true
		}
	}
	return false
}

// actor names who moved credits in the journal: the key's id, or the
// session.
func actor(id auth.Identity) string {
	if id.KeyID != "" {
		return id.KeyID
	}
	return id.Credential()
}
