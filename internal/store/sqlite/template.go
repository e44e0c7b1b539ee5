package sqlite

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/sqlite/litedb"
)

// Templates (migration 0016).

func toTemplate(r litedb.Template) (store.Template, error) {
	c, err := dialect.TemplateConfig(r.Config)
	return store.Template{ID: r.ID, OrgID: r.OrgID, WorkspaceID: r.WorkspaceID, Name: r.Name,
		Description: r.Description, Config: c, CreatedAt: fromMicro(r.CreatedAt)}, err
}

// CreateTemplate inserts t. Its name is unique within its workspace.
func (q *queries) CreateTemplate(ctx context.Context, t store.Template) error {
	config, err := dialect.CheckTemplate(t)
	if err != nil {
		return err
	}
	return classify("create template", dialect.Template, q.wq.CreateTemplate(ctx, litedb.CreateTemplateParams{
		ID: t.ID, OrgID: t.OrgID, WorkspaceID: t.WorkspaceID, Name: t.Name, Description: t.Description,
		Config: config, CreatedAt: micros(orNow(t.CreatedAt)),
	}))
}

// GetTemplate returns the template with id.
func (q *queries) GetTemplate(ctx context.Context, id string) (store.Template, error) {
	r, err := q.rq.GetTemplate(ctx, id)
	if err != nil {
		return store.Template{}, classify("get template", dialect.Template, err)
	}
	return toTemplate(r)
}

// GetTemplateByName returns the template of workspaceID named name.
func (q *queries) GetTemplateByName(ctx context.Context, workspaceID, name string) (store.Template, error) {
	r, err := q.rq.GetTemplateByName(ctx, litedb.GetTemplateByNameParams{WorkspaceID: workspaceID, Name: name})
	if err != nil {
		return store.Template{}, classify("get template by name", dialect.Template, err)
	}
	return toTemplate(r)
}

// ListTemplates lists the templates of workspaceID in creation order.
func (q *queries) ListTemplates(ctx context.Context, workspaceID string, page store.Page) ([]store.Template, string, error) {
	return listPage(ctx, "list templates", dialect.Template, page, func(ctx context.Context, k keyset) ([]litedb.Template, error) {
		return q.rq.ListTemplates(ctx, litedb.ListTemplatesParams{WorkspaceID: workspaceID, AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch})
	}, toTemplate, func(t store.Template) (time.Time, string) { return t.CreatedAt, t.ID })
}

// DeleteTemplate deletes the template with id.
func (q *queries) DeleteTemplate(ctx context.Context, id string) error {
	n, err := q.wq.DeleteTemplate(ctx, id)
	return deleted(dialect.Template, n, err)
}
