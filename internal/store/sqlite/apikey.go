package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

const apiKeyColumns = "id, name, hash, prefix, role, org_id, user_id, workspace_id, created_by, maker_user_id, created_at, expires_at, revoked_at"

func scanAPIKey(sc rowScanner) (store.APIKey, error) {
	var k store.APIKey
	var org, user, workspace, maker sql.NullString
	var created int64
	var expires, revoked sql.NullInt64
	if err := sc.Scan(&k.ID, &k.Name, &k.Hash, &k.Prefix, &k.Role, &org, &user, &workspace, &k.CreatedBy,
		&maker, &created, &expires, &revoked); err != nil {
		return store.APIKey{}, err
	}
	k.OrgID, k.UserID, k.WorkspaceID, k.MakerUserID = org.String, user.String, workspace.String, maker.String
	k.CreatedAt = time.UnixMicro(created).UTC()
	k.ExpiresAt, k.RevokedAt = fromMicros(expires), fromMicros(revoked)
	return k, nil
}

// CreateAPIKey inserts k. Its hash is unique; an empty OrgID makes an
// installation-wide key. A key narrowed to a workspace needs an org.
func (q *queries) CreateAPIKey(ctx context.Context, k store.APIKey) error {
	if err := required(resAPIKey, "id", k.ID, "hash", k.Hash, "role", k.Role); err != nil {
		return err
	}
	if k.WorkspaceID != "" && k.OrgID == "" {
		return errdefs.InvalidArgument("invalid_api_key", "a key narrowed to a workspace needs the workspace's org")
	}
	_, err := q.w.ExecContext(ctx, "INSERT INTO api_keys ("+apiKeyColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		k.ID, k.Name, k.Hash, k.Prefix, k.Role, nullString(k.OrgID), nullString(k.UserID), nullString(k.WorkspaceID),
		k.CreatedBy, nullString(k.MakerUserID), micros(orNow(k.CreatedAt)), optMicros(k.ExpiresAt), optMicros(k.RevokedAt))
	return classify("create api key", resAPIKey, err)
}

// GetAPIKeyByHash returns the key whose hash is hash, revoked or expired
// as it may be.
func (q *queries) GetAPIKeyByHash(ctx context.Context, hash string) (store.APIKey, error) {
	k, err := scanAPIKey(q.r.QueryRowContext(ctx, "SELECT "+apiKeyColumns+" FROM api_keys WHERE hash = ?", hash))
	return k, classify("get api key", resAPIKey, err)
}

// CountAPIKeys counts every key.
func (q *queries) CountAPIKeys(ctx context.Context) (int, error) {
	var n int
	err := q.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM api_keys").Scan(&n)
	return n, classify("count api keys", resAPIKey, err)
}

// GetAPIKey returns the key with id.
func (q *queries) GetAPIKey(ctx context.Context, id string) (store.APIKey, error) {
	k, err := scanAPIKey(q.r.QueryRowContext(ctx, "SELECT "+apiKeyColumns+" FROM api_keys WHERE id = ?", id))
	return k, classify("get api key", resAPIKey, err)
}

// ListAPIKeys lists the keys f selects, newest first, revoked ones too.
func (q *queries) ListAPIKeys(ctx context.Context, f store.APIKeyFilter, page store.Page) ([]store.APIKey, string, error) {
	if f.Installation && f.OrgID != "" {
		return nil, "", errdefs.InvalidArgument("invalid_api_key_filter", "installation-wide keys belong to no org; give an org or ask for installation keys, not both")
	}
	l := listing[store.APIKey]{
		op:     "list api keys",
		res:    resAPIKey,
		from:   "SELECT " + apiKeyColumns + " FROM api_keys",
		newest: true,
		scan:   scanAPIKey,
		key:    func(k store.APIKey) (time.Time, string) { return k.CreatedAt, k.ID },
	}
	if f.Installation {
		l.where = append(l.where, "org_id IS NULL")
	}
	for _, c := range []struct{ column, value string }{
		{"org_id", f.OrgID},
		{"user_id", f.UserID},
	} {
		if c.value != "" {
			l.where = append(l.where, c.column+" = ?")
			l.args = append(l.args, c.value)
		}
	}
	return l.run(ctx, q.r, page)
}

// RevokeAPIKey marks the key with id revoked at at (zero: now) unless it
// already is, and returns the stored key.
func (q *queries) RevokeAPIKey(ctx context.Context, id string, at time.Time) (store.APIKey, error) {
	k, err := scanAPIKey(q.w.QueryRowContext(ctx, "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? RETURNING "+apiKeyColumns,
		micros(orNow(at)), id))
	return k, classify("revoke api key", resAPIKey, err)
}
