package sqlite

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/sqlite/litedb"
)

// Egress: the proxy's decisions.

func egressFromRow(r litedb.EgressDecision) store.EgressDecision {
	return store.EgressDecision{
		ID: r.ID, OrgID: r.OrgID, WorkspaceID: r.WorkspaceID, RuntimeID: r.RuntimeID, SandboxID: r.SandboxID,
		At: fromMicro(r.CreatedAt), Allowed: r.Allowed != 0, Reason: r.Reason, Refusal: r.Refusal, Method: r.Method,
		Host: r.Host, Port: int(r.Port), Addr: r.Addr, BytesUp: r.BytesUp, BytesDown: r.BytesDown,
		Duration: time.Duration(r.DurationMicros) * time.Microsecond, Brokered: r.Brokered != 0,
	}
}

func egressKey(d store.EgressDecision) (time.Time, string) { return d.At, d.ID }

// egressColumns are the columns RecordEgress writes, in its order.
const egressColumns = "id, org_id, workspace_id, runtime_id, sandbox_id, created_at, allowed, reason, method, " +
	"host, port, addr, bytes_up, bytes_down, duration_micros, brokered, refusal"

// egressBatch bounds the rows of one INSERT (17 columns each, well under
// SQLite's limit of bound parameters).
const egressBatch = 500

// RecordEgress inserts ds, a batch at a time. Its statement stays written
// here rather than generated: one INSERT of n rows, n known only at run
// time, is what makes a batch fast on SQLite.
func (q *queries) RecordEgress(ctx context.Context, ds []store.EgressDecision) error {
	row := "(" + placeholders(17) + ")"
	for len(ds) > 0 {
		n := min(len(ds), egressBatch)
		batch := ds[:n]
		ds = ds[n:]
		var sb strings.Builder
		sb.WriteString("INSERT INTO egress_decisions (" + egressColumns + ") VALUES ")
		args := make([]any, 0, 17*len(batch))
		for i, d := range batch {
			if err := required(dialect.Egress, "id", d.ID, "runtime id", d.RuntimeID); err != nil {
				return err
			}
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(row)
			args = append(args, d.ID, d.OrgID, d.WorkspaceID, d.RuntimeID, d.SandboxID, micros(orNow(d.At)), d.Allowed,
				d.Reason, d.Method, d.Host, d.Port, d.Addr, d.BytesUp, d.BytesDown, d.Duration.Microseconds(), d.Brokered, d.Refusal)
		}
		if _, err := q.w.ExecContext(ctx, sb.String(), args...); err != nil {
			return classify("record egress", dialect.Egress, err)
		}
	}
	return nil
}

// ListEgress returns a runtime's decisions, newest first.
func (q *queries) ListEgress(ctx context.Context, runtimeID string, page store.Page) ([]store.EgressDecision, string, error) {
	return listPage(ctx, "list egress", dialect.Egress, page, func(ctx context.Context, k keyset) ([]litedb.EgressDecision, error) {
		return q.rq.ListEgress(ctx, litedb.ListEgressParams{RuntimeID: runtimeID, AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch})
	}, total(egressFromRow), egressKey)
}

// SandboxEgress returns the decisions eq selects, oldest first.
func (q *queries) SandboxEgress(ctx context.Context, eq store.EgressQuery) ([]store.EgressDecision, error) {
	if len(eq.Hosts) == 0 {
		return nil, nil
	}
	limit := dialect.EgressLimit(eq.Limit)
	hosts, err := json.Marshal(eq.Hosts)
	if err != nil {
		return nil, errEncode(dialect.Egress, "hosts", err)
	}
	arg := litedb.SandboxEgressParams{SandboxID: eq.SandboxID, Port: int64(eq.Port), Hosts: string(hosts), Lim: int64(limit)}
	if !eq.AfterAt.IsZero() {
		at, id := micros(eq.AfterAt), eq.AfterID
		arg.AfterAt, arg.AfterID = &at, &id
	}
	rows, err := q.rq.SandboxEgress(ctx, arg)
	if err != nil {
		return nil, classify("read sandbox egress", dialect.Egress, err)
	}
	return mapRows(rows, total(egressFromRow))
}

// PruneEgress deletes decisions older than before.
func (q *queries) PruneEgress(ctx context.Context, before time.Time) (int64, error) {
	n, err := q.wq.PruneEgress(ctx, micros(before))
	return n, classify("prune egress", dialect.Egress, err)
}
