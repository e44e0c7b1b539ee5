package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/paddockhq/paddock/internal/store"
)

const capVersionColumns = "id, org_id, name, version, description, digest, contents, size_bytes, created_at"

func scanCapVersion(sc rowScanner, extra ...any) (store.CapabilityVersion, error) {
	var v store.CapabilityVersion
	var contents string
	var created int64
	dest := append([]any{&v.ID, &v.OrgID, &v.Name, &v.Version, &v.Description, &v.Digest, &contents, &v.SizeBytes, &created}, extra...)
	if err := sc.Scan(dest...); err != nil {
		return store.CapabilityVersion{}, err
	}
	v.Contents = []byte(contents)
	v.CreatedAt = time.UnixMicro(created).UTC()
	return v, nil
}

// CreateCapabilityVersion inserts v.
func (q *queries) CreateCapabilityVersion(ctx context.Context, v store.CapabilityVersion) error {
	if err := required(resCapVer, "id", v.ID, "org id", v.OrgID, "name", v.Name, "version", v.Version, "digest", v.Digest); err != nil {
		return err
	}
	if len(v.Bundle) == 0 {
		return required(resCapVer, "bundle", "")
	}
	contents := string(v.Contents)
	if contents == "" {
		contents = "{}"
	}
	_, err := q.w.ExecContext(ctx, "INSERT INTO capability_versions ("+capVersionColumns+", bundle) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		v.ID, v.OrgID, v.Name, v.Version, v.Description, v.Digest, contents, v.SizeBytes, micros(orNow(v.CreatedAt)), v.Bundle)
	return classify("create capability version", resCapVer, err)
}

// GetCapabilityVersion returns one version with its bundle.
func (q *queries) GetCapabilityVersion(ctx context.Context, orgID, name, version string) (store.CapabilityVersion, error) {
	var bundle []byte
	row := q.r.QueryRowContext(ctx, "SELECT "+capVersionColumns+", bundle FROM capability_versions WHERE org_id = ? AND name = ? AND version = ?",
		orgID, name, version)
	v, err := scanCapVersion(row, &bundle)
	v.Bundle = bundle
	return v, classify("get capability version", resCapVer, err)
}

// ListCapabilityVersions lists the org's versions without their bundles.
func (q *queries) ListCapabilityVersions(ctx context.Context, orgID, name string) ([]store.CapabilityVersion, error) {
	query, args := "SELECT "+capVersionColumns+" FROM capability_versions WHERE org_id = ?", []any{orgID}
	if name != "" {
		query, args = query+" AND name = ?", append(args, name)
	}
	rows, err := q.r.QueryContext(ctx, query+" ORDER BY name, created_at, id", args...)
	if err != nil {
		return nil, classify("list capability versions", resCapVer, err)
	}
	out, err := collect(rows, func(sc rowScanner) (store.CapabilityVersion, error) { return scanCapVersion(sc) })
	return out, classify("list capability versions", resCapVer, err)
}

// DeleteCapabilityVersion deletes one version.
func (q *queries) DeleteCapabilityVersion(ctx context.Context, orgID, name, version string) error {
	r, err := q.w.ExecContext(ctx, "DELETE FROM capability_versions WHERE org_id = ? AND name = ? AND version = ?", orgID, name, version)
	if err != nil {
		return classify("delete capability version", resCapVer, err)
	}
	if n, err := r.RowsAffected(); err != nil || n == 0 {
		return classify("delete capability version", resCapVer, orNoRows(err))
	}
	return nil
}

// orNoRows is err, or sql.ErrNoRows when there is none: nothing matched.
func orNoRows(err error) error {
	if err == nil {
		return sql.ErrNoRows
	}
	return err
}

const bindingColumns = "id, org_id, runtime_id, source, name, version, enabled, flags, status, rev, created_at, updated_at"

func scanBinding(sc rowScanner) (store.CapabilityBinding, error) {
	var b store.CapabilityBinding
	var flags, status string
	var created, updated int64
	if err := sc.Scan(&b.ID, &b.OrgID, &b.RuntimeID, &b.Source, &b.Name, &b.Version, &b.Enabled, &flags, &status,
		&b.Rev, &created, &updated); err != nil {
		return store.CapabilityBinding{}, err
	}
	if err := json.Unmarshal([]byte(flags), &b.Flags); err != nil {
		return store.CapabilityBinding{}, errEncode(resBinding, "flags", err)
	}
	if status != "" {
		b.Status = []byte(status)
	}
	b.CreatedAt = time.UnixMicro(created).UTC()
	b.UpdatedAt = time.UnixMicro(updated).UTC()
	return b, nil
}

func bindingFlags(f map[string]bool) (string, error) {
	if f == nil {
		f = map[string]bool{}
	}
	b, err := json.Marshal(f)
	if err != nil {
		return "", errEncode(resBinding, "flags", err)
	}
	return string(b), nil
}

// CreateBinding inserts b at revision 1.
func (q *queries) CreateBinding(ctx context.Context, b store.CapabilityBinding) error {
	if err := required(resBinding, "id", b.ID, "org id", b.OrgID, "runtime id", b.RuntimeID, "source", b.Source,
		"name", b.Name, "version", b.Version); err != nil {
		return err
	}
	flags, err := bindingFlags(b.Flags)
	if err != nil {
		return err
	}
	created := micros(orNow(b.CreatedAt))
	_, err = q.w.ExecContext(ctx, "INSERT INTO capability_bindings ("+bindingColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
		b.ID, b.OrgID, b.RuntimeID, b.Source, b.Name, b.Version, b.Enabled, flags, string(b.Status), created, created)
	return classify("create binding", resBinding, err)
}

// GetBinding returns the binding with id.
func (q *queries) GetBinding(ctx context.Context, id string) (store.CapabilityBinding, error) {
	b, err := scanBinding(q.r.QueryRowContext(ctx, "SELECT "+bindingColumns+" FROM capability_bindings WHERE id = ?", id))
	return b, classify("get binding", resBinding, err)
}

// ListBindings lists a runtime's bindings in install order.
func (q *queries) ListBindings(ctx context.Context, runtimeID string) ([]store.CapabilityBinding, error) {
	rows, err := q.r.QueryContext(ctx, "SELECT "+bindingColumns+" FROM capability_bindings WHERE runtime_id = ? ORDER BY created_at, id", runtimeID)
	if err != nil {
		return nil, classify("list bindings", resBinding, err)
	}
	out, err := collect(rows, scanBinding)
	return out, classify("list bindings", resBinding, err)
}

// UpdateBinding writes b's version, enabled and flags if its revision is
// current.
func (q *queries) UpdateBinding(ctx context.Context, b store.CapabilityBinding) (store.CapabilityBinding, error) {
	if err := required(resBinding, "id", b.ID, "version", b.Version); err != nil {
		return store.CapabilityBinding{}, err
	}
	flags, err := bindingFlags(b.Flags)
	if err != nil {
		return store.CapabilityBinding{}, err
	}
	got, err := scanBinding(q.w.QueryRowContext(ctx, `UPDATE capability_bindings SET
		version = ?, enabled = ?, flags = ?, rev = rev + 1, updated_at = ?
		WHERE id = ? AND rev = ?
		RETURNING `+bindingColumns,
		b.Version, b.Enabled, flags, micros(orNow(b.UpdatedAt)), b.ID, b.Rev))
	if errors.Is(err, sql.ErrNoRows) {
		return store.CapabilityBinding{}, q.missOrConflict(ctx, "capability_bindings", resBinding, b.ID, b.Rev)
	}
	return got, classify("update binding", resBinding, err)
}

// SetBindingStatus records what applying the binding did.
func (q *queries) SetBindingStatus(ctx context.Context, id string, status []byte, at time.Time) error {
	r, err := q.w.ExecContext(ctx, "UPDATE capability_bindings SET status = ? WHERE id = ?", string(status), id)
	if err != nil {
		return classify("set binding status", resBinding, err)
	}
	if n, err := r.RowsAffected(); err != nil || n == 0 {
		return classify("set binding status", resBinding, orNoRows(err))
	}
	return nil
}

// ReplaceBindingStatus writes to if the stored status is still from.
func (q *queries) ReplaceBindingStatus(ctx context.Context, id string, from, to []byte) (bool, error) {
	r, err := q.w.ExecContext(ctx, "UPDATE capability_bindings SET status = ? WHERE id = ? AND status = ?", string(to), id, string(from))
	if err != nil {
		return false, classify("replace binding status", resBinding, err)
	}
	n, err := r.RowsAffected()
	return n == 1, classify("replace binding status", resBinding, err)
}

// DeleteBinding deletes the binding with id.
func (q *queries) DeleteBinding(ctx context.Context, id string) error {
	return q.deleteByID(ctx, "capability_bindings", resBinding, id)
}

// CountInventoryBindings counts the org's bindings that pin an inventory
// version.
func (q *queries) CountInventoryBindings(ctx context.Context, orgID, name, version string) (int, error) {
	var n int
	err := q.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM capability_bindings WHERE org_id = ? AND source = 'inventory' AND name = ? AND version = ?",
		orgID, name, version).Scan(&n)
	return n, classify("count bindings", resBinding, err)
}

