package sqlite

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/sqlite/litedb"
)

func toAPIKey(k litedb.ApiKey) store.APIKey {
	return store.APIKey{
		ID: k.ID, Name: k.Name, Hash: k.Hash, Prefix: k.Prefix, Role: k.Role,
		OrgID: fromOptString(k.OrgID), UserID: fromOptString(k.UserID), WorkspaceID: fromOptString(k.WorkspaceID),
		CreatedBy: k.CreatedBy, MakerUserID: fromOptString(k.MakerUserID), CreatedAt: fromMicro(k.CreatedAt),
		ExpiresAt: fromOptTime(k.ExpiresAt), RevokedAt: fromOptTime(k.RevokedAt),
	}
}

// CreateAPIKey inserts k. Its hash is unique; an empty OrgID makes an
// installation-wide key. A key narrowed to a workspace needs an org.
func (q *queries) CreateAPIKey(ctx context.Context, k store.APIKey) error {
	if err := dialect.CheckAPIKey(k); err != nil {
		return err
	}
	return classify("create api key", resAPIKey, q.wq.CreateAPIKey(ctx, litedb.CreateAPIKeyParams{
		ID: k.ID, Name: k.Name, Hash: k.Hash, Prefix: k.Prefix, Role: k.Role,
		OrgID: optString(k.OrgID), UserID: optString(k.UserID), WorkspaceID: optString(k.WorkspaceID),
		CreatedBy: k.CreatedBy, MakerUserID: optString(k.MakerUserID), CreatedAt: micros(orNow(k.CreatedAt)),
		ExpiresAt: optTime(k.ExpiresAt), RevokedAt: optTime(k.RevokedAt),
	}))
}

// GetAPIKeyByHash returns the key whose hash is hash, revoked or expired
// as it may be.
func (q *queries) GetAPIKeyByHash(ctx context.Context, hash string) (store.APIKey, error) {
	k, err := q.rq.GetAPIKeyByHash(ctx, hash)
	return toAPIKey(k), classify("get api key", resAPIKey, err)
}

// CountAPIKeys counts every key.
func (q *queries) CountAPIKeys(ctx context.Context) (int, error) {
	n, err := q.rq.CountAPIKeys(ctx)
	return int(n), classify("count api keys", resAPIKey, err)
}

// GetAPIKey returns the key with id.
func (q *queries) GetAPIKey(ctx context.Context, id string) (store.APIKey, error) {
	k, err := q.rq.GetAPIKey(ctx, id)
	return toAPIKey(k), classify("get api key", resAPIKey, err)
}

// ListAPIKeys lists the keys f selects, newest first, revoked ones too.
func (q *queries) ListAPIKeys(ctx context.Context, f store.APIKeyFilter, page store.Page) ([]store.APIKey, string, error) {
	if err := dialect.CheckAPIKeyFilter(f); err != nil {
		return nil, "", err
	}
	return listPage(ctx, "list api keys", resAPIKey, page,
		func(ctx context.Context, k keyset) ([]litedb.ApiKey, error) {
			return q.listAPIKeys(ctx, f, k)
		},
		total(toAPIKey), func(k store.APIKey) (time.Time, string) { return k.CreatedAt, k.ID })
}

// listAPIKeys runs the query of f's scope (an org's keys, the
// installation's, or all), each of which reads its own index.
func (q *queries) listAPIKeys(ctx context.Context, f store.APIKeyFilter, k keyset) ([]litedb.ApiKey, error) {
	user := optString(f.UserID)
	switch {
	case f.OrgID != "":
		return q.rq.ListOrgAPIKeys(ctx, litedb.ListOrgAPIKeysParams{
			OrgID: f.OrgID, UserID: user, BeforeAt: k.At, BeforeID: k.ID, Lim: k.Fetch,
		})
	case f.Installation:
		return q.rq.ListInstallationAPIKeys(ctx, litedb.ListInstallationAPIKeysParams{
			UserID: user, BeforeAt: k.At, BeforeID: k.ID, Lim: k.Fetch,
		})
	}
	return q.rq.ListAPIKeys(ctx, litedb.ListAPIKeysParams{UserID: user, BeforeAt: k.At, BeforeID: k.ID, Lim: k.Fetch})
}

// RevokeAPIKey marks the key with id revoked at at (zero: now) unless it
// already is, and returns the stored key.
func (q *queries) RevokeAPIKey(ctx context.Context, id string, at time.Time) (store.APIKey, error) {
	k, err := q.wq.RevokeAPIKey(ctx, litedb.RevokeAPIKeyParams{At: micros(orNow(at)), ID: id})
	return toAPIKey(k), classify("revoke api key", resAPIKey, err)
}
