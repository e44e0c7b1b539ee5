package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

const (
	// readChunk is how many ids one read asks for. Reads always bind this
	// many (unused slots hold "", which no row, key or entry id is), so one
	// prepared statement serves the whole transaction.
	readChunk = 64
	// writeChunk is the most rows one multi-row write carries. Writes are
	// cut into power-of-two chunks, so a transaction prepares at most six
	// texts of each.
	writeChunk = 32
)

// SettleMany settles many rows of one org as Settle would one by one, in a
// handful of statements: the settler's path, where the one-by-one cost was
// five statements and a journal insert's eight B-tree writes per row.
//
// It reads every row and every idempotency key the batch names first,
// then decides each settlement in memory, in order, against the balance,
// hold and watermark the earlier ones left. The checks and the pricing
// are Settle's, restated as checkSettlement, checkWatermark and
// settlementEntry so that Settle can share them; the conformance suite
// runs the same settlements both ways and compares. Because a used key is
// known before anything is written, the entries can then be appended by
// multi-row inserts without one refusal breaking the balance chain of the
// rest; the rows move by multi-row updates guarded by their billing
// versions, and the account is written once.
//
// Entries the store names get time-ordered ids (UUIDv7), so the journal's
// id index grows at its end: a random id costs a write on a random page
// of that index per entry, and once the journal is larger than the page
// cache, a read from disk as well.
func (q *queries) SettleMany(ctx context.Context, orgID string, ss []store.Settlement) ([]store.JournalEntry, []error, error) {
	if err := required(resJournal, "org id", orgID); err != nil {
		return nil, nil, err
	}
	b := settleBatch{orgID: orgID, ss: ss, entries: make([]store.JournalEntry, len(ss)), errs: make([]error, len(ss)),
		moved: map[string]*watermarkMove{}}
	valid := b.check()
	if len(valid) == 0 {
		return b.entries, b.errs, nil
	}
	err := q.atomic(ctx, func(q *queries) error {
		if err := b.read(ctx, q, valid); err != nil {
			return err
		}
		for _, i := range valid {
			if err := b.settle(ctx, q, i); err != nil {
				return err
			}
		}
		if len(b.applied) == 0 {
			return nil // the account is as it was
		}
		if err := q.insertEntries(ctx, b.entries, b.applied); err != nil {
			return err
		}
		if err := q.moveWatermarks(ctx, b.moves); err != nil {
			return err
		}
		return q.writeAccount(ctx, b.a, b.cur.BalanceMicros, b.cur.HeldMicros, b.last)
	})
	if err != nil {
		return nil, nil, err
	}
	for _, i := range b.applied {
		b.entries[i] = normEntry(b.entries[i])
	}
	return b.entries, b.errs, nil
}

// settleBatch is one SettleMany under way: its settlements ss of org
// orgID, the rows, keys and ids they touch, and what each came to.
type settleBatch struct {
	orgID   string
	ss      []store.Settlement
	entries []store.JournalEntry // by settlement: the entry it wrote
	errs    []error              // by settlement: why it was refused
	applied []int                // the settlements that wrote an entry

	rows      map[string]*store.Sandbox // as the settlements so far left them
	keys, ids map[string]bool           // idempotency keys and entry ids in use

	a, cur store.CreditAccount // the account as stored; as the settlements so far left it
	opened bool
	last   time.Time // the last applied settlement's time: the account's updated_at
	moves  []*watermarkMove
	moved  map[string]*watermarkMove
}

// check refuses the settlements of another org, and those checkSettlement
// refuses, and returns the others.
func (b *settleBatch) check() (valid []int) {
	for i, s := range b.ss {
		if s.OrgID != b.orgID {
			b.errs[i] = errdefs.InvalidArgument("invalid_settlement", "a settlement of org %q cannot be made with those of org %q", s.OrgID, b.orgID)
			continue
		}
		if b.errs[i] = checkSettlement(s); b.errs[i] == nil {
			valid = append(valid, i)
		}
	}
	return valid
}

// read reads the billing rows the valid settlements name, and which of
// their idempotency keys and entry ids are used already.
func (b *settleBatch) read(ctx context.Context, q *queries, valid []int) (err error) {
	b.rows, err = q.billingRows(ctx, pick(b.ss, valid, func(s store.Settlement) string { return s.SandboxID }))
	if err != nil {
		return err
	}
	b.keys, err = q.usedKeys(ctx, b.orgID, pick(b.ss, valid, func(s store.Settlement) string { return s.IdempotencyKey }))
	if err != nil {
		return err
	}
	b.ids, err = q.usedEntryIDs(ctx, pick(b.ss, valid, func(s store.Settlement) string { return s.ID }))
	return err
}

