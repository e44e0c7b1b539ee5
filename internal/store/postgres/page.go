package postgres

import (
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
)

// pageArgs is a listing's page in the terms of the generated queries: the
// cursor's created_at and id (nil on the first page) and the page size.
// Listing queries take LIMIT lim(), one row more than the page holds, so
// the listing knows whether another page follows.
type pageArgs struct {
	afterAt *time.Time
	afterID *string
	limit   int
}

// parsePage validates p and decodes its cursor.
func parsePage(p store.Page) (pageArgs, error) {
	c, ok, limit, err := dialect.ParsePage(p)
	if err != nil {
		return pageArgs{}, err
	}
	pa := pageArgs{limit: limit}
	if ok {
		pa.afterAt, pa.afterID = &c.At, &c.ID
	}
	return pa, nil
}

// lim is the LIMIT of the page's query.
func (p pageArgs) lim() int32 { return int32(p.limit + 1) }

// finishPage maps the rows a listing fetched with lim() to store records,
// trims them to the page and returns the cursor of the next page ("" when
// this one is the last). A failed query's err is classified as op on res.
func finishPage[R, T any](op string, res dialect.Resource, p pageArgs, rows []R, err error,
	conv func(R) T, key func(T) (time.Time, string)) ([]T, string, error) {
	if err != nil {
		return nil, "", classify(op, res, err)
	}
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i] = conv(r)
	}
	out, next := dialect.NextCursor(out, p.limit, key)
	return out, next, nil
}

// stamp is a time as the store writes it: UTC, truncated to the
// microsecond (PostgreSQL would round), and now() when t is zero.
func stamp(t time.Time) time.Time {
	if t.IsZero() {
		return now()
	}
	return t.UTC().Truncate(time.Microsecond)
}
