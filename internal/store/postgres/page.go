package postgres

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
)

// keyset is a listing page as the generated queries take it: the
// position of the previous page's last row (nil on the first page), and
// how many rows to fetch, one more than the page holds so the listing
// knows whether another page follows.
type keyset struct {
	At    *time.Time
	ID    *string
	Fetch int32
}

// listPage runs one keyset-paginated listing: fetch runs the generated
// query for k, conv maps its rows and key gives a value's created_at and
// id for the next cursor.
func listPage[R, T any](ctx context.Context, op string, res dialect.Resource, page store.Page,
	fetch func(ctx context.Context, k keyset) ([]R, error), conv func(R) T, key func(T) (time.Time, string),
) ([]T, string, error) {
	c, after, limit, err := dialect.ParsePage(page)
	if err != nil {
		return nil, "", err
	}
	k := keyset{Fetch: int32(limit + 1)}
	if after {
		k.At, k.ID = &c.At, &c.ID
	}
	rows, err := fetch(ctx, k)
	if err != nil {
		return nil, "", classify(op, res, err)
	}
	out, next := dialect.NextCursor(mapRows(rows, conv), limit, key)
	return out, next, nil
}