// settle applies settlement i after those before it, or records why it is
// refused: an unknown row, a stale watermark, a used key or id.
func (b *settleBatch) settle(ctx context.Context, q *queries, i int) (err error) {
	s := b.ss[i]
	sb := b.rows[s.SandboxID]
	if sb == nil || sb.OrgID != s.OrgID {
		b.errs[i] = notFound(resSandbox, nil)
		return nil
	}
	if b.errs[i] = checkWatermark(*sb, s); b.errs[i] != nil {
		return nil
	}
	if b.keys[s.IdempotencyKey] || b.ids[s.ID] {
		b.errs[i] = keyReused(s.IdempotencyKey)
		return nil
	}
	at := orNow(s.At)
	if !b.opened {
		if b.a, err = q.openAccount(ctx, b.orgID, at); err != nil {
			return err
		}
		b.cur, b.opened = b.a, true
	}
	e := settlementEntry(b.cur, *sb, s, at)
	if e.ID == "" {
		id, err := uuid.NewV7()
		if err != nil {
			return fmt.Errorf("sqlite store: name journal entry: %w", err)
		}
		e.ID = id.String()
	}
	b.keys[e.IdempotencyKey], b.ids[e.ID] = true, true
	m := b.moved[sb.ID]
	if m == nil {
		m = &watermarkMove{id: sb.ID, version: sb.BillingVersion}
		b.moved[sb.ID] = m
		b.moves = append(b.moves, m)
	}
	m.billed -= e.AmountMicros
	m.upTo = s.UpTo
	m.settlements++
	// A later settlement of the same row sees this one.
	sb.BilledMicros -= e.AmountMicros
	sb.LastSettledAt = s.UpTo.Truncate(time.Microsecond).UTC()
	b.cur.BalanceMicros, b.cur.HeldMicros = e.BalanceAfterMicros, e.HeldAfterMicros
	b.entries[i], b.last = e, at
	b.applied = append(b.applied, i)
	return nil
}

// checkSettlement refuses a settlement Settle would refuse before reading
// anything.
func checkSettlement(s store.Settlement) error {
	if err := required(resJournal, "org id", s.OrgID, "sandbox id", s.SandboxID); err != nil {
		return err
	}
	if err := checkKey(s.IdempotencyKey, s.Note); err != nil {
		return err
	}
	switch {
	case s.UpTo.IsZero():
		return errdefs.InvalidArgument("invalid_settlement", "a settlement needs the time it settles up to")
	case s.ReleaseHeldMicros < 0 || s.ReleaseHeldMicros > maxBalanceMicros:
		return errdefs.InvalidArgument("invalid_settlement", "the held amount to release must be between 0 and %s credits", credits(maxBalanceMicros))
	case s.AmountMicros > maxBalanceMicros || s.AmountMicros < -maxBalanceMicros:
		return errdefs.InvalidArgument("invalid_amount", "a settlement must be at most %s credits", credits(maxBalanceMicros))
	case s.AmountMicros == 0 && s.ReleaseHeldMicros == 0:
		return errdefs.InvalidArgument("invalid_amount", "a settlement must charge, refund or release something")
	}
	return nil
}

// checkWatermark refuses s unless it starts where sb was settled up to.
func checkWatermark(sb store.Sandbox, s store.Settlement) error {
	if sb.LastSettledAt.Equal(s.From.Truncate(time.Microsecond)) {
		return nil
	}
	return errdefs.Conflict("settlement_stale",
		"sandbox %s was settled up to %s, not %s; read it again", sb.ID, sb.LastSettledAt, s.From)
}

// keyReused is the refusal of an entry whose idempotency key (or id) the
// journal already holds, as appendEntry reports it.
func keyReused(key string) error {
	return errdefs.Conflict("idempotency_key_reused",
		"idempotency key %q was already used for another credit movement of this org", key)
}