const sessionColumns = "id, org_id, workspace_id, runtime_id, kind, harness, harness_session_id, status, title, turns, events, created_at, updated_at"

func scanSession(sc rowScanner) (store.Session, error) {
	var s store.Session
	var created, updated int64
	if err := sc.Scan(&s.ID, &s.OrgID, &s.WorkspaceID, &s.RuntimeID, &s.Kind, &s.Harness, &s.HarnessSessionID, &s.Status,
		&s.Title, &s.Turns, &s.Events, &created, &updated); err != nil {
		return store.Session{}, err
	}
	s.CreatedAt = time.UnixMicro(created).UTC()
	s.UpdatedAt = time.UnixMicro(updated).UTC()
	return s, nil
}

// CreateSession inserts s.
func (q *queries) CreateSession(ctx context.Context, s store.Session) error {
	if err := required(resSession, "id", s.ID, "org id", s.OrgID, "runtime id", s.RuntimeID, "kind", s.Kind,
		"harness", s.Harness, "status", s.Status); err != nil {
		return err
	}
	created := micros(orNow(s.CreatedAt))
	_, err := q.w.ExecContext(ctx, "INSERT INTO sessions ("+sessionColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		s.ID, s.OrgID, s.WorkspaceID, s.RuntimeID, s.Kind, s.Harness, s.HarnessSessionID, s.Status, s.Title, s.Turns, s.Events,
		created, micros(orNow(s.UpdatedAt)))
	return classify("create session", resSession, err)
}

