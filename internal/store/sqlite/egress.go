package sqlite

import (
	"context"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/store"
)

const resEgress resource = "egress decision"

const egressColumns = "id, org_id, workspace_id, runtime_id, sandbox_id, created_at, allowed, reason, method, " +
	"host, port, addr, bytes_up, bytes_down, duration_micros, brokered, refusal"

// egressBatch bounds the rows of one INSERT (17 columns each, well under
// SQLite's limit of bound parameters).
const egressBatch = 500

func scanEgress(sc rowScanner) (store.EgressDecision, error) {
	var d store.EgressDecision
	var at, dur int64
	err := sc.Scan(&d.ID, &d.OrgID, &d.WorkspaceID, &d.RuntimeID, &d.SandboxID, &at, &d.Allowed, &d.Reason,
		&d.Method, &d.Host, &d.Port, &d.Addr, &d.BytesUp, &d.BytesDown, &dur, &d.Brokered, &d.Refusal)
	d.At = time.UnixMicro(at).UTC()
	d.Duration = time.Duration(dur) * time.Microsecond
	return d, err
}

// RecordEgress inserts ds, a batch at a time.
func (q *queries) RecordEgress(ctx context.Context, ds []store.EgressDecision) error {
	for len(ds) > 0 {
		n := min(len(ds), egressBatch)
		batch := ds[:n]
		ds = ds[n:]
		var sb strings.Builder
		sb.WriteString("INSERT INTO egress_decisions (" + egressColumns + ") VALUES ")
		args := make([]any, 0, 17*len(batch))
		for i, d := range batch {
			if err := required(resEgress, "id", d.ID, "runtime id", d.RuntimeID); err != nil {
				return err
			}
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
			args = append(args, d.ID, d.OrgID, d.WorkspaceID, d.RuntimeID, d.SandboxID, micros(orNow(d.At)), d.Allowed,
				d.Reason, d.Method, d.Host, d.Port, d.Addr, d.BytesUp, d.BytesDown, d.Duration.Microseconds(), d.Brokered, d.Refusal)
		}
		if _, err := q.w.ExecContext(ctx, sb.String(), args...); err != nil {
			return classify("record egress", resEgress, err)
		}
	}
	return nil
}

// ListEgress returns a runtime's decisions, newest first.
func (q *queries) ListEgress(ctx context.Context, runtimeID string, page store.Page) ([]store.EgressDecision, string, error) {
	l := listing[store.EgressDecision]{
		op:     "list egress",
		res:    resEgress,
		from:   "SELECT " + egressColumns + " FROM egress_decisions",
		where:  []string{"runtime_id = ?"},
		args:   []any{runtimeID},
		newest: true,
		scan:   scanEgress,
		key:    func(d store.EgressDecision) (time.Time, string) { return d.At, d.ID },
	}
	return l.run(ctx, q.r, page)
}

// SandboxEgress returns the decisions q selects, oldest first.
func (q *queries) SandboxEgress(ctx context.Context, eq store.EgressQuery) ([]store.EgressDecision, error) {
	if len(eq.Hosts) == 0 {
		return nil, nil
	}
	limit := eq.Limit
	if limit <= 0 || limit > store.MaxLimit {
		limit = store.MaxLimit
	}
	query := "SELECT " + egressColumns + " FROM egress_decisions WHERE sandbox_id = ? AND port = ? AND host IN (?" +
		strings.Repeat(", ?", len(eq.Hosts)-1) + ")"
	args := []any{eq.SandboxID, eq.Port}
	for _, h := range eq.Hosts {
		args = append(args, h)
	}
	if !eq.AfterAt.IsZero() {
		query += " AND (created_at, id) > (?, ?)"
		args = append(args, micros(eq.AfterAt), eq.AfterID)
	}
	query += " ORDER BY created_at, id LIMIT ?"
	args = append(args, limit)
	rows, err := q.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, classify("read sandbox egress", resEgress, err)
	}
	defer rows.Close()
	var out []store.EgressDecision
	for rows.Next() {
		d, err := scanEgress(rows)
		if err != nil {
			return nil, classify("read sandbox egress", resEgress, err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, classify("read sandbox egress", resEgress, err)
	}
	return out, nil
}

// PruneEgress deletes decisions older than before.
func (q *queries) PruneEgress(ctx context.Context, before time.Time) (int64, error) {
	res, err := q.w.ExecContext(ctx, "DELETE FROM egress_decisions WHERE created_at < ?", micros(before))
	if err != nil {
		return 0, classify("prune egress", resEgress, err)
	}
	return res.RowsAffected()
}
