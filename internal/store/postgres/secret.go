package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/postgres/pgdb"
)

// Secrets: sealed values; the store never sees a plain one.

func secretFromRow(r pgdb.Secret) (store.Secret, error) {
	s := store.Secret{
		ID: r.ID, OrgID: r.OrgID, WorkspaceID: r.WorkspaceID, Name: r.Name, Env: r.Env,
		Brokered: r.Brokered, KeyID: r.KeyID, Sealed: r.Sealed, Version: r.Version,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
	}
	hosts, err := dialect.DecodeHosts(r.Hosts)
	if err != nil {
		return store.Secret{}, errDecode(dialect.Secret, "hosts", err)
	}
	s.Hosts = hosts
	return s, nil
}

// secretsFromRows maps rows in order; no rows is nil.
func secretsFromRows(rows []pgdb.Secret) ([]store.Secret, error) {
	var out []store.Secret
	for _, r := range rows {
		s, err := secretFromRow(r)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// secretHosts encodes hosts as dialect.EncodeHosts does.
func secretHosts(hosts []string) (string, error) {
	v, err := dialect.EncodeHosts(hosts)
	if err != nil {
		return "", errEncode(dialect.Secret, "hosts", err)
	}
	return v, nil
}

// CreateSecret inserts s at version 1.
func (q *queries) CreateSecret(ctx context.Context, s store.Secret) error {
	if err := dialect.Required(dialect.Secret, "id", s.ID, "org id", s.OrgID, "name", s.Name, "env", s.Env, "key id", s.KeyID); err != nil {
		return err
	}
	hosts, err := secretHosts(s.Hosts)
	if err != nil {
		return err
	}
	err = q.q.CreateSecret(ctx, pgdb.CreateSecretParams{
		ID: s.ID, OrgID: s.OrgID, WorkspaceID: s.WorkspaceID, Name: s.Name, Env: s.Env, Brokered: s.Brokered,
		Hosts: hosts, KeyID: s.KeyID, Sealed: s.Sealed, CreatedAt: orNow(s.CreatedAt),
	})
	return classify("create secret", dialect.Secret, err)
}

// GetSecret returns the secret with id.
func (q *queries) GetSecret(ctx context.Context, id string) (store.Secret, error) {
	r, err := q.q.GetSecret(ctx, id)
	if err != nil {
		return store.Secret{}, classify("get secret", dialect.Secret, err)
	}
	return secretFromRow(r)
}

// GetSecretByName returns the secret named name in one scope.
func (q *queries) GetSecretByName(ctx context.Context, orgID, workspaceID, name string) (store.Secret, error) {
	r, err := q.q.GetSecretByName(ctx, pgdb.GetSecretByNameParams{OrgID: orgID, WorkspaceID: workspaceID, Name: name})
	if err != nil {
		return store.Secret{}, classify("get secret by name", dialect.Secret, err)
	}
	return secretFromRow(r)
}

// ListSecrets lists one scope's secrets in creation order.
func (q *queries) ListSecrets(ctx context.Context, orgID, workspaceID string, page store.Page) ([]store.Secret, string, error) {
	rows, next, err := listPage(ctx, "list secrets", dialect.Secret, page,
		func(ctx context.Context, k keyset) ([]pgdb.Secret, error) {
			return q.q.ListSecrets(ctx, pgdb.ListSecretsParams{
				OrgID: orgID, WorkspaceID: workspaceID, AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch,
			})
		},
		func(r pgdb.Secret) pgdb.Secret { return r },
		func(r pgdb.Secret) (time.Time, string) { return r.CreatedAt, r.ID })
	if err != nil {
		return nil, "", err
	}
	out, err := secretsFromRows(rows)
	if err != nil {
		return nil, "", err
	}
	return out, next, nil
}

// AllSecrets returns every secret.
func (q *queries) AllSecrets(ctx context.Context) ([]store.Secret, error) {
	rows, err := q.q.AllSecrets(ctx)
	if err != nil {
		return nil, classify("all secrets", dialect.Secret, err)
	}
	return secretsFromRows(rows)
}

// UpdateSecret writes s's mutable fields if its version is current.
func (q *queries) UpdateSecret(ctx context.Context, s store.Secret) (store.Secret, error) {
	if err := dialect.Required(dialect.Secret, "id", s.ID, "env", s.Env, "key id", s.KeyID); err != nil {
		return store.Secret{}, err
	}
	hosts, err := secretHosts(s.Hosts)
	if err != nil {
		return store.Secret{}, err
	}
	r, err := q.q.UpdateSecret(ctx, pgdb.UpdateSecretParams{
		ID: s.ID, Version: s.Version, Env: s.Env, Brokered: s.Brokered, Hosts: hosts,
		KeyID: s.KeyID, Sealed: s.Sealed, UpdatedAt: orNow(s.UpdatedAt),
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Secret{}, q.secretMissOrStale(ctx, s.ID, s.Version)
	}
	if err != nil {
		return store.Secret{}, classify("update secret", dialect.Secret, err)
	}
	return secretFromRow(r)
}

// secretMissOrStale tells why a versioned update of secret id matched no
// row: it is gone (not found), or its version moved on (stale).
func (q *queries) secretMissOrStale(ctx context.Context, id string, version int64) error {
	exists, err := q.q.SecretExists(ctx, id)
	if err != nil {
		return classify("update secret", dialect.Secret, err)
	}
	if !exists {
		return dialect.NotFound(dialect.Secret, nil)
	}
	return dialect.VersionConflict(dialect.Secret, id, version)
}

// DeleteSecret deletes the secret with id.
func (q *queries) DeleteSecret(ctx context.Context, id string) error {
	n, err := q.q.DeleteSecret(ctx, id)
	return deleted(dialect.Secret, n, err)
}
