package sqlite

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/sqlite/litedb"
)

// Orgs, workspaces and projects: the tenancy tree.

func orgFromRow(r litedb.Org) store.Org {
	return store.Org{ID: r.ID, Name: r.Name, CreatedAt: fromMicro(r.CreatedAt)}
}

func orgKey(o store.Org) (time.Time, string) { return o.CreatedAt, o.ID }

// CreateOrg inserts o. Its name is unique.
func (q *queries) CreateOrg(ctx context.Context, o store.Org) error {
	if err := required(resOrg, "id", o.ID, "name", o.Name); err != nil {
		return err
	}
	err := q.wq.CreateOrg(ctx, litedb.CreateOrgParams{ID: o.ID, Name: o.Name, CreatedAt: micros(orNow(o.CreatedAt))})
	return classify("create org", resOrg, err)
}

// GetOrg returns the org with id.
func (q *queries) GetOrg(ctx context.Context, id string) (store.Org, error) {
	r, err := q.rq.GetOrg(ctx, id)
	if err != nil {
		return store.Org{}, classify("get org", resOrg, err)
	}
	return orgFromRow(r), nil
}

// GetOrgByName returns the org named name.
func (q *queries) GetOrgByName(ctx context.Context, name string) (store.Org, error) {
	r, err := q.rq.GetOrgByName(ctx, name)
	if err != nil {
		return store.Org{}, classify("get org by name", resOrg, err)
	}
	return orgFromRow(r), nil
}

// ListOrgs lists orgs in creation order.
func (q *queries) ListOrgs(ctx context.Context, page store.Page) ([]store.Org, string, error) {
	return listPage(ctx, "list orgs", resOrg, page, func(ctx context.Context, k keyset) ([]litedb.Org, error) {
		return q.rq.ListOrgs(ctx, litedb.ListOrgsParams{AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch})
	}, total(orgFromRow), orgKey)
}

func workspaceFromRow(r litedb.Workspace) store.Workspace {
	return store.Workspace{ID: r.ID, OrgID: r.OrgID, Name: r.Name, CreatedAt: fromMicro(r.CreatedAt)}
}

func workspaceKey(w store.Workspace) (time.Time, string) { return w.CreatedAt, w.ID }

// CreateWorkspace inserts w. Its name is unique within its org.
func (q *queries) CreateWorkspace(ctx context.Context, w store.Workspace) error {
	if err := required(resWorkspace, "id", w.ID, "org id", w.OrgID, "name", w.Name); err != nil {
		return err
	}
	err := q.wq.CreateWorkspace(ctx, litedb.CreateWorkspaceParams{
		ID: w.ID, OrgID: w.OrgID, Name: w.Name, CreatedAt: micros(orNow(w.CreatedAt)),
	})
	return classify("create workspace", resWorkspace, err)
}

// GetWorkspace returns the workspace with id.
func (q *queries) GetWorkspace(ctx context.Context, id string) (store.Workspace, error) {
	r, err := q.rq.GetWorkspace(ctx, id)
	if err != nil {
		return store.Workspace{}, classify("get workspace", resWorkspace, err)
	}
	return workspaceFromRow(r), nil
}

// GetWorkspaceByName returns the workspace of orgID named name.
func (q *queries) GetWorkspaceByName(ctx context.Context, orgID, name string) (store.Workspace, error) {
	r, err := q.rq.GetWorkspaceByName(ctx, litedb.GetWorkspaceByNameParams{OrgID: orgID, Name: name})
	if err != nil {
		return store.Workspace{}, classify("get workspace by name", resWorkspace, err)
	}
	return workspaceFromRow(r), nil
}

// ListWorkspaces lists the workspaces of orgID in creation order.
func (q *queries) ListWorkspaces(ctx context.Context, orgID string, page store.Page) ([]store.Workspace, string, error) {
	return listPage(ctx, "list workspaces", resWorkspace, page, func(ctx context.Context, k keyset) ([]litedb.Workspace, error) {
		return q.rq.ListWorkspaces(ctx, litedb.ListWorkspacesParams{OrgID: orgID, AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch})
	}, total(workspaceFromRow), workspaceKey)
}

func projectFromRow(r litedb.Project) store.Project {
	return store.Project{
		ID: r.ID, OrgID: r.OrgID, WorkspaceID: r.WorkspaceID,
		Name: r.Name, Description: r.Description, CreatedAt: fromMicro(r.CreatedAt),
	}
}

func projectKey(p store.Project) (time.Time, string) { return p.CreatedAt, p.ID }

// CreateProject inserts p. Its name is unique within its workspace.
func (q *queries) CreateProject(ctx context.Context, p store.Project) error {
	if err := required(resProject, "id", p.ID, "org id", p.OrgID, "workspace id", p.WorkspaceID, "name", p.Name); err != nil {
		return err
	}
	err := q.wq.CreateProject(ctx, litedb.CreateProjectParams{
		ID: p.ID, OrgID: p.OrgID, WorkspaceID: p.WorkspaceID,
		Name: p.Name, Description: p.Description, CreatedAt: micros(orNow(p.CreatedAt)),
	})
	return classify("create project", resProject, err)
}

// GetProject returns the project with id.
func (q *queries) GetProject(ctx context.Context, id string) (store.Project, error) {
	r, err := q.rq.GetProject(ctx, id)
	if err != nil {
		return store.Project{}, classify("get project", resProject, err)
	}
	return projectFromRow(r), nil
}

// GetProjectByName returns the project of workspaceID named name.
func (q *queries) GetProjectByName(ctx context.Context, workspaceID, name string) (store.Project, error) {
	r, err := q.rq.GetProjectByName(ctx, litedb.GetProjectByNameParams{WorkspaceID: workspaceID, Name: name})
	if err != nil {
		return store.Project{}, classify("get project by name", resProject, err)
	}
	return projectFromRow(r), nil
}

// ListProjects lists the projects of workspaceID in creation order.
func (q *queries) ListProjects(ctx context.Context, workspaceID string, page store.Page) ([]store.Project, string, error) {
	return listPage(ctx, "list projects", resProject, page, func(ctx context.Context, k keyset) ([]litedb.Project, error) {
		return q.rq.ListProjects(ctx, litedb.ListProjectsParams{WorkspaceID: workspaceID, AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch})
	}, total(projectFromRow), projectKey)
}

// DeleteProject deletes the project with id. A project whose runtime still
// exists is errdefs.ErrFailedPrecondition.
func (q *queries) DeleteProject(ctx context.Context, id string) error {
	n, err := q.wq.DeleteProject(ctx, id)
	return deleted(resProject, n, err)
}

// deleted reports the outcome of deleting one row of res by id: n rows
// gone, or err. A row others still reference is errdefs.ErrFailedPrecondition
// (code <res>_in_use); no such row is errdefs.ErrNotFound.
func deleted(res resource, n int64, err error) error {
	if err != nil {
		return dialect.InUse(res, classify("delete "+string(res), res, err))
	}
	if n == 0 {
		return notFound(res, nil)
	}
	return nil
}