// settlementEntry is the journal entry that records s against account a
// (the org's as it stands) for row sb: a deduction takes at most what is
// available plus the hold it captures, the rest is its shortfall; a refund
// returns at most what the row was billed. It carries the balance and held
// amount after it.
func settlementEntry(a store.CreditAccount, sb store.Sandbox, s store.Settlement, at time.Time) store.JournalEntry {
	relief := min(s.ReleaseHeldMicros, a.HeldMicros)
	var moved, shortfall int64 // moved: change to the balance and, negated, to the row's bill
	kind := store.EntryDeduction
	if s.AmountMicros >= 0 {
		// Credits held for other compute stay held.
		take := min(s.AmountMicros, a.AvailableMicros()+relief)
		moved, shortfall = -take, s.AmountMicros-take
	} else {
		kind = store.EntryRefund
		moved = min(-s.AmountMicros, sb.BilledMicros, maxBalanceMicros-a.BalanceMicros)
	}
	start, end := s.From, s.UpTo
	if s.Since.After(start) && !s.Since.After(end) {
		start = s.Since
	}
	if end.Before(start) {
		start, end = end, start
	}
	return store.JournalEntry{
		ID: s.ID, OrgID: s.OrgID, Kind: kind, AmountMicros: moved, HeldMicros: -relief,
		BalanceAfterMicros: a.BalanceMicros + moved, HeldAfterMicros: a.HeldMicros - relief, ShortfallMicros: shortfall,
		SandboxID: sb.ID, RuntimeID: sb.RuntimeID, ProjectID: sb.ProjectID, WorkspaceID: sb.WorkspaceID,
		PeriodStart: start, PeriodEnd: end, IdempotencyKey: s.IdempotencyKey, Note: s.Note, CreatedAt: at,
	}
}

