package sqlite

import (
	"context"
	"encoding/base64"
	"strconv"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
)

// Listings use keyset pagination on (created_at, id).

// cursor is a listing position: the created_at and id of the last row of
// the previous page. On the wire it is base64url("micros:id").
type cursor struct {
	at int64
	id string
}

func (c cursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.at, 10) + ":" + c.id))
}

// parsePage validates a page and decodes its cursor. ok is false for the
// first page.
func parsePage(p store.Page) (c cursor, ok bool, limit int, err error) {
	dc, ok, limit, err := dialect.ParsePage(p)
	return cursor{at: dc.At.UnixMicro(), id: dc.ID}, ok, limit, err
}

// nextCursor trims a page fetched with limit+1 rows to limit and returns
// the cursor for the next page, "" when this page is the last.
func nextCursor[T any](rows []T, limit int, key func(T) (time.Time, string)) ([]T, string) {
	return dialect.NextCursor(rows, limit, key)
}

// keyset is where a generated listing query starts: At and ID are nil for
// the first page, and Fetch is the page's limit plus one.
type keyset struct {
	At    *int64
	ID    *string
	Fetch int64
}

// listPage runs one keyset-paginated listing of generated queries: fetch
// runs the query for k, conv maps its rows and key gives a value's
// created_at and id for the next cursor.
func listPage[R, T any](ctx context.Context, op string, res resource, page store.Page,
	fetch func(ctx context.Context, k keyset) ([]R, error), conv func(R) (T, error), key func(T) (time.Time, string),
) ([]T, string, error) {
	c, after, limit, err := parsePage(page)
	if err != nil {
		return nil, "", err
	}
	k := keyset{Fetch: int64(limit) + 1}
	if after {
		k.At, k.ID = &c.at, &c.id
	}
	rows, err := fetch(ctx, k)
	if err != nil {
		return nil, "", classify(op, res, err)
	}
	out, err := mapRows(rows, conv)
	if err != nil {
		return nil, "", err
	}
	out, next := nextCursor(out, limit, key)
	return out, next, nil
}
