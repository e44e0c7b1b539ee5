package postgres

import (
	"context"

	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/postgres/pgdb"
)

// GetMeta returns the value stored under key.
func (q *queries) GetMeta(ctx context.Context, key string) (string, error) {
	v, err := q.q.GetMeta(ctx, key)
	return v, classify("get meta", dialect.Meta, err)
}

// SetMeta stores value under key, replacing any previous value.
func (q *queries) SetMeta(ctx context.Context, key, value string) error {
	if err := dialect.Required(dialect.Meta, "key", key); err != nil {
		return err
	}
	return classify("set meta", dialect.Meta, q.q.SetMeta(ctx, pgdb.SetMetaParams{Key: key, Value: value}))
}

// InitMeta stores value under key unless it has one, and returns the
// value stored.
func (q *queries) InitMeta(ctx context.Context, key, value string) (string, error) {
	if err := dialect.Required(dialect.Meta, "key", key); err != nil {
		return "", err
	}
	v, err := q.q.InitMeta(ctx, pgdb.InitMetaParams{Key: key, Value: value})
	return v, classify("init meta", dialect.Meta, err)
}
