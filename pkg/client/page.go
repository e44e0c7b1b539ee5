package client

import (
	"context"
	"iter"
)

// All walks every item of a listing, page by page, starting from first.
// list fetches one page; wrap a List method to use it:
//
//	for p, err := range client.All(ctx, client.ListOptions{}, func(ctx context.Context, o client.ListOptions) (client.List[client.Project], error) {
//		return c.ListProjects(ctx, org, ws, o)
//	}) {
//		if err != nil { … }
//	}
//
// An error ends the walk after it is yielded.
func All[T any](ctx context.Context, first ListOptions, list func(context.Context, ListOptions) (List[T], error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		opts := first
		for {
			page, err := list(ctx, opts)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range page.Items {
				if !yield(it, nil) {
					return
				}
			}
			if page.NextCursor == "" || page.NextCursor == opts.Cursor {
				return
			}
			opts.Cursor = page.NextCursor
		}
	}
}

// AllSandboxes walks every sandbox of org's ledger that f matches, from
// f.Cursor on.
func (c *Client) AllSandboxes(ctx context.Context, org string, f SandboxFilter) iter.Seq2[Sandbox, error] {
	return All(ctx, ListOptions{Cursor: f.Cursor, Limit: f.Limit}, func(ctx context.Context, o ListOptions) (List[Sandbox], error) {
		g := f
		g.Cursor, g.Limit = o.Cursor, o.Limit
		return c.ListSandboxes(ctx, org, g)
	})
}

// List is one page of a listing: the type every *List schema of the spec
// names (OrgList is List[Org]). NextCursor is empty on the last page; pass
// it as ?cursor= to get the next one.
type List[T any] struct {
	Items      []T    `json:"items"`
	NextCursor string `json:"next_cursor,omitempty"`
}
