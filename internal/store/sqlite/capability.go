package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/sqlite/litedb"
)

// capVersionOf maps a capability_versions row, bundle and all.
func capVersionOf(v litedb.CapabilityVersion) store.CapabilityVersion {
	return store.CapabilityVersion{
		ID: v.ID, OrgID: v.OrgID, Name: v.Name, Version: v.Version, Description: v.Description,
		Digest: v.Digest, Contents: []byte(v.Contents), Bundle: v.Bundle, SizeBytes: v.SizeBytes,
		CreatedAt: fromMicro(v.CreatedAt),
	}
}

// CreateCapabilityVersion inserts v; empty contents are stored as {}.
func (q *queries) CreateCapabilityVersion(ctx context.Context, v store.CapabilityVersion) error {
	contents, err := dialect.CheckCapabilityVersion(v)
	if err != nil {
		return err
	}
	return classify("create capability version", resCapVer, q.wq.CreateCapabilityVersion(ctx, litedb.CreateCapabilityVersionParams{
		ID: v.ID, OrgID: v.OrgID, Name: v.Name, Version: v.Version, Description: v.Description, Digest: v.Digest,
		Contents: contents, Bundle: v.Bundle, SizeBytes: v.SizeBytes, CreatedAt: micros(orNow(v.CreatedAt)),
	}))
}

// GetCapabilityVersion returns one version with its bundle.
func (q *queries) GetCapabilityVersion(ctx context.Context, orgID, name, version string) (store.CapabilityVersion, error) {
	row, err := q.rq.GetCapabilityVersion(ctx, litedb.GetCapabilityVersionParams{OrgID: orgID, Name: name, Version: version})
	if err != nil {
		return store.CapabilityVersion{}, classify("get capability version", resCapVer, err)
	}
	return capVersionOf(row), nil
}

// ListCapabilityVersions lists the org's versions (of name, when not
// empty) without their bundles.
func (q *queries) ListCapabilityVersions(ctx context.Context, orgID, name string) ([]store.CapabilityVersion, error) {
	rows, err := q.rq.ListCapabilityVersions(ctx, litedb.ListCapabilityVersionsParams{OrgID: orgID, Name: optString(name)})
	if err != nil {
		return nil, classify("list capability versions", resCapVer, err)
	}
	return mapRows(rows, total(func(r litedb.ListCapabilityVersionsRow) store.CapabilityVersion {
		return capVersionOf(litedb.CapabilityVersion{
			ID: r.ID, OrgID: r.OrgID, Name: r.Name, Version: r.Version, Description: r.Description,
			Digest: r.Digest, Contents: r.Contents, SizeBytes: r.SizeBytes, CreatedAt: r.CreatedAt,
		})
	}))
}

// DeleteCapabilityVersion deletes one version.
func (q *queries) DeleteCapabilityVersion(ctx context.Context, orgID, name, version string) error {
	n, err := q.wq.DeleteCapabilityVersion(ctx, litedb.DeleteCapabilityVersionParams{OrgID: orgID, Name: name, Version: version})
	return affected("delete capability version", resCapVer, n, err)
}

