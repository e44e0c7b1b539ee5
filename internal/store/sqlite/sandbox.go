package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

const sandboxColumns = "id, org_id, workspace_id, project_id, runtime_id, kind, state, pause_reason, " +
	"provider, provider_sandbox_id, provider_state, image, cpu_millis, memory_mb, secret_ids, " +
	"kill_reason, error, billed_micros, created_at, started_at, paused_at, killed_at, expires_at, " +
	"last_settled_at, running_since, version, updated_at, network, billing_version"

func scanSandbox(sc rowScanner) (store.Sandbox, error) {
	var s store.Sandbox
	var secrets sql.NullString
	var created, started, paused, killed, expires, settled, since, updated sql.NullInt64
	err := sc.Scan(&s.ID, &s.OrgID, &s.WorkspaceID, &s.ProjectID, &s.RuntimeID, &s.Kind, &s.State, &s.PauseReason,
		&s.Provider, &s.ProviderSandboxID, &s.ProviderState, &s.Image, &s.CPUMillis, &s.MemoryMB, &secrets,
		&s.KillReason, &s.Error, &s.BilledMicros, &created, &started, &paused, &killed, &expires,
		&settled, &since, &s.Version, &updated, &s.Network, &s.BillingVersion)
	if err != nil {
		return store.Sandbox{}, err
	}
	if s.SecretIDs, err = decodeStrings(secrets); err != nil {
		return store.Sandbox{}, errDecode(resSandbox, "secret_ids", err)
	}
	s.ProviderState = blob(s.ProviderState)
	s.CreatedAt = fromMicros(created)
	s.StartedAt = fromMicros(started)
	s.PausedAt = fromMicros(paused)
	s.KilledAt = fromMicros(killed)
	s.ExpiresAt = fromMicros(expires)
	s.LastSettledAt = fromMicros(settled)
	s.RunningSince = fromMicros(since)
	s.UpdatedAt = fromMicros(updated)
	return s, nil
}

// CreateSandbox inserts the ledger row s with version 1.
func (q *queries) CreateSandbox(ctx context.Context, s store.Sandbox) error {
	err := required(resSandbox, "id", s.ID, "org id", s.OrgID, "kind", string(s.Kind), "state", string(s.State))
	if err != nil {
		return err
	}
	secrets, err := encodeStrings(s.SecretIDs)
	if err != nil {
		return errEncode(resSandbox, "secret_ids", err)
	}
	created := orNow(s.CreatedAt)
	updated := s.UpdatedAt
	if updated.IsZero() {
		updated = created
	}
	_, err = q.w.ExecContext(ctx, "INSERT INTO sandboxes ("+sandboxColumns+`) VALUES (
		?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, 1)`,
		s.ID, s.OrgID, s.WorkspaceID, s.ProjectID, s.RuntimeID, s.Kind, s.State, s.PauseReason,
		s.Provider, s.ProviderSandboxID, blob(s.ProviderState), s.Image, s.CPUMillis, s.MemoryMB, secrets,
		s.KillReason, s.Error, s.BilledMicros, micros(created), optMicros(s.StartedAt), optMicros(s.PausedAt),
		optMicros(s.KilledAt), optMicros(s.ExpiresAt), optMicros(s.LastSettledAt), optMicros(s.RunningSince), micros(updated),
		s.Network)
	return classify("create sandbox", resSandbox, err)
}

// GetSandbox returns the ledger row with id.
func (q *queries) GetSandbox(ctx context.Context, id string) (store.Sandbox, error) {
	s, err := scanSandbox(q.r.QueryRowContext(ctx, "SELECT "+sandboxColumns+" FROM sandboxes WHERE id = ?", id))
	return s, classify("get sandbox", resSandbox, err)
}

