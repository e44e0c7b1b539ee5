package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/paddockhq/paddock/internal/store"
)

const apiKeyColumns = "id, name, hash, prefix, role, org_id, created_at"

func scanAPIKey(sc rowScanner) (store.APIKey, error) {
	var k store.APIKey
	var org sql.NullString
	var created int64
	if err := sc.Scan(&k.ID, &k.Name, &k.Hash, &k.Prefix, &k.Role, &org, &created); err != nil {
		return store.APIKey{}, err
	}
	k.OrgID = org.String
	k.CreatedAt = time.UnixMicro(created).UTC()
	return k, nil
}

// CreateAPIKey inserts k. Its hash is unique; an empty OrgID makes an
// installation-wide key.
func (q *queries) CreateAPIKey(ctx context.Context, k store.APIKey) error {
	if err := required(resAPIKey, "id", k.ID, "hash", k.Hash, "role", k.Role); err != nil {
		return err
	}
	_, err := q.w.ExecContext(ctx, "INSERT INTO api_keys ("+apiKeyColumns+") VALUES (?, ?, ?, ?, ?, ?, ?)",
		k.ID, k.Name, k.Hash, k.Prefix, k.Role, nullString(k.OrgID), micros(orNow(k.CreatedAt)))
	return classify("create api key", resAPIKey, err)
}

// GetAPIKeyByHash returns the key whose hash is hash.
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