// bindingOf maps a capability_bindings row.
func bindingOf(b litedb.CapabilityBinding) (store.CapabilityBinding, error) {
	out := store.CapabilityBinding{
		ID: b.ID, OrgID: b.OrgID, RuntimeID: b.RuntimeID, Source: b.Source, Name: b.Name, Version: b.Version,
		Enabled: b.Enabled != 0, Rev: b.Rev, CreatedAt: fromMicro(b.CreatedAt), UpdatedAt: fromMicro(b.UpdatedAt),
	}
	if err := json.Unmarshal([]byte(b.Flags), &out.Flags); err != nil {
		return store.CapabilityBinding{}, errDecode(resBinding, "flags", err)
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
	return classify("create binding", resBinding, q.wq.CreateBinding(ctx, litedb.CreateBindingParams{
		ID: b.ID, OrgID: b.OrgID, RuntimeID: b.RuntimeID, Source: b.Source, Name: b.Name, Version: b.Version,
		Enabled: boolInt(b.Enabled), Flags: flags, Status: string(b.Status), CreatedAt: micros(orNow(b.CreatedAt)),
	}))
}

// GetBinding returns the binding with id.
func (q *queries) GetBinding(ctx context.Context, id string) (store.CapabilityBinding, error) {
	row, err := q.rq.GetBinding(ctx, id)
	if err != nil {
		return store.CapabilityBinding{}, classify("get binding", resBinding, err)
	}
	return bindingOf(row)
}

// ListBindings lists a runtime's bindings in install order.
func (q *queries) ListBindings(ctx context.Context, runtimeID string) ([]store.CapabilityBinding, error) {
	rows, err := q.rq.ListBindings(ctx, runtimeID)
	if err != nil {
		return nil, classify("list bindings", resBinding, err)
	}
	return mapRows(rows, bindingOf)
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
	row, err := q.wq.UpdateBinding(ctx, litedb.UpdateBindingParams{
		Version: b.Version, Enabled: boolInt(b.Enabled), Flags: flags, UpdatedAt: micros(orNow(b.UpdatedAt)), ID: b.ID, Rev: b.Rev,
	})
	if errors.Is(err, sql.ErrNoRows) {
		return store.CapabilityBinding{}, versionMiss(ctx, resBinding, b.ID, b.Rev, q.wq.BindingExists)
	}
	if err != nil {
		return store.CapabilityBinding{}, classify("update binding", resBinding, err)
	}
	return bindingOf(row)
}

// SetBindingStatus records what applying the binding did.
func (q *queries) SetBindingStatus(ctx context.Context, id string, status []byte, _ time.Time) error {
	n, err := q.wq.SetBindingStatus(ctx, litedb.SetBindingStatusParams{Status: string(status), ID: id})
	return affected("set binding status", resBinding, n, err)
}

// ReplaceBindingStatus writes to if the stored status is still from.
func (q *queries) ReplaceBindingStatus(ctx context.Context, id string, from, to []byte) (bool, error) {
	n, err := q.wq.ReplaceBindingStatus(ctx, litedb.ReplaceBindingStatusParams{ToStatus: string(to), ID: id, FromStatus: string(from)})
	return n == 1, classify("replace binding status", resBinding, err)
}

// DeleteBinding deletes the binding with id. (Nothing references a
// binding, so the delete is never refused.)
func (q *queries) DeleteBinding(ctx context.Context, id string) error {
	n, err := q.wq.DeleteBinding(ctx, id)
	return affected("delete binding", resBinding, n, err)
}

// CountInventoryBindings counts the org's bindings that pin an inventory
// version.
func (q *queries) CountInventoryBindings(ctx context.Context, orgID, name, version string) (int, error) {
	n, err := q.rq.CountInventoryBindings(ctx, litedb.CountInventoryBindingsParams{OrgID: orgID, Name: name, Version: version})
	return int(n), classify("count bindings", resBinding, err)
}

// sessionOf maps a sessions row.
func sessionOf(s litedb.Session) store.Session {
	return store.Session{
		ID: s.ID, OrgID: s.OrgID, WorkspaceID: s.WorkspaceID, RuntimeID: s.RuntimeID, Kind: s.Kind,
		Harness: s.Harness, HarnessSessionID: s.HarnessSessionID, Status: s.Status, Title: s.Title,
		Turns: int(s.Turns), Events: s.Events, CreatedAt: fromMicro(s.CreatedAt), UpdatedAt: fromMicro(s.UpdatedAt),
	}
}

// CreateSession inserts s.
func (q *queries) CreateSession(ctx context.Context, s store.Session) error {
	if err := required(resSession, "id", s.ID, "org id", s.OrgID, "runtime id", s.RuntimeID, "kind", s.Kind,
		"harness", s.Harness, "status", s.Status); err != nil {
		return err
	}
	return classify("create session", resSession, q.wq.CreateSession(ctx, litedb.CreateSessionParams{
		ID: s.ID, OrgID: s.OrgID, WorkspaceID: s.WorkspaceID, RuntimeID: s.RuntimeID, Kind: s.Kind,
		Harness: s.Harness, HarnessSessionID: s.HarnessSessionID, Status: s.Status, Title: s.Title,
		Turns: int64(s.Turns), Events: s.Events, CreatedAt: micros(orNow(s.CreatedAt)), UpdatedAt: micros(orNow(s.UpdatedAt)),
	}))
}

// GetSession returns the session with id.
func (q *queries) GetSession(ctx context.Context, id string) (store.Session, error) {
	row, err := q.rq.GetSession(ctx, id)
	if err != nil {
		return store.Session{}, classify("get session", resSession, err)
	}
	return sessionOf(row), nil
}

// ListSessions lists a runtime's sessions, newest first.
func (q *queries) ListSessions(ctx context.Context, runtimeID string, page store.Page) ([]store.Session, string, error) {
	return listPage(ctx, "list sessions", resSession, page,
		func(ctx context.Context, k keyset) ([]litedb.Session, error) {
			return q.rq.ListSessions(ctx, litedb.ListSessionsParams{RuntimeID: runtimeID, BeforeAt: k.At, BeforeID: k.ID, Lim: k.Fetch})
		}, total(sessionOf), func(s store.Session) (time.Time, string) { return s.CreatedAt, s.ID })
}

// UpdateSession writes s's mutable fields.
func (q *queries) UpdateSession(ctx context.Context, s store.Session) error {
	n, err := q.wq.UpdateSession(ctx, litedb.UpdateSessionParams{
		Harness: s.Harness, HarnessSessionID: s.HarnessSessionID, Status: s.Status, Turns: int64(s.Turns),
		Events: s.Events, UpdatedAt: micros(orNow(s.UpdatedAt)), ID: s.ID,
	})
	return affected("update session", resSession, n, err)
}

// AppendSessionEvents adds events to their sessions' transcripts, one
// prepared insert each.
func (q *queries) AppendSessionEvents(ctx context.Context, events []store.SessionEvent) error {
	for _, e := range events {
		if err := required(resSession, "session id", e.SessionID, "event type", e.Type); err != nil {
			return err
		}
		err := q.wq.AppendSessionEvent(ctx, litedb.AppendSessionEventParams{
			SessionID: e.SessionID, Seq: e.Seq, Turn: int64(e.Turn), Type: e.Type, At: micros(orNow(e.At)), Body: string(e.Body),
		})
		if err != nil {
			return classify("append session event", resSession, err)
		}
	}
	return nil
}

// ListSessionEvents returns a session's events in order.
func (q *queries) ListSessionEvents(ctx context.Context, sessionID string) ([]store.SessionEvent, error) {
	rows, err := q.rq.ListSessionEvents(ctx, sessionID)
	if err != nil {
		return nil, classify("list session events", resSession, err)
	}
	return mapRows(rows, total(func(r litedb.SessionEvent) store.SessionEvent {
		return store.SessionEvent{
			SessionID: r.SessionID, Seq: r.Seq, Turn: int(r.Turn), Type: r.Type, At: fromMicro(r.At), Body: []byte(r.Body),
		}
	}))
}
