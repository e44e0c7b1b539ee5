package postgres

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/postgres/pgdb"
)

// Egress: the proxy's decisions.

func egressFromRow(r pgdb.EgressDecision) store.EgressDecision {
	return store.EgressDecision{
		ID: r.ID, OrgID: r.OrgID, WorkspaceID: r.WorkspaceID, RuntimeID: r.RuntimeID, SandboxID: r.SandboxID,
		At: r.CreatedAt.UTC(), Allowed: r.Allowed, Reason: r.Reason, Refusal: r.Refusal, Method: r.Method,
		Host: r.Host, Port: int(r.Port), Addr: r.Addr, BytesUp: r.BytesUp, BytesDown: r.BytesDown,
		Duration: time.Duration(r.DurationMicros) * time.Microsecond, Brokered: r.Brokered,
	}
}

func egressKey(d store.EgressDecision) (time.Time, string) { return d.At, d.ID }

// egressColumns checks ds and lays it out column by column, as
// RecordEgress's one statement takes it.
func egressColumns(ds []store.EgressDecision) (pgdb.RecordEgressParams, error) {
	var c pgdb.RecordEgressParams
	for _, d := range ds {
		if err := dialect.Required(dialect.Egress, "id", d.ID, "runtime id", d.RuntimeID); err != nil {
			return pgdb.RecordEgressParams{}, err
		}
		c.Ids = append(c.Ids, d.ID)
		c.OrgIds = append(c.OrgIds, d.OrgID)
		c.WorkspaceIds = append(c.WorkspaceIds, d.WorkspaceID)
		c.RuntimeIds = append(c.RuntimeIds, d.RuntimeID)
		c.SandboxIds = append(c.SandboxIds, d.SandboxID)
		c.CreatedAts = append(c.CreatedAts, orNow(d.At))
		c.Alloweds = append(c.Alloweds, d.Allowed)
		c.Reasons = append(c.Reasons, d.Reason)
		c.Methods = append(c.Methods, d.Method)
		c.Hosts = append(c.Hosts, d.Host)
		c.Ports = append(c.Ports, int64(d.Port))
		c.Addrs = append(c.Addrs, d.Addr)
		c.BytesUps = append(c.BytesUps, d.BytesUp)
		c.BytesDowns = append(c.BytesDowns, d.BytesDown)
		c.DurationMicros = append(c.DurationMicros, d.Duration.Microseconds())
		c.Brokereds = append(c.Brokereds, d.Brokered)
		c.Refusals = append(c.Refusals, d.Refusal)
	}
	return c, nil
}

// RecordEgress inserts ds in one statement: all of them or, on an error,
// none.
func (q *queries) RecordEgress(ctx context.Context, ds []store.EgressDecision) error {
	if len(ds) == 0 {
		return nil
	}
	cols, err := egressColumns(ds)
	if err != nil {
		return err
	}
	return classify("record egress", dialect.Egress, q.q.RecordEgress(ctx, cols))
}

// ListEgress returns a runtime's decisions, newest first.
func (q *queries) ListEgress(ctx context.Context, runtimeID string, page store.Page) ([]store.EgressDecision, string, error) {
	return listPage(ctx, "list egress", dialect.Egress, page,
		func(ctx context.Context, k keyset) ([]pgdb.EgressDecision, error) {
			return q.q.ListEgress(ctx, pgdb.ListEgressParams{RuntimeID: runtimeID, AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch})
		}, egressFromRow, egressKey)
}

// SandboxEgress returns the decisions eq selects, oldest first.
func (q *queries) SandboxEgress(ctx context.Context, eq store.EgressQuery) ([]store.EgressDecision, error) {
	if len(eq.Hosts) == 0 {
		return nil, nil
	}
	limit := dialect.EgressLimit(eq.Limit)
	arg := pgdb.SandboxEgressParams{SandboxID: eq.SandboxID, Port: int64(eq.Port), Hosts: eq.Hosts, Lim: int32(limit)}
	if !eq.AfterAt.IsZero() {
		at, id := stamp(eq.AfterAt), eq.AfterID
		arg.AfterAt, arg.AfterID = &at, &id
	}
	rows, err := q.q.SandboxEgress(ctx, arg)
	if err != nil {
		return nil, classify("read sandbox egress", dialect.Egress, err)
	}
	return mapRows(rows, egressFromRow), nil
}

// PruneEgress deletes decisions older than before.
func (q *queries) PruneEgress(ctx context.Context, before time.Time) (int64, error) {
	n, err := q.q.PruneEgress(ctx, stamp(before))
	return n, classify("prune egress", dialect.Egress, err)
}