// pick returns field of ss[i] for each i in idx, leaving out empty values.
func pick(ss []store.Settlement, idx []int, field func(store.Settlement) string) []string {
	out := make([]string, 0, len(idx))
	for _, i := range idx {
		if v := field(ss[i]); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// readEach runs query (whose last readChunk arguments are the values
// asked for, after fixed) for the values a chunk at a time and scans one
// column of each result row.
func readEach[T any](ctx context.Context, q *queries, query string, fixed []any, values []string, scan func(rowScanner) (T, error)) ([]T, error) {
	var out []T
	args := make([]any, len(fixed)+readChunk)
	copy(args, fixed)
	for len(values) > 0 {
		n := min(len(values), readChunk)
		for i := range readChunk {
			args[len(fixed)+i] = ""
			if i < n {
				args[len(fixed)+i] = values[i]
			}
		}
		values = values[n:]
		rows, err := q.queryRows(ctx, query, args...)
		if err != nil {
			return nil, err
		}
		got, err := collect(rows, scan)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	return out, nil
}

// billingRows reads what a settlement needs of each row in ids (the
// columns billingRow reads), by id; unknown ids are absent.
func (q *queries) billingRows(ctx context.Context, ids []string) (map[string]*store.Sandbox, error) {
	got, err := readEach(ctx, q, `SELECT id, org_id, workspace_id, project_id, runtime_id, billed_micros, last_settled_at, billing_version
		FROM sandboxes WHERE id IN (`+placeholders(readChunk)+")", nil, ids,
		func(sc rowScanner) (store.Sandbox, error) {
			var sb store.Sandbox
			var settled sql.NullInt64
			err := sc.Scan(&sb.ID, &sb.OrgID, &sb.WorkspaceID, &sb.ProjectID, &sb.RuntimeID, &sb.BilledMicros, &settled, &sb.BillingVersion)
			sb.LastSettledAt = fromMicros(settled)
			return sb, err
		})
	if err != nil {
		return nil, classify("read sandboxes", resSandbox, err)
	}
	out := make(map[string]*store.Sandbox, len(got))
	for i := range got {
		out[got[i].ID] = &got[i]
	}
	return out, nil
}

// usedKeys returns which of keys orgID's journal already holds.
func (q *queries) usedKeys(ctx context.Context, orgID string, keys []string) (map[string]bool, error) {
	return q.present(ctx, `SELECT idempotency_key FROM credit_journal
		WHERE org_id = ? AND idempotency_key IN (`+placeholders(readChunk)+")", []any{orgID}, keys)
}

// usedEntryIDs returns which of ids the journal already holds (ids are
// unique across orgs).
func (q *queries) usedEntryIDs(ctx context.Context, ids []string) (map[string]bool, error) {
	return q.present(ctx, "SELECT id FROM credit_journal WHERE id IN ("+placeholders(readChunk)+")", nil, ids)
}

// present runs a one-column lookup of values and returns the set found.
func (q *queries) present(ctx context.Context, query string, fixed []any, values []string) (map[string]bool, error) {
	got, err := readEach(ctx, q, query, fixed, values, func(sc rowScanner) (string, error) {
		var v string
		return v, sc.Scan(&v)
	})
	if err != nil {
		return nil, classify("read journal keys", resJournal, err)
	}
	out := make(map[string]bool, len(got))
	for _, v := range got {
		out[v] = true
	}
	return out, nil
}

// chunk is the size of the next multi-row write of n remaining rows.
func chunk(n int) int {
	c := writeChunk
	for c > n {
		c /= 2
	}
	return c
}

// rowsOf returns n parenthesized groups of width placeholders.
func rowsOf(n, width int) string {
	return strings.TrimSuffix(strings.Repeat("("+placeholders(width)+"), ", n), ", ")
}

// insertEntries appends es[i] for each i in idx, in that order (so their
// seqs follow it), and sets their Seq. Every key and id was checked to be
// unused, so a failure is the whole call's.
func (q *queries) insertEntries(ctx context.Context, es []store.JournalEntry, idx []int) error {
	cols := strings.TrimPrefix(journalColumns, "seq, ")
	width := strings.Count(cols, ",") + 1
	for len(idx) > 0 {
		n := chunk(len(idx))
		args := make([]any, 0, width*n)
		byID := make(map[string]*store.JournalEntry, n)
		for _, i := range idx[:n] {
			e := &es[i]
			byID[e.ID] = e
			args = append(args, e.ID, e.OrgID, e.Kind, e.AmountMicros, e.HeldMicros, e.BalanceAfterMicros, e.HeldAfterMicros,
				e.ShortfallMicros, e.SandboxID, e.RuntimeID, e.ProjectID, e.WorkspaceID, optMicros(e.PeriodStart),
				optMicros(e.PeriodEnd), e.IdempotencyKey, e.Note, e.Actor, micros(e.CreatedAt))
		}
		idx = idx[n:]
		// RETURNING's order is unspecified: seqs are matched by id.
		rows, err := q.queryRows(ctx, "INSERT INTO credit_journal ("+cols+") VALUES "+rowsOf(n, width)+" RETURNING id, seq", args...)
		if err != nil {
			return classify("append journal entries", resJournal, err)
		}
		got := 0
		_, err = collect(rows, func(sc rowScanner) (struct{}, error) {
			var id string
			var seq int64
			if err := sc.Scan(&id, &seq); err != nil {
				return struct{}{}, err
			}
			if e := byID[id]; e != nil {
				e.Seq = seq
				got++
			}
			return struct{}{}, nil
		})
		if err != nil {
			return classify("append journal entries", resJournal, err)
		}
		if got != n {
			return fmt.Errorf("sqlite store: appended %d journal entries of %d", got, n)
		}
	}
	return nil
}

// queryRows runs a many-row query on the write side, prepared when it
// can be.
func (q *queries) queryRows(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := q.prepared(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return q.w.QueryContext(ctx, query, args...)
}

// watermarkMove is what a batch's settlements do to one row: add billed
// to its bill, move its watermark to upTo and its billing version on by
// settlements, if that version is still the one read.
type watermarkMove struct {
	id          string
	version     int64
	billed      int64
	upTo        time.Time
	settlements int
}

// moveWatermarks applies ms by multi-row updates. Like Settle's guarded
// update, it cannot miss a row while the transaction holds the write lock;
// if it ever does, the transaction must roll back (see oneRow).
func (q *queries) moveWatermarks(ctx context.Context, ms []*watermarkMove) error {
	for len(ms) > 0 {
		n := chunk(len(ms))
		args := make([]any, 0, 5*n)
		for _, m := range ms[:n] {
			args = append(args, m.id, m.version, m.billed, micros(m.upTo), m.settlements)
		}
		ms = ms[n:]
		r, err := q.exec(ctx, `UPDATE sandboxes SET billed_micros = billed_micros + v.column3, last_settled_at = v.column4,
			billing_version = billing_version + v.column5
			FROM (VALUES `+rowsOf(n, 5)+`) AS v
			WHERE sandboxes.id = v.column1 AND sandboxes.billing_version = v.column2`, args...)
		if err != nil {
			return classify("settle sandboxes", resSandbox, err)
		}
		got, err := r.RowsAffected()
		if err != nil {
			return fmt.Errorf("sqlite store: write sandboxes: %w", err)
		}
		if got != int64(n) {
			return fmt.Errorf("sqlite store: %d of %d sandboxes changed inside a transaction", int64(n)-got, n)
		}
	}
	return nil
}
