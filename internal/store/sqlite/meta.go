package sqlite

import (
	"context"

	"github.com/paddockhq/paddock/internal/store/sqlite/litedb"
)

// GetMeta returns the value stored under key.
func (q *queries) GetMeta(ctx context.Context, key string) (string, error) {
	v, err := q.rq.GetMeta(ctx, key)
	return v, classify("get meta", resMeta, err)
}

// SetMeta stores value under key, replacing any previous value.
func (q *queries) SetMeta(ctx context.Context, key, value string) error {
	if err := required(resMeta, "key", key); err != nil {
		return err
	}
	return classify("set meta", resMeta, q.wq.SetMeta(ctx, litedb.SetMetaParams{Key: key, Value: value}))
}

// InitMeta stores value under key unless it has one, and returns the
// value stored.
func (q *queries) InitMeta(ctx context.Context, key, value string) (string, error) {
	if err := required(resMeta, "key", key); err != nil {
		return "", err
	}
	v, err := q.wq.InitMeta(ctx, litedb.InitMetaParams{Key: key, Value: value})
	return v, classify("init meta", resMeta, err)
}