// GetSandboxByProviderID returns orgID's row for the provider's sandbox id,
// the newest if a provider ever reused one.
func (q *queries) GetSandboxByProviderID(ctx context.Context, orgID, providerSandboxID string) (store.Sandbox, error) {
	if providerSandboxID == "" {
		return store.Sandbox{}, notFound(resSandbox, nil)
	}
	s, err := scanSandbox(q.r.QueryRowContext(ctx, "SELECT "+sandboxColumns+
		" FROM sandboxes WHERE org_id = ? AND provider_sandbox_id = ? ORDER BY created_at DESC, id DESC LIMIT 1",
		orgID, providerSandboxID))
	if !errors.Is(err, sql.ErrNoRows) || len(providerSandboxID) < store.MinProviderIDPrefix {
		return s, classify("get sandbox by provider id", resSandbox, err)
	}
	// Not an exact id: resolve it as a prefix. Provider ids are ASCII,
	// so every id starting with the prefix sorts below prefix+0x7f.
	rows, err := q.r.QueryContext(ctx, "SELECT DISTINCT provider_sandbox_id FROM sandboxes"+
		" WHERE org_id = ? AND provider_sandbox_id > ? AND provider_sandbox_id < ? LIMIT 2",
		orgID, providerSandboxID, providerSandboxID+"\x7f")
	if err != nil {
		return store.Sandbox{}, classify("get sandbox by provider id prefix", resSandbox, err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return store.Sandbox{}, classify("get sandbox by provider id prefix", resSandbox, err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return store.Sandbox{}, classify("get sandbox by provider id prefix", resSandbox, err)
	}
	switch len(ids) {
	case 0:
		return store.Sandbox{}, notFound(resSandbox, nil)
	case 1:
		return q.GetSandboxByProviderID(ctx, orgID, ids[0])
	}
	return store.Sandbox{}, errdefs.Conflict("provider_id_ambiguous", "provider sandbox id prefix %q matches more than one sandbox; give more of it", providerSandboxID)
}

// ListSandboxes lists f.OrgID's rows newest first, narrowed by f.
func (q *queries) ListSandboxes(ctx context.Context, f store.SandboxFilter, page store.Page) ([]store.Sandbox, string, error) {
	if f.OrgID == "" {
		return nil, "", errdefs.InvalidArgument("invalid_sandbox_filter", "the sandbox filter needs an org id")
	}
	l := listing[store.Sandbox]{
		op:     "list sandboxes",
		res:    resSandbox,
		from:   "SELECT " + sandboxColumns + " FROM sandboxes",
		where:  []string{"org_id = ?"},
		args:   []any{f.OrgID},
		newest: true,
		scan:   scanSandbox,
		key:    func(s store.Sandbox) (time.Time, string) { return s.CreatedAt, s.ID },
	}
	for _, c := range []struct{ column, value string }{
		{"kind", string(f.Kind)},
		{"state", string(f.State)},
		{"provider", f.Provider},
		{"runtime_id", f.RuntimeID},
	} {
		if c.value != "" {
			l.where = append(l.where, c.column+" = ?")
			l.args = append(l.args, c.value)
		}
	}
	if f.Workspaces != nil {
		if len(f.Workspaces) == 0 { // none of the org's workspaces: no rows
			_, _, _, err := parsePage(page)
			return nil, "", err
		}
		l.where = append(l.where, "workspace_id IN ("+placeholders(len(f.Workspaces))+")")
		for _, w := range f.Workspaces {
			l.args = append(l.args, w)
		}
	}
	return l.run(ctx, q.r, page)
}

// transition applies one verb's SET clause to row id at version, bumps the
// version and returns the stored row.
func (q *queries) transition(ctx context.Context, op, id string, version int64, set string, args ...any) (store.Sandbox, error) {
	if id == "" {
		return store.Sandbox{}, errdefs.InvalidArgument("invalid_sandbox", "a sandbox id is required")
	}
	args = append(args, id, version)
	got, err := scanSandbox(q.w.QueryRowContext(ctx, `UPDATE sandboxes SET `+set+`, version = version + 1
		WHERE id = ? AND version = ? RETURNING `+sandboxColumns, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Sandbox{}, q.missOrConflict(ctx, "sandboxes", resSandbox, id, version)
	}
	return got, classify(op, resSandbox, err)
}

// RecordSandboxProvider records the provider's id and recovery state.
func (q *queries) RecordSandboxProvider(ctx context.Context, id string, version int64, providerID string, state []byte, at time.Time) (store.Sandbox, error) {
	return q.transition(ctx, "record a sandbox's provider id", id, version,
		"provider_sandbox_id = ?, provider_state = ?, updated_at = ?", providerID, blob(state), micros(orNow(at)))
}

// MarkSandboxRunning records a start or a resume at at.
func (q *queries) MarkSandboxRunning(ctx context.Context, id string, version int64, at, expires time.Time) (store.Sandbox, error) {
	at = orNow(at)
	return q.transition(ctx, "mark a sandbox running", id, version,
		`state = ?, pause_reason = ?, paused_at = NULL, started_at = COALESCE(started_at, ?), running_since = ?,
		expires_at = ?, updated_at = ?`,
		store.SandboxRunning, store.PauseNone, micros(at), micros(at), optMicros(expires), micros(at))
}

// MarkSandboxPaused records a pause at at.
func (q *queries) MarkSandboxPaused(ctx context.Context, id string, version int64, reason store.PauseReason, at time.Time) (store.Sandbox, error) {
	at = orNow(at)
	return q.transition(ctx, "mark a sandbox paused", id, version,
		"state = ?, pause_reason = ?, paused_at = ?, updated_at = ?",
		store.SandboxPaused, reason, micros(at), micros(at))
}

// KillSandbox records that the row's compute is gone for good.
func (q *queries) KillSandbox(ctx context.Context, id string, version int64, reason, detail string, at time.Time) (store.Sandbox, error) {
	at = orNow(at)
	return q.transition(ctx, "kill a sandbox", id, version,
		"state = ?, kill_reason = ?, error = COALESCE(NULLIF(?, ''), error), killed_at = ?, pause_reason = ?, expires_at = NULL, updated_at = ?",
		store.SandboxKilled, reason, detail, micros(at), store.PauseNone, micros(at))
}

// ExtendSandboxExpiry moves a running row's expiry later.
func (q *queries) ExtendSandboxExpiry(ctx context.Context, id string, expires time.Time) (bool, error) {
	r, err := q.exec(ctx, `UPDATE sandboxes SET expires_at = ?
		WHERE id = ? AND state = ? AND expires_at IS NOT NULL AND expires_at < ?`,
		micros(expires), id, store.SandboxRunning, micros(expires))
	if err != nil {
		return false, classify("extend a sandbox's expiry", resSandbox, err)
	}
	n, err := r.RowsAffected()
	return n == 1, err
}

// CountSandboxes counts the rows that are not killed, by provider and state.
func (q *queries) CountSandboxes(ctx context.Context) ([]store.SandboxCount, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT provider, state, COUNT(*) FROM sandboxes
		WHERE state != 'killed' GROUP BY provider, state ORDER BY provider, state`)
	if err != nil {
		return nil, classify("count sandboxes", resSandbox, err)
	}
	defer rows.Close()
	var out []store.SandboxCount
	for rows.Next() {
		var c store.SandboxCount
		if err := rows.Scan(&c.Provider, &c.State, &c.Count); err != nil {
			return nil, classify("count sandboxes", resSandbox, err)
		}
		out = append(out, c)
	}
	return out, classify("count sandboxes", resSandbox, rows.Err())
}
