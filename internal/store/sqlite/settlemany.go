package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/sqlite/litedb"
)

// SettleMany settles many rows of one org as Settle would one by one, in a
// handful of statements: the settler's path, where the one-by-one cost was
// five statements and a journal insert's eight B-tree writes per row.
//
// It reads every row and every idempotency key the batch names first
// (one statement each: the values go as one JSON array), then decides each settlement in memory, in order (dialect.SettleBatch);
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
		if err := q.appendEntries(ctx, b.Entries, b.Applied); err != nil {
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
func (q *queries) readBatch(ctx context.Context, b *dialect.SettleBatch, valid []int) error {
	rows, err := q.wq.BillingRows(ctx, jsonArray(b.Pick(valid, func(s store.Settlement) string { return s.SandboxID })))
	if err != nil {
		return classify("read sandboxes", resSandbox, err)
	}
	b.Rows = make(map[string]*store.Sandbox, len(rows))
	for _, r := range rows {
		sb := billingSandbox(r)
		b.Rows[sb.ID] = &sb
	}
	keys, err := q.wq.UsedJournalKeys(ctx, litedb.UsedJournalKeysParams{
		OrgID: b.OrgID, Keys: jsonArray(b.Pick(valid, func(s store.Settlement) string { return s.IdempotencyKey })),
	})
	if err != nil {
		return classify("read journal keys", resJournal, err)
	}
	var ids []string
	if named := b.Pick(valid, func(s store.Settlement) string { return s.ID }); len(named) > 0 { // the settler names none
		if ids, err = q.wq.UsedJournalIDs(ctx, jsonArray(named)); err != nil {
			return classify("read journal ids", resJournal, err)
		}
	}
	b.Keys, b.IDs = set(keys), set(ids)
	return nil
}

// jsonArray encodes values as the JSON array a statement reads with
// json_each: a batch's values in one argument, so the statement's text is
// the same whatever the batch's size and stays prepared.
func jsonArray(values []string) string {
	b, _ := json.Marshal(values) // strings always encode
	return string(b)
}

// set is the set of values.
func set(values []string) map[string]bool {
	out := make(map[string]bool, len(values))
	for _, v := range values {
		out[v] = true
	}
	return out
}

// Multi-row writes. SQLite takes a batch's rows fastest as one INSERT or
// UPDATE … FROM (VALUES …) of n rows: row by row costs a statement per row,
// and the rows as one JSON argument (json_each) cost more to encode and
// decode than the binding they save. Such a statement's text depends on n,
// so these two are built here, not generated from queries/: the rows are
// cut into power-of-two chunks of at most writeChunk, so a transaction runs
// at most six texts of each, prepared once on the pool.

// writeChunk is the most rows one multi-row write carries.
const writeChunk = 32

// entryColumns are the columns a journal insert writes.
const entryColumns = "id, org_id, kind, amount_micros, held_micros, balance_after_micros, held_after_micros, " +
	"shortfall_micros, sandbox_id, runtime_id, project_id, workspace_id, period_start, period_end, " +
	"idempotency_key, note, actor, created_at"

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

// appendEntries appends es[i] for each i in idx, in that order (so their
// seqs follow it), and sets their Seq. Every key and id was checked to be
// unused, so a failure is the whole call's.
func (q *queries) appendEntries(ctx context.Context, es []store.JournalEntry, idx []int) error {
	for len(idx) > 0 {
		n := chunk(len(idx))
		if err := q.appendChunk(ctx, es, idx[:n]); err != nil {
			return err
		}
		idx = idx[n:]
	}
	return nil
}

// appendChunk appends es[i] for each i in idx by one insert.
func (q *queries) appendChunk(ctx context.Context, es []store.JournalEntry, idx []int) error {
	width := strings.Count(entryColumns, ",") + 1
	args := make([]any, 0, width*len(idx))
	byID := make(map[string]*store.JournalEntry, len(idx))
	for _, i := range idx {
		e := &es[i]
		byID[e.ID] = e
		args = append(args, e.ID, e.OrgID, e.Kind, e.AmountMicros, e.HeldMicros, e.BalanceAfterMicros, e.HeldAfterMicros,
			e.ShortfallMicros, e.SandboxID, e.RuntimeID, e.ProjectID, e.WorkspaceID, optTime(e.PeriodStart),
			optTime(e.PeriodEnd), e.IdempotencyKey, e.Note, e.Actor, micros(e.CreatedAt))
	}
	rows, err := q.w.QueryContext(ctx, "INSERT INTO credit_journal ("+entryColumns+") VALUES "+
		rowsOf(len(idx), width)+" RETURNING id, seq", args...)
	if err != nil {
		return classify("append journal entries", resJournal, err)
	}
	// RETURNING's order is unspecified: seqs are matched by id.
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
	if got != len(idx) {
		return fmt.Errorf("sqlite store: appended %d journal entries of %d", got, len(idx))
	}
	return nil
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
		r, err := q.w.ExecContext(ctx, `UPDATE sandboxes SET billed_micros = billed_micros + v.column3, last_settled_at = v.column4,
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
