package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
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
// then decides each settlement in memory, in order (dialect.SettleBatch);
// the conformance suite runs the same settlements both ways and compares.
// The entries are then appended by multi-row inserts, the rows move by
// multi-row updates guarded by their billing versions, and the account is
// written once.
//
// Entries the store names get time-ordered ids (UUIDv7), so the journal's
// id index grows at its end: a random id costs a write on a random page
// of that index per entry, and once the journal is larger than the page
// cache, a read from disk as well.
func (q *queries) SettleMany(ctx context.Context, orgID string, ss []store.Settlement) ([]store.JournalEntry, []error, error) {
	if err := required(resJournal, "org id", orgID); err != nil {
		return nil, nil, err
	}
	b := dialect.NewSettleBatch(orgID, ss)
	valid := b.Check()
	if len(valid) == 0 {
		entries, errs := b.Done()
		return entries, errs, nil
	}
	err := q.atomic(ctx, func(q *queries) error {
		if err := q.readBatch(ctx, b, valid); err != nil {
			return err
		}
		open := func(at time.Time) (store.CreditAccount, error) { return q.openAccount(ctx, orgID, at) }
		for _, i := range valid {
			if err := b.Settle(i, open); err != nil {
				return err
			}
		}
		if len(b.Applied) == 0 {
			return nil // the account is as it was
		}
		if err := q.insertEntries(ctx, b.Entries, b.Applied); err != nil {
			return err
		}
		if err := q.moveWatermarks(ctx, b.Moves); err != nil {
			return err
		}
		return q.writeAccount(ctx, b.Account, b.Cur.BalanceMicros, b.Cur.HeldMicros, b.Last)
	})
	if err != nil {
		return nil, nil, err
	}
	entries, errs := b.Done()
	return entries, errs, nil
}

// readBatch reads the billing rows the valid settlements of b name, and
// which of their idempotency keys and entry ids are used already.
func (q *queries) readBatch(ctx context.Context, b *dialect.SettleBatch, valid []int) (err error) {
	b.Rows, err = q.billingRows(ctx, b.Pick(valid, func(s store.Settlement) string { return s.SandboxID }))
	if err != nil {
		return err
	}
	b.Keys, err = q.usedKeys(ctx, b.OrgID, b.Pick(valid, func(s store.Settlement) string { return s.IdempotencyKey }))
	if err != nil {
		return err
	}
	b.IDs, err = q.usedEntryIDs(ctx, b.Pick(valid, func(s store.Settlement) string { return s.ID }))
	return err
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

// moveWatermarks applies ms by multi-row updates. Like Settle's guarded
// update, it cannot miss a row while the transaction holds the write lock;
// if it ever does, the transaction must roll back (see oneRow).
func (q *queries) moveWatermarks(ctx context.Context, ms []*dialect.WatermarkMove) error {
	for len(ms) > 0 {
		n := chunk(len(ms))
		args := make([]any, 0, 5*n)
		for _, m := range ms[:n] {
			args = append(args, m.ID, m.Version, m.Billed, micros(m.UpTo), m.Settlements)
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
