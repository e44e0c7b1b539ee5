package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/postgres/pgdb"
)

// capVersionOf maps a capability_versions row, bundle and all.
func capVersionOf(v pgdb.CapabilityVersion) store.CapabilityVersion {
	return store.CapabilityVersion{
		ID: v.ID, OrgID: v.OrgID, Name: v.Name, Version: v.Version, Description: v.Description,
		Digest: v.Digest, Contents: []byte(v.Contents), Bundle: v.Bundle, SizeBytes: v.SizeBytes,
		CreatedAt: v.CreatedAt.UTC(),
	}
}

// CreateCapabilityVersion inserts v; empty contents are stored as {}.
func (q *queries) CreateCapabilityVersion(ctx context.Context, v store.CapabilityVersion) error {
	contents, err := dialect.CheckCapabilityVersion(v)
	if err != nil {
		return err
	}
	return classify("create capability version", dialect.CapVer, q.q.CreateCapabilityVersion(ctx, pgdb.CreateCapabilityVersionParams{
		ID: v.ID, OrgID: v.OrgID, Name: v.Name, Version: v.Version, Description: v.Description, Digest: v.Digest,
		Contents: contents, Bundle: v.Bundle, SizeBytes: v.SizeBytes, CreatedAt: orNow(v.CreatedAt),
	}))
}

// GetCapabilityVersion returns one version with its bundle.
func (q *queries) GetCapabilityVersion(ctx context.Context, orgID, name, version string) (store.CapabilityVersion, error) {
	row, err := q.q.GetCapabilityVersion(ctx, pgdb.GetCapabilityVersionParams{OrgID: orgID, Name: name, Version: version})
	if err != nil {
		return store.CapabilityVersion{}, classify("get capability version", dialect.CapVer, err)
	}
	return capVersionOf(row), nil
}

// ListCapabilityVersions lists the org's versions (of name, when not
// empty) without their bundles.
func (q *queries) ListCapabilityVersions(ctx context.Context, orgID, name string) ([]store.CapabilityVersion, error) {
	rows, err := q.q.ListCapabilityVersions(ctx, pgdb.ListCapabilityVersionsParams{OrgID: orgID, Name: optString(name)})
	if err != nil {
		return nil, classify("list capability versions", dialect.CapVer, err)
	}
	return mapRows(rows, func(r pgdb.ListCapabilityVersionsRow) store.CapabilityVersion {
		return capVersionOf(pgdb.CapabilityVersion{
			ID: r.ID, OrgID: r.OrgID, Name: r.Name, Version: r.Version, Description: r.Description,
			Digest: r.Digest, Contents: r.Contents, SizeBytes: r.SizeBytes, CreatedAt: r.CreatedAt,
		})
	}), nil
}

// DeleteCapabilityVersion deletes one version.
func (q *queries) DeleteCapabilityVersion(ctx context.Context, orgID, name, version string) error {
	n, err := q.q.DeleteCapabilityVersion(ctx, pgdb.DeleteCapabilityVersionParams{OrgID: orgID, Name: name, Version: version})
	return oneRow("delete capability version", dialect.CapVer, n, err)
}

// bindingOf maps a capability_bindings row.
func bindingOf(b pgdb.CapabilityBinding) (store.CapabilityBinding, error) {
	out := store.CapabilityBinding{
		ID: b.ID, OrgID: b.OrgID, RuntimeID: b.RuntimeID, Source: b.Source, Name: b.Name, Version: b.Version,
		Enabled: b.Enabled, Rev: b.Rev, CreatedAt: b.CreatedAt.UTC(), UpdatedAt: b.UpdatedAt.UTC(),
	}
	if err := json.Unmarshal([]byte(b.Flags), &out.Flags); err != nil {
		return store.CapabilityBinding{}, errDecode(dialect.Binding, "flags", err)
	}
	if b.Status != "" {
		out.Status = []byte(b.Status)
	}
	return out, nil
}

// bindingFlags encodes a binding's flags; nil is stored as {}.
func bindingFlags(f map[string]bool) (string, error) {
	if f == nil {
		f = map[string]bool{}
	}
	b, err := json.Marshal(f)
	if err != nil {
		return "", errEncode(dialect.Binding, "flags", err)
	}
	return string(b), nil
}

