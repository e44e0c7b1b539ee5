package postgres

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/postgres/pgdb"
)

func toAPIKey(k pgdb.ApiKey) store.APIKey {
	return store.APIKey{
		ID: k.ID, Name: k.Name, Hash: k.Hash, Prefix: k.Prefix, Role: k.Role,
		OrgID: fromOptString(k.OrgID), UserID: fromOptString(k.UserID), WorkspaceID: fromOptString(k.WorkspaceID),
		CreatedBy: k.CreatedBy, MakerUserID: fromOptString(k.MakerUserID), CreatedAt: k.CreatedAt.UTC(),
		ExpiresAt: fromOptTime(k.ExpiresAt), RevokedAt: fromOptTime(k.RevokedAt),
	}
}

// CreateAPIKey inserts k. Its hash is unique; an empty OrgID makes an
// installation-wide key. A key narrowed to a workspace needs an org.
func (q *queries) CreateAPIKey(ctx context.Context, k store.APIKey) error {
	if err := dialect.CheckAPIKey(k); err != nil {
		return err
	}
	return classify("create api key", dialect.APIKey, q.q.CreateAPIKey(ctx, pgdb.CreateAPIKeyParams{
		ID: k.ID, Name: k.Name, Hash: k.Hash, Prefix: k.Prefix, Role: k.Role,
		OrgID: optString(k.OrgID), UserID: optString(k.UserID), WorkspaceID: optString(k.WorkspaceID),
		CreatedBy: k.CreatedBy, MakerUserID: optString(k.MakerUserID), CreatedAt: orNow(k.CreatedAt),
		ExpiresAt: optTime(k.ExpiresAt), RevokedAt: optTime(k.RevokedAt),
	}))
}

// GetAPIKeyByHash returns the key whose hash is hash, revoked or expired
// as it may be.
func (q *queries) GetAPIKeyByHash(ctx context.Context, hash string) (store.APIKey, error) {
	k, err := q.q.GetAPIKeyByHash(ctx, hash)
	return toAPIKey(k), classify("get api key", dialect.APIKey, err)
}

// CountAPIKeys counts every key.
func (q *queries) CountAPIKeys(ctx context.Context) (int, error) {
	n, err := q.q.CountAPIKeys(ctx)
	return int(n), classify("count api keys", dialect.APIKey, err)
}

// GetAPIKey returns the key with id.
func (q *queries) GetAPIKey(ctx context.Context, id string) (store.APIKey, error) {
	k, err := q.q.GetAPIKey(ctx, id)
	return toAPIKey(k), classify("get api key", dialect.APIKey, err)
}

// ListAPIKeys lists the keys f selects, newest first, revoked ones too.
func (q *queries) ListAPIKeys(ctx context.Context, f store.APIKeyFilter, page store.Page) ([]store.APIKey, string, error) {
	if err := dialect.CheckAPIKeyFilter(f); err != nil {
		return nil, "", err
	}
	return listPage(ctx, "list api keys", dialect.APIKey, page,
		func(ctx context.Context, k keyset) ([]pgdb.ApiKey, error) {
			return q.q.ListAPIKeys(ctx, pgdb.ListAPIKeysParams{
				Installation: f.Installation, OrgID: optString(f.OrgID), UserID: optString(f.UserID),
				BeforeAt: k.At, BeforeID: k.ID, Lim: k.Fetch,
			})
		},
		toAPIKey, func(k store.APIKey) (time.Time, string) { return k.CreatedAt, k.ID })
}

// RevokeAPIKey marks the key with id revoked at at (zero: now) unless it
// already is, and returns the stored key.
func (q *queries) RevokeAPIKey(ctx context.Context, id string, at time.Time) (store.APIKey, error) {
	k, err := q.q.RevokeAPIKey(ctx, pgdb.RevokeAPIKeyParams{At: orNow(at), ID: id})
	return toAPIKey(k), classify("revoke api key", dialect.APIKey, err)
}
