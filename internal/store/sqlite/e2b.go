package sqlite

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/sqlite/litedb"
)

// E2B sandboxes (migration 0015).

const resE2B = dialect.E2BSandbox

func toE2BSandbox(s litedb.E2bSandbox) (store.E2BSandbox, error) {
	md, err := dialect.E2BMetadata(s.Metadata)
	return store.E2BSandbox{RuntimeID: s.RuntimeID, WorkspaceID: s.WorkspaceID, TemplateID: s.TemplateID,
		Metadata: md, CreatedAt: fromMicro(s.CreatedAt)}, err
}

// CreateE2BSandbox inserts s.
func (q *queries) CreateE2BSandbox(ctx context.Context, s store.E2BSandbox) error {
	md, err := dialect.CheckE2BSandbox(s)
	if err != nil {
		return err
	}
	return classify("create e2b sandbox", resE2B, q.wq.CreateE2BSandbox(ctx, litedb.CreateE2BSandboxParams{
		RuntimeID: s.RuntimeID, WorkspaceID: s.WorkspaceID, TemplateID: s.TemplateID, Metadata: md,
		CreatedAt: micros(orNow(s.CreatedAt)),
	}))
}

// GetE2BSandbox returns runtimeID's E2B sandbox.
func (q *queries) GetE2BSandbox(ctx context.Context, runtimeID string) (store.E2BSandbox, error) {
	s, err := q.rq.GetE2BSandbox(ctx, runtimeID)
	if err != nil {
		return store.E2BSandbox{}, classify("get e2b sandbox", resE2B, err)
	}
	return toE2BSandbox(s)
}

// ListE2BSandboxes lists workspaceID's E2B sandboxes in creation order.
func (q *queries) ListE2BSandboxes(ctx context.Context, workspaceID string, page store.Page) ([]store.E2BSandbox, string, error) {
	return listPage(ctx, "list e2b sandboxes", resE2B, page,
		func(ctx context.Context, k keyset) ([]litedb.E2bSandbox, error) {
			return q.rq.ListE2BSandboxes(ctx, litedb.ListE2BSandboxesParams{WorkspaceID: workspaceID, AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch})
		},
		toE2BSandbox, func(s store.E2BSandbox) (time.Time, string) { return s.CreatedAt, s.RuntimeID })
}
