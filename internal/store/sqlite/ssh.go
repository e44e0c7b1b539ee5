package sqlite

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/sqlite/litedb"
)

// SSH keys (migration 0009).

const resSSHKey = dialect.SSHKey

func toSSHKey(k litedb.SshKey) store.SSHKey {
	return store.SSHKey{
		ID: k.ID, UserID: k.UserID, Name: k.Name, Fingerprint: k.Fingerprint, PublicKey: k.PublicKey,
		OrgID: fromOptString(k.OrgID), WorkspaceID: fromOptString(k.WorkspaceID), Role: fromOptString(k.Role),
		APIKeyID: fromOptString(k.ApiKeyID), CreatedAt: fromMicro(k.CreatedAt),
	}
}

// CreateSSHKey inserts k; its fingerprint is unique.
func (q *queries) CreateSSHKey(ctx context.Context, k store.SSHKey) error {
	if err := dialect.CheckSSHKey(k); err != nil {
		return err
	}
	err := classify("create ssh key", resSSHKey, q.wq.CreateSSHKey(ctx, litedb.CreateSSHKeyParams{
		ID: k.ID, UserID: k.UserID, Name: k.Name, Fingerprint: k.Fingerprint, PublicKey: k.PublicKey,
		OrgID: optString(k.OrgID), WorkspaceID: optString(k.WorkspaceID), Role: optString(k.Role),
		ApiKeyID: optString(k.APIKeyID), CreatedAt: micros(orNow(k.CreatedAt)),
	}))
	if errdefs.IsConflict(err) {
		return dialect.SSHKeyExists(err)
	}
	return err
}

// GetSSHKey returns the key with id.
func (q *queries) GetSSHKey(ctx context.Context, id string) (store.SSHKey, error) {
	k, err := q.rq.GetSSHKey(ctx, id)
	return toSSHKey(k), classify("get ssh key", resSSHKey, err)
}

// GetSSHKeyByFingerprint returns the key whose fingerprint is fingerprint.
func (q *queries) GetSSHKeyByFingerprint(ctx context.Context, fingerprint string) (store.SSHKey, error) {
	k, err := q.rq.GetSSHKeyByFingerprint(ctx, fingerprint)
	return toSSHKey(k), classify("get ssh key by fingerprint", resSSHKey, err)
}

// ListSSHKeys lists userID's keys in creation order.
func (q *queries) ListSSHKeys(ctx context.Context, userID string, page store.Page) ([]store.SSHKey, string, error) {
	return listPage(ctx, "list ssh keys", resSSHKey, page,
		func(ctx context.Context, k keyset) ([]litedb.SshKey, error) {
			return q.rq.ListSSHKeys(ctx, litedb.ListSSHKeysParams{UserID: userID, AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch})
		},
		total(toSSHKey), func(k store.SSHKey) (time.Time, string) { return k.CreatedAt, k.ID })
}

// DeleteSSHKey deletes userID's key id.
func (q *queries) DeleteSSHKey(ctx context.Context, userID, id string) error {
	n, err := q.wq.DeleteSSHKey(ctx, litedb.DeleteSSHKeyParams{ID: id, UserID: userID})
	return affected("delete ssh key", resSSHKey, n, err)
}
