package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// SSH keys (migration 0009).

const resSSHKey resource = "ssh_key"

const sshKeyColumns = "id, user_id, name, fingerprint, public_key, org_id, workspace_id, role, api_key_id, created_at"

func scanSSHKey(sc rowScanner) (store.SSHKey, error) {
	var k store.SSHKey
	var org, workspace, role, apiKey sql.NullString
	var created int64
	if err := sc.Scan(&k.ID, &k.UserID, &k.Name, &k.Fingerprint, &k.PublicKey, &org, &workspace, &role, &apiKey, &created); err != nil {
		return store.SSHKey{}, err
	}
	k.OrgID, k.WorkspaceID, k.Role, k.APIKeyID = org.String, workspace.String, role.String, apiKey.String
	k.CreatedAt = time.UnixMicro(created).UTC()
	return k, nil
}

// CreateSSHKey inserts k; its fingerprint is unique.
func (q *queries) CreateSSHKey(ctx context.Context, k store.SSHKey) error {
	err := required(resSSHKey, "id", k.ID, "user id", k.UserID, "fingerprint", k.Fingerprint, "public key", k.PublicKey)
	if err != nil {
		return err
	}
	if (k.WorkspaceID != "" && k.OrgID == "") || (k.OrgID == "") != (k.Role == "") {
		return errdefs.InvalidArgument("invalid_ssh_key", "an SSH key's scope is an org and a role, and optionally a workspace of that org")
	}
	_, err = q.w.ExecContext(ctx, "INSERT INTO ssh_keys ("+sshKeyColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		k.ID, k.UserID, k.Name, k.Fingerprint, k.PublicKey,
		nullString(k.OrgID), nullString(k.WorkspaceID), nullString(k.Role), nullString(k.APIKeyID), micros(orNow(k.CreatedAt)))
	err = classify("create ssh key", resSSHKey, err)
	if errdefs.IsConflict(err) {
		return errdefs.Conflict("ssh_key_exists", "this public key is already registered").WithCause(err)
	}
	return err
}

// GetSSHKey returns the key with id.
func (q *queries) GetSSHKey(ctx context.Context, id string) (store.SSHKey, error) {
	k, err := scanSSHKey(q.r.QueryRowContext(ctx, "SELECT "+sshKeyColumns+" FROM ssh_keys WHERE id = ?", id))
	return k, classify("get ssh key", resSSHKey, err)
}

// GetSSHKeyByFingerprint returns the key whose fingerprint is fingerprint.
func (q *queries) GetSSHKeyByFingerprint(ctx context.Context, fingerprint string) (store.SSHKey, error) {
	k, err := scanSSHKey(q.r.QueryRowContext(ctx, "SELECT "+sshKeyColumns+" FROM ssh_keys WHERE fingerprint = ?", fingerprint))
	return k, classify("get ssh key by fingerprint", resSSHKey, err)
}

// ListSSHKeys lists userID's keys in creation order.
func (q *queries) ListSSHKeys(ctx context.Context, userID string, page store.Page) ([]store.SSHKey, string, error) {
	return listing[store.SSHKey]{
		op:    "list ssh keys",
		res:   resSSHKey,
		from:  "SELECT " + sshKeyColumns + " FROM ssh_keys",
		where: []string{"user_id = ?"},
		args:  []any{userID},
		scan:  scanSSHKey,
		key:   func(k store.SSHKey) (time.Time, string) { return k.CreatedAt, k.ID },
	}.run(ctx, q.r, page)
}

// DeleteSSHKey deletes userID's key id.
func (q *queries) DeleteSSHKey(ctx context.Context, userID, id string) error {
	r, err := q.w.ExecContext(ctx, "DELETE FROM ssh_keys WHERE id = ? AND user_id = ?", id, userID)
	if err != nil {
		return classify("delete ssh key", resSSHKey, err)
	}
	if n, err := r.RowsAffected(); err != nil || n == 0 {
		return classify("delete ssh key", resSSHKey, orNoRows(err))
	}
	return nil
}
