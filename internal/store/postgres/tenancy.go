package postgres

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/postgres/pgdb"
)

// Orgs, workspaces and projects: the tenancy tree.

func orgFromRow(r pgdb.Org) store.Org {
	return store.Org{ID: r.ID, Name: r.Name, CreatedAt: r.CreatedAt.UTC()}
}

func orgKey(o store.Org) (time.Time, string) { return o.CreatedAt, o.ID }

// CreateOrg inserts o. Its name is unique.
func (q *queries) CreateOrg(ctx context.Context, o store.Org) error {
	if err := dialect.Required(dialect.Org, "id", o.ID, "name", o.Name); err != nil {
		return err
	}
	err := q.q.CreateOrg(ctx, pgdb.CreateOrgParams{ID: o.ID, Name: o.Name, CreatedAt: orNow(o.CreatedAt)})
	return classify("create org", dialect.Org, err)
}

// GetOrg returns the org with id.
func (q *queries) GetOrg(ctx context.Context, id string) (store.Org, error) {
	r, err := q.q.GetOrg(ctx, id)
	if err != nil {
		return store.Org{}, classify("get org", dialect.Org, err)
	}
	return orgFromRow(r), nil
}

// GetOrgByName returns the org named name.
func (q *queries) GetOrgByName(ctx context.Context, name string) (store.Org, error) {
	r, err := q.q.GetOrgByName(ctx, name)
	if err != nil {
		return store.Org{}, classify("get org by name", dialect.Org, err)
	}
	return orgFromRow(r), nil
}

// ListOrgs lists orgs in creation order.
func (q *queries) ListOrgs(ctx context.Context, page store.Page) ([]store.Org, string, error) {
	return listPage(ctx, "list orgs", dialect.Org, page, func(ctx context.Context, k keyset) ([]pgdb.Org, error) {
		return q.q.ListOrgs(ctx, pgdb.ListOrgsParams{AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch})
	}, orgFromRow, orgKey)
}

func workspaceFromRow(r pgdb.Workspace) store.Workspace {
	return store.Workspace{ID: r.ID, OrgID: r.OrgID, Name: r.Name, CreatedAt: r.CreatedAt.UTC()}
}

func workspaceKey(w store.Workspace) (time.Time, string) { return w.CreatedAt, w.ID }

// CreateWorkspace inserts w. Its name is unique within its org.
func (q *queries) CreateWorkspace(ctx context.Context, w store.Workspace) error {
	if err := dialect.Required(dialect.Workspace, "id", w.ID, "org id", w.OrgID, "name", w.Name); err != nil {
		return err
	}
	err := q.q.CreateWorkspace(ctx, pgdb.CreateWorkspaceParams{
		ID: w.ID, OrgID: w.OrgID, Name: w.Name, CreatedAt: orNow(w.CreatedAt),
	})
	return classify("create workspace", dialect.Workspace, err)
}

// GetWorkspace returns the workspace with id.
func (q *queries) GetWorkspace(ctx context.Context, id string) (store.Workspace, error) {
	r, err := q.q.GetWorkspace(ctx, id)
	if err != nil {
		return store.Workspace{}, classify("get workspace", dialect.Workspace, err)
	}
	return workspaceFromRow(r), nil
}

// GetWorkspaceByName returns the workspace of orgID named name.
func (q *queries) GetWorkspaceByName(ctx context.Context, orgID, name string) (store.Workspace, error) {
	r, err := q.q.GetWorkspaceByName(ctx, pgdb.GetWorkspaceByNameParams{OrgID: orgID, Name: name})
	if err != nil {
		return store.Workspace{}, classify("get workspace by name", dialect.Workspace, err)
	}
	return workspaceFromRow(r), nil
}

// ListWorkspaces lists the workspaces of orgID in creation order.
func (q *queries) ListWorkspaces(ctx context.Context, orgID string, page store.Page) ([]store.Workspace, string, error) {
	return listPage(ctx, "list workspaces", dialect.Workspace, page, func(ctx context.Context, k keyset) ([]pgdb.Workspace, error) {
		return q.q.ListWorkspaces(ctx, pgdb.ListWorkspacesParams{OrgID: orgID, AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch})
	}, workspaceFromRow, workspaceKey)
}

func projectFromRow(r pgdb.Project) store.Project {
	return store.Project{
		ID: r.ID, OrgID: r.OrgID, WorkspaceID: r.WorkspaceID,
		Name: r.Name, Description: r.Description, CreatedAt: r.CreatedAt.UTC(),
	}
}

func projectKey(p store.Project) (time.Time, string) { return p.CreatedAt, p.ID }

// CreateProject inserts p. Its name is unique within its workspace.
func (q *queries) CreateProject(ctx context.Context, p store.Project) error {
	err := dialect.Required(dialect.Project, "id", p.ID, "org id", p.OrgID, "workspace id", p.WorkspaceID, "name", p.Name)
	if err != nil {
		return err
	}
	err = q.q.CreateProject(ctx, pgdb.CreateProjectParams{
		ID: p.ID, OrgID: p.OrgID, WorkspaceID: p.WorkspaceID,
		Name: p.Name, Description: p.Description, CreatedAt: orNow(p.CreatedAt),
	})
	return classify("create project", dialect.Project, err)
}

// GetProject returns the project with id.
func (q *queries) GetProject(ctx context.Context, id string) (store.Project, error) {
	r, err := q.q.GetProject(ctx, id)
	if err != nil {
		return store.Project{}, classify("get project", dialect.Project, err)
	}
	return projectFromRow(r), nil
}

// GetProjectByName returns the project of workspaceID named name.
func (q *queries) GetProjectByName(ctx context.Context, workspaceID, name string) (store.Project, error) {
	r, err := q.q.GetProjectByName(ctx, pgdb.GetProjectByNameParams{WorkspaceID: workspaceID, Name: name})
	if err != nil {
		return store.Project{}, classify("get project by name", dialect.Project, err)
	}
	return projectFromRow(r), nil
}

// ListProjects lists the projects of workspaceID in creation order.
func (q *queries) ListProjects(ctx context.Context, workspaceID string, page store.Page) ([]store.Project, string, error) {
	return listPage(ctx, "list projects", dialect.Project, page, func(ctx context.Context, k keyset) ([]pgdb.Project, error) {
		return q.q.ListProjects(ctx, pgdb.ListProjectsParams{WorkspaceID: workspaceID, AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch})
	}, projectFromRow, projectKey)
}

// DeleteProject deletes the project with id. A project whose runtime still
// exists is errdefs.ErrFailedPrecondition.
func (q *queries) DeleteProject(ctx context.Context, id string) error {
	n, err := q.q.DeleteProject(ctx, id)
	return deleted(dialect.Project, n, err)
}

// deleted reports the outcome of deleting one row of res by id: n rows
// gone, or err. A row others still reference is errdefs.ErrFailedPrecondition
// (code <res>_in_use); no such row is errdefs.ErrNotFound.
func deleted(res dialect.Resource, n int64, err error) error {
	if err != nil {
		return dialect.InUse(res, classify("delete "+string(res), res, err))
	}
	if n == 0 {
		return dialect.NotFound(res, nil)
	}
	return nil
}