// GetSession returns the session with id.
func (q *queries) GetSession(ctx context.Context, id string) (store.Session, error) {
	s, err := scanSession(q.r.QueryRowContext(ctx, "SELECT "+sessionColumns+" FROM sessions WHERE id = ?", id))
	return s, classify("get session", resSession, err)
}

// ListSessions lists a runtime's sessions, newest first.
func (q *queries) ListSessions(ctx context.Context, runtimeID string, page store.Page) ([]store.Session, string, error) {
	return listing[store.Session]{
		op:     "list sessions",
		res:    resSession,
		from:   "SELECT " + sessionColumns + " FROM sessions",
		where:  []string{"runtime_id = ?"},
		args:   []any{runtimeID},
		newest: true,
		scan:   scanSession,
		key:    func(s store.Session) (time.Time, string) { return s.CreatedAt, s.ID },
	}.run(ctx, q.r, page)
}

// UpdateSession writes s's mutable fields.
func (q *queries) UpdateSession(ctx context.Context, s store.Session) error {
	r, err := q.w.ExecContext(ctx, `UPDATE sessions SET harness = ?, harness_session_id = ?, status = ?, turns = ?, events = ?, updated_at = ?
		WHERE id = ?`, s.Harness, s.HarnessSessionID, s.Status, s.Turns, s.Events, micros(orNow(s.UpdatedAt)), s.ID)
	if err != nil {
		return classify("update session", resSession, err)
	}
	if n, err := r.RowsAffected(); err != nil || n == 0 {
		return classify("update session", resSession, orNoRows(err))
	}
	return nil
}

// AppendSessionEvents adds events to their sessions' transcripts.
func (q *queries) AppendSessionEvents(ctx context.Context, events []store.SessionEvent) error {
	for _, e := range events {
		if err := required(resSession, "session id", e.SessionID, "event type", e.Type); err != nil {
			return err
		}
		_, err := q.w.ExecContext(ctx, "INSERT INTO session_events (session_id, seq, turn, type, at, body) VALUES (?, ?, ?, ?, ?, ?)",
			e.SessionID, e.Seq, e.Turn, e.Type, micros(orNow(e.At)), string(e.Body))
		if err != nil {
			return classify("append session event", resSession, err)
		}
	}
	return nil
}

// ListSessionEvents returns a session's events in order.
func (q *queries) ListSessionEvents(ctx context.Context, sessionID string) ([]store.SessionEvent, error) {
	rows, err := q.r.QueryContext(ctx, "SELECT session_id, seq, turn, type, at, body FROM session_events WHERE session_id = ? ORDER BY seq", sessionID)
	if err != nil {
		return nil, classify("list session events", resSession, err)
	}
	out, err := collect(rows, func(sc rowScanner) (store.SessionEvent, error) {
		var e store.SessionEvent
		var at int64
		var body string
		if err := sc.Scan(&e.SessionID, &e.Seq, &e.Turn, &e.Type, &at, &body); err != nil {
			return e, err
		}
		e.At, e.Body = time.UnixMicro(at).UTC(), []byte(body)
		return e, nil
	})
	return out, classify("list session events", resSession, err)
}
