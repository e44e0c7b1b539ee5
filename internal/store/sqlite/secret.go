package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/sqlite/litedb"
)

// Secrets: sealed values; the store never sees a plain one.

func secretFromRow(r litedb.Secret) (store.Secret, error) {
	s := store.Secret{
		ID: r.ID, OrgID: r.OrgID, WorkspaceID: r.WorkspaceID, Name: r.Name, Env: r.Env,
		Brokered: r.Brokered != 0, KeyID: r.KeyID, Sealed: r.Sealed, Version: r.Version,
		CreatedAt: fromMicro(r.CreatedAt), UpdatedAt: fromMicro(r.UpdatedAt),
	}
	hosts, err := dialect.DecodeHosts(r.Hosts)
	if err != nil {
		return store.Secret{}, errDecode(resSecret, "hosts", err)
	}
	s.Hosts = hosts
	return s, nil
}

func secretKey(s store.Secret) (time.Time, string) { return s.CreatedAt, s.ID }

// secretHosts encodes hosts as dialect.EncodeHosts does.
func secretHosts(hosts []string) (string, error) {
	v, err := dialect.EncodeHosts(hosts)
	if err != nil {
		return "", errEncode(resSecret, "hosts", err)
	}
	return v, nil
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
	err = q.wq.CreateSecret(ctx, litedb.CreateSecretParams{
		ID: s.ID, OrgID: s.OrgID, WorkspaceID: s.WorkspaceID, Name: s.Name, Env: s.Env, Brokered: boolInt(s.Brokered),
		Hosts: hosts, KeyID: s.KeyID, Sealed: s.Sealed, CreatedAt: micros(orNow(s.CreatedAt)),
	})
	return classify("create secret", resSecret, err)
}

// GetSecret returns the secret with id.
func (q *queries) GetSecret(ctx context.Context, id string) (store.Secret, error) {
	r, err := q.rq.GetSecret(ctx, id)
	if err != nil {
		return store.Secret{}, classify("get secret", resSecret, err)
	}
	return secretFromRow(r)
}

// GetSecretByName returns the secret named name in one scope.
func (q *queries) GetSecretByName(ctx context.Context, orgID, workspaceID, name string) (store.Secret, error) {
	r, err := q.rq.GetSecretByName(ctx, litedb.GetSecretByNameParams{OrgID: orgID, WorkspaceID: workspaceID, Name: name})
	if err != nil {
		return store.Secret{}, classify("get secret by name", resSecret, err)
	}
	return secretFromRow(r)
}

// ListSecrets lists one scope's secrets in creation order.
func (q *queries) ListSecrets(ctx context.Context, orgID, workspaceID string, page store.Page) ([]store.Secret, string, error) {
	return listPage(ctx, "list secrets", resSecret, page, func(ctx context.Context, k keyset) ([]litedb.Secret, error) {
		return q.rq.ListSecrets(ctx, litedb.ListSecretsParams{
			OrgID: orgID, WorkspaceID: workspaceID, AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch,
		})
	}, secretFromRow, secretKey)
}

// AllSecrets returns every secret.
func (q *queries) AllSecrets(ctx context.Context) ([]store.Secret, error) {
	rows, err := q.rq.AllSecrets(ctx)
	if err != nil {
		return nil, classify("all secrets", resSecret, err)
	}
	return mapRows(rows, secretFromRow)
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
	r, err := q.wq.UpdateSecret(ctx, litedb.UpdateSecretParams{
		ID: s.ID, Version: s.Version, Env: s.Env, Brokered: boolInt(s.Brokered), Hosts: hosts,
		KeyID: s.KeyID, Sealed: s.Sealed, UpdatedAt: micros(orNow(s.UpdatedAt)),
	})
	if errors.Is(err, sql.ErrNoRows) {
		return store.Secret{}, q.secretMissOrStale(ctx, s.ID, s.Version)
	}
	if err != nil {
		return store.Secret{}, classify("update secret", resSecret, err)
	}
	return secretFromRow(r)
}

// secretMissOrStale tells why a versioned update of secret id matched no
// row: it is gone (not found), or its version moved on (stale).
func (q *queries) secretMissOrStale(ctx context.Context, id string, version int64) error {
	exists, err := q.wq.SecretExists(ctx, id)
	if err != nil {
		return classify("update secret", resSecret, err)
	}
	if !exists {
		return notFound(resSecret, nil)
	}
	return versionConflict(resSecret, id, version)
}

// DeleteSecret deletes the secret with id.
func (q *queries) DeleteSecret(ctx context.Context, id string) error {
	n, err := q.wq.DeleteSecret(ctx, id)
	return deleted(resSecret, n, err)
}