// CreateBinding inserts b at revision 1.
func (q *queries) CreateBinding(ctx context.Context, b store.CapabilityBinding) error {
	if err := dialect.Required(dialect.Binding, "id", b.ID, "org id", b.OrgID, "runtime id", b.RuntimeID, "source", b.Source,
		"name", b.Name, "version", b.Version); err != nil {
		return err
	}
	flags, err := bindingFlags(b.Flags)
	if err != nil {
		return err
	}
	return classify("create binding", dialect.Binding, q.q.CreateBinding(ctx, pgdb.CreateBindingParams{
		ID: b.ID, OrgID: b.OrgID, RuntimeID: b.RuntimeID, Source: b.Source, Name: b.Name, Version: b.Version,
		Enabled: b.Enabled, Flags: flags, Status: string(b.Status), CreatedAt: orNow(b.CreatedAt),
	}))
}

// GetBinding returns the binding with id.
func (q *queries) GetBinding(ctx context.Context, id string) (store.CapabilityBinding, error) {
	row, err := q.q.GetBinding(ctx, id)
	if err != nil {
		return store.CapabilityBinding{}, classify("get binding", dialect.Binding, err)
	}
	return bindingOf(row)
}

// ListBindings lists a runtime's bindings in install order.
func (q *queries) ListBindings(ctx context.Context, runtimeID string) ([]store.CapabilityBinding, error) {
	rows, err := q.q.ListBindings(ctx, runtimeID)
	if err != nil {
		return nil, classify("list bindings", dialect.Binding, err)
	}
	var out []store.CapabilityBinding
	for _, r := range rows {
		b, err := bindingOf(r)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// UpdateBinding writes b's version, enabled and flags if its revision is
// current.
func (q *queries) UpdateBinding(ctx context.Context, b store.CapabilityBinding) (store.CapabilityBinding, error) {
	if err := dialect.Required(dialect.Binding, "id", b.ID, "version", b.Version); err != nil {
		return store.CapabilityBinding{}, err
	}
	flags, err := bindingFlags(b.Flags)
	if err != nil {
		return store.CapabilityBinding{}, err
	}
	row, err := q.q.UpdateBinding(ctx, pgdb.UpdateBindingParams{
		Version: b.Version, Enabled: b.Enabled, Flags: flags, UpdatedAt: orNow(b.UpdatedAt), ID: b.ID, Rev: b.Rev,
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return store.CapabilityBinding{}, missOrConflict(ctx, dialect.Binding, b.ID, b.Rev, q.q.BindingExists)
	}
	if err != nil {
		return store.CapabilityBinding{}, classify("update binding", dialect.Binding, err)
	}
	return bindingOf(row)
}

// SetBindingStatus records what applying the binding did.
func (q *queries) SetBindingStatus(ctx context.Context, id string, status []byte, _ time.Time) error {
	n, err := q.q.SetBindingStatus(ctx, pgdb.SetBindingStatusParams{Status: string(status), ID: id})
	return oneRow("set binding status", dialect.Binding, n, err)
}

// ReplaceBindingStatus writes to if the stored status is still from.
func (q *queries) ReplaceBindingStatus(ctx context.Context, id string, from, to []byte) (bool, error) {
	n, err := q.q.ReplaceBindingStatus(ctx, pgdb.ReplaceBindingStatusParams{ToStatus: string(to), ID: id, FromStatus: string(from)})
	return n == 1, classify("replace binding status", dialect.Binding, err)
}

// DeleteBinding deletes the binding with id.
func (q *queries) DeleteBinding(ctx context.Context, id string) error {
	n, err := q.q.DeleteBinding(ctx, id)
	return oneRow("delete binding", dialect.Binding, n, err)
}

// CountInventoryBindings counts the org's bindings that pin an inventory
// version.
func (q *queries) CountInventoryBindings(ctx context.Context, orgID, name, version string) (int, error) {
	n, err := q.q.CountInventoryBindings(ctx, pgdb.CountInventoryBindingsParams{OrgID: orgID, Name: name, Version: version})
	return int(n), classify("count bindings", dialect.Binding, err)
}

// sessionOf maps a sessions row.
func sessionOf(s pgdb.Session) store.Session {
	return store.Session{
		ID: s.ID, OrgID: s.OrgID, WorkspaceID: s.WorkspaceID, RuntimeID: s.RuntimeID, Kind: s.Kind,
		Harness: s.Harness, HarnessSessionID: s.HarnessSessionID, Status: s.Status, Title: s.Title,
		Turns: int(s.Turns), Events: s.Events, CreatedAt: s.CreatedAt.UTC(), UpdatedAt: s.UpdatedAt.UTC(),
	}
}

// CreateSession inserts s.
func (q *queries) CreateSession(ctx context.Context, s store.Session) error {
	if err := dialect.Required(dialect.Session, "id", s.ID, "org id", s.OrgID, "runtime id", s.RuntimeID, "kind", s.Kind,
		"harness", s.Harness, "status", s.Status); err != nil {
		return err
	}
	return classify("create session", dialect.Session, q.q.CreateSession(ctx, pgdb.CreateSessionParams{
		ID: s.ID, OrgID: s.OrgID, WorkspaceID: s.WorkspaceID, RuntimeID: s.RuntimeID, Kind: s.Kind,
		Harness: s.Harness, HarnessSessionID: s.HarnessSessionID, Status: s.Status, Title: s.Title,
		Turns: int64(s.Turns), Events: s.Events, CreatedAt: orNow(s.CreatedAt), UpdatedAt: orNow(s.UpdatedAt),
	}))
}

// GetSession returns the session with id.
func (q *queries) GetSession(ctx context.Context, id string) (store.Session, error) {
	row, err := q.q.GetSession(ctx, id)
	if err != nil {
		return store.Session{}, classify("get session", dialect.Session, err)
	}
	return sessionOf(row), nil
}

// ListSessions lists a runtime's sessions, newest first.
func (q *queries) ListSessions(ctx context.Context, runtimeID string, page store.Page) ([]store.Session, string, error) {
	return listPage(ctx, "list sessions", dialect.Session, page,
		func(ctx context.Context, k keyset) ([]pgdb.Session, error) {
			return q.q.ListSessions(ctx, pgdb.ListSessionsParams{RuntimeID: runtimeID, BeforeAt: k.At, BeforeID: k.ID, Lim: k.Fetch})
		}, sessionOf, func(s store.Session) (time.Time, string) { return s.CreatedAt, s.ID })
}

// UpdateSession writes s's mutable fields.
func (q *queries) UpdateSession(ctx context.Context, s store.Session) error {
	n, err := q.q.UpdateSession(ctx, pgdb.UpdateSessionParams{
		Harness: s.Harness, HarnessSessionID: s.HarnessSessionID, Status: s.Status, Turns: int64(s.Turns),
		Events: s.Events, UpdatedAt: orNow(s.UpdatedAt), ID: s.ID,
	})
	return oneRow("update session", dialect.Session, n, err)
}

// AppendSessionEvents adds events to their sessions' transcripts in one
// statement.
func (q *queries) AppendSessionEvents(ctx context.Context, events []store.SessionEvent) error {
	if len(events) == 0 {
		return nil
	}
	var p pgdb.AppendSessionEventsParams
	for _, e := range events {
		if err := dialect.Required(dialect.Session, "session id", e.SessionID, "event type", e.Type); err != nil {
			return err
		}
		p.SessionIds = append(p.SessionIds, e.SessionID)
		p.Seqs = append(p.Seqs, e.Seq)
		p.Turns = append(p.Turns, int64(e.Turn))
		p.Types = append(p.Types, e.Type)
		p.Ats = append(p.Ats, orNow(e.At))
		p.Bodies = append(p.Bodies, string(e.Body))
	}
	return classify("append session events", dialect.Session, q.q.AppendSessionEvents(ctx, p))
}

// ListSessionEvents returns a session's events in order.
func (q *queries) ListSessionEvents(ctx context.Context, sessionID string) ([]store.SessionEvent, error) {
	rows, err := q.q.ListSessionEvents(ctx, sessionID)
	if err != nil {
		return nil, classify("list session events", dialect.Session, err)
	}
	return mapRows(rows, func(r pgdb.SessionEvent) store.SessionEvent {
		return store.SessionEvent{
			SessionID: r.SessionID, Seq: r.Seq, Turn: int(r.Turn), Type: r.Type, At: r.At.UTC(), Body: []byte(r.Body),
		}
	}), nil
}
