package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/paddockhq/paddock/internal/store"
)

const secretColumns = "id, org_id, workspace_id, name, env, brokered, hosts, key_id, sealed, version, created_at, updated_at"

func scanSecret(sc rowScanner) (store.Secret, error) {
	var s store.Secret
	var hosts string
	var created, updated int64
	if err := sc.Scan(&s.ID, &s.OrgID, &s.WorkspaceID, &s.Name, &s.Env, &s.Brokered, &hosts, &s.KeyID, &s.Sealed,
		&s.Version, &created, &updated); err != nil {
		return store.Secret{}, err
	}
	if err := json.Unmarshal([]byte(hosts), &s.Hosts); err != nil {
		return store.Secret{}, errEncode(resSecret, "hosts", err)
	}
	s.CreatedAt = time.UnixMicro(created).UTC()
	s.UpdatedAt = time.UnixMicro(updated).UTC()
	return s, nil
}

func secretHosts(hosts []string) (string, error) {
	if hosts == nil {
		hosts = []string{}
	}
	b, err := json.Marshal(hosts)
	if err != nil {
		return "", errEncode(resSecret, "hosts", err)
	}
	return string(b), nil
}

// CreateSecret inserts s at version 1.
func (q *queries) CreateSecret(ctx context.Context, s store.Secret) error {
	if err := required(resSecret, "id", s.ID, "org id", s.OrgID, "name", s.Name, "env", s.Env, "key id", s.KeyID); err != nil {
		return err
	}
	hosts, err := secretHosts(s.Hosts)
	if err != nil {
		return err
	}
	created := micros(orNow(s.CreatedAt))
	_, err = q.w.ExecContext(ctx, "INSERT INTO secrets ("+secretColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
		s.ID, s.OrgID, s.WorkspaceID, s.Name, s.Env, s.Brokered, hosts, s.KeyID, s.Sealed, created, created)
	return classify("create secret", resSecret, err)
}

// GetSecret returns the secret with id.
func (q *queries) GetSecret(ctx context.Context, id string) (store.Secret, error) {
	s, err := scanSecret(q.r.QueryRowContext(ctx, "SELECT "+secretColumns+" FROM secrets WHERE id = ?", id))
	return s, classify("get secret", resSecret, err)
}

// GetSecretByName returns the secret named name in one scope.
func (q *queries) GetSecretByName(ctx context.Context, orgID, workspaceID, name string) (store.Secret, error) {
	s, err := scanSecret(q.r.QueryRowContext(ctx,
		"SELECT "+secretColumns+" FROM secrets WHERE org_id = ? AND workspace_id = ? AND name = ?", orgID, workspaceID, name))
	return s, classify("get secret by name", resSecret, err)
}

// ListSecrets lists one scope's secrets in creation order.
func (q *queries) ListSecrets(ctx context.Context, orgID, workspaceID string, page store.Page) ([]store.Secret, string, error) {
	return listing[store.Secret]{
		op:    "list secrets",
		res:   resSecret,
		from:  "SELECT " + secretColumns + " FROM secrets",
		where: []string{"org_id = ?", "workspace_id = ?"},
		args:  []any{orgID, workspaceID},
		scan:  scanSecret,
		key:   func(s store.Secret) (time.Time, string) { return s.CreatedAt, s.ID },
	}.run(ctx, q.r, page)
}

// AllSecrets returns every secret.
func (q *queries) AllSecrets(ctx context.Context) ([]store.Secret, error) {
	rows, err := q.r.QueryContext(ctx, "SELECT "+secretColumns+" FROM secrets ORDER BY id")
	if err != nil {
		return nil, classify("all secrets", resSecret, err)
	}
	defer rows.Close()
	var out []store.Secret
	for rows.Next() {
		s, err := scanSecret(rows)
		if err != nil {
			return nil, classify("all secrets", resSecret, err)
		}
		out = append(out, s)
	}
	return out, classify("all secrets", resSecret, rows.Err())
}

// UpdateSecret writes s's mutable fields if its version is current.
func (q *queries) UpdateSecret(ctx context.Context, s store.Secret) (store.Secret, error) {
	if err := required(resSecret, "id", s.ID, "env", s.Env, "key id", s.KeyID); err != nil {
		return store.Secret{}, err
	}
	hosts, err := secretHosts(s.Hosts)
	if err != nil {
		return store.Secret{}, err
	}
	got, err := scanSecret(q.w.QueryRowContext(ctx, `UPDATE secrets SET
		env = ?, brokered = ?, hosts = ?, key_id = ?, sealed = ?, version = version + 1, updated_at = ?
		WHERE id = ? AND version = ?
		RETURNING `+secretColumns,
		s.Env, s.Brokered, hosts, s.KeyID, s.Sealed, micros(orNow(s.UpdatedAt)), s.ID, s.Version))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Secret{}, q.missOrConflict(ctx, "secrets", resSecret, s.ID, s.Version)
	}
	return got, classify("update secret", resSecret, err)
}

// DeleteSecret deletes the secret with id.
func (q *queries) DeleteSecret(ctx context.Context, id string) error {
	return q.deleteByID(ctx, "secrets", resSecret, id)
}
