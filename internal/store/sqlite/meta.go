package sqlite

import "context"

// GetMeta returns the value stored under key.
func (q *queries) GetMeta(ctx context.Context, key string) (string, error) {
	var v string
	err := q.r.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = ?", key).Scan(&v)
	if err != nil {
		return "", classify("get meta", resMeta, err)
	}
	return v, nil
}

// SetMeta stores value under key, replacing any previous value.
func (q *queries) SetMeta(ctx context.Context, key, value string) error {
	if err := required(resMeta, "key", key); err != nil {
		return err
	}
	_, err := q.w.ExecContext(ctx,
		"INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
		key, value)
	return classify("set meta", resMeta, err)
}
