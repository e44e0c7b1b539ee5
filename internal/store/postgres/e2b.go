package postgres

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/postgres/pgdb"
)

// E2B sandboxes (migration 0015).

const resE2B = dialect.E2BSandbox

// toE2BSandbox converts a row; metadata this dialect wrote always
// decodes, so a row that does not keeps empty metadata.
func toE2BSandbox(s pgdb.E2bSandbox) store.E2BSandbox {
	md, err := dialect.E2BMetadata(s.Metadata)
	if err != nil {
		md = map[string]string{}
	}
	return store.E2BSandbox{RuntimeID: s.RuntimeID, WorkspaceID: s.WorkspaceID, TemplateID: s.TemplateID,
		Metadata: md, CreatedAt: s.CreatedAt.UTC()}
}

// CreateE2BSandbox inserts s.
func (q *queries) CreateE2BSandbox(ctx context.Context, s store.E2BSandbox) error {
	md, err := dialect.CheckE2BSandbox(s)
	if err != nil {
		return err
	}
	return classify("create e2b sandbox", resE2B, q.q.CreateE2BSandbox(ctx, pgdb.CreateE2BSandboxParams{
		RuntimeID: s.RuntimeID, WorkspaceID: s.WorkspaceID, TemplateID: s.TemplateID, Metadata: md,
		CreatedAt: orNow(s.CreatedAt),
	}))
}

// GetE2BSandbox returns runtimeID's E2B sandbox.
func (q *queries) GetE2BSandbox(ctx context.Context, runtimeID string) (store.E2BSandbox, error) {
	s, err := q.q.GetE2BSandbox(ctx, runtimeID)
	return toE2BSandbox(s), classify("get e2b sandbox", resE2B, err)
}

// ListE2BSandboxes lists workspaceID's E2B sandboxes in creation order.
func (q *queries) ListE2BSandboxes(ctx context.Context, workspaceID string, page store.Page) ([]store.E2BSandbox, string, error) {
	return listPage(ctx, "list e2b sandboxes", resE2B, page,
		func(ctx context.Context, k keyset) ([]pgdb.E2bSandbox, error) {
			return q.q.ListE2BSandboxes(ctx, pgdb.ListE2BSandboxesParams{WorkspaceID: workspaceID, AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch})
		},
		toE2BSandbox, func(s store.E2BSandbox) (time.Time, string) { return s.CreatedAt, s.RuntimeID })
}
