package sqlite

import (
	"context"
	"errors"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Orgs, workspaces and projects: the tenancy tree.

const orgColumns = "id, name, created_at"

func scanOrg(sc rowScanner) (store.Org, error) {
	var o store.Org
	var created int64
	if err := sc.Scan(&o.ID, &o.Name, &created); err != nil {
		return store.Org{}, err
	}
	o.CreatedAt = time.UnixMicro(created).UTC()
	return o, nil
}

// CreateOrg inserts o. Its name is unique.
func (q *queries) CreateOrg(ctx context.Context, o store.Org) error {
	if err := required(resOrg, "id", o.ID, "name", o.Name); err != nil {
		return err
	}
	_, err := q.w.ExecContext(ctx, "INSERT INTO orgs ("+orgColumns+") VALUES (?, ?, ?)",
		o.ID, o.Name, micros(orNow(o.CreatedAt)))
	return classify("create org", resOrg, err)
}

// GetOrg returns the org with id.
func (q *queries) GetOrg(ctx context.Context, id string) (store.Org, error) {
	o, err := scanOrg(q.r.QueryRowContext(ctx, "SELECT "+orgColumns+" FROM orgs WHERE id = ?", id))
	return o, classify("get org", resOrg, err)
}

// GetOrgByName returns the org named name.
func (q *queries) GetOrgByName(ctx context.Context, name string) (store.Org, error) {
	o, err := scanOrg(q.r.QueryRowContext(ctx, "SELECT "+orgColumns+" FROM orgs WHERE name = ?", name))
	return o, classify("get org by name", resOrg, err)
}

// ListOrgs lists orgs in creation order.
func (q *queries) ListOrgs(ctx context.Context, page store.Page) ([]store.Org, string, error) {
	return listing[store.Org]{
		op:   "list orgs",
		res:  resOrg,
		from: "SELECT " + orgColumns + " FROM orgs",
		scan: scanOrg,
		key:  func(o store.Org) (time.Time, string) { return o.CreatedAt, o.ID },
	}.run(ctx, q.r, page)
}

const workspaceColumns = "id, org_id, name, created_at"

func scanWorkspace(sc rowScanner) (store.Workspace, error) {
	var w store.Workspace
	var created int64
	if err := sc.Scan(&w.ID, &w.OrgID, &w.Name, &created); err != nil {
		return store.Workspace{}, err
	}
	w.CreatedAt = time.UnixMicro(created).UTC()
	return w, nil
}

// CreateWorkspace inserts w. Its name is unique within its org.
func (q *queries) CreateWorkspace(ctx context.Context, w store.Workspace) error {
	if err := required(resWorkspace, "id", w.ID, "org id", w.OrgID, "name", w.Name); err != nil {
		return err
	}
	_, err := q.w.ExecContext(ctx, "INSERT INTO workspaces ("+workspaceColumns+") VALUES (?, ?, ?, ?)",
		w.ID, w.OrgID, w.Name, micros(orNow(w.CreatedAt)))
	return classify("create workspace", resWorkspace, err)
}

// GetWorkspace returns the workspace with id.
func (q *queries) GetWorkspace(ctx context.Context, id string) (store.Workspace, error) {
	w, err := scanWorkspace(q.r.QueryRowContext(ctx,
		"SELECT "+workspaceColumns+" FROM workspaces WHERE id = ?", id))
	return w, classify("get workspace", resWorkspace, err)
}

// GetWorkspaceByName returns the workspace of orgID named name.
func (q *queries) GetWorkspaceByName(ctx context.Context, orgID, name string) (store.Workspace, error) {
	w, err := scanWorkspace(q.r.QueryRowContext(ctx,
		"SELECT "+workspaceColumns+" FROM workspaces WHERE org_id = ? AND name = ?", orgID, name))
	return w, classify("get workspace by name", resWorkspace, err)
}

// ListWorkspaces lists the workspaces of orgID in creation order.
func (q *queries) ListWorkspaces(ctx context.Context, orgID string, page store.Page) ([]store.Workspace, string, error) {
	return listing[store.Workspace]{
		op:    "list workspaces",
		res:   resWorkspace,
		from:  "SELECT " + workspaceColumns + " FROM workspaces",
		where: []string{"org_id = ?"},
		args:  []any{orgID},
		scan:  scanWorkspace,
		key:   func(w store.Workspace) (time.Time, string) { return w.CreatedAt, w.ID },
	}.run(ctx, q.r, page)
}

const projectColumns = "id, org_id, workspace_id, name, description, created_at"

func scanProject(sc rowScanner) (store.Project, error) {
	var p store.Project
	var created int64
	if err := sc.Scan(&p.ID, &p.OrgID, &p.WorkspaceID, &p.Name, &p.Description, &created); err != nil {
		return store.Project{}, err
	}
	p.CreatedAt = time.UnixMicro(created).UTC()
	return p, nil
}

// CreateProject inserts p. Its name is unique within its workspace.
func (q *queries) CreateProject(ctx context.Context, p store.Project) error {
	if err := required(resProject, "id", p.ID, "org id", p.OrgID, "workspace id", p.WorkspaceID, "name", p.Name); err != nil {
		return err
	}
	_, err := q.w.ExecContext(ctx, "INSERT INTO projects ("+projectColumns+") VALUES (?, ?, ?, ?, ?, ?)",
		p.ID, p.OrgID, p.WorkspaceID, p.Name, p.Description, micros(orNow(p.CreatedAt)))
	return classify("create project", resProject, err)
}

// GetProject returns the project with id.
func (q *queries) GetProject(ctx context.Context, id string) (store.Project, error) {
	p, err := scanProject(q.r.QueryRowContext(ctx,
		"SELECT "+projectColumns+" FROM projects WHERE id = ?", id))
	return p, classify("get project", resProject, err)
}

// GetProjectByName returns the project of workspaceID named name.
func (q *queries) GetProjectByName(ctx context.Context, workspaceID, name string) (store.Project, error) {
	p, err := scanProject(q.r.QueryRowContext(ctx,
		"SELECT "+projectColumns+" FROM projects WHERE workspace_id = ? AND name = ?", workspaceID, name))
	return p, classify("get project by name", resProject, err)
}

// ListProjects lists the projects of workspaceID in creation order.
func (q *queries) ListProjects(ctx context.Context, workspaceID string, page store.Page) ([]store.Project, string, error) {
	return listing[store.Project]{
		op:    "list projects",
		res:   resProject,
		from:  "SELECT " + projectColumns + " FROM projects",
		where: []string{"workspace_id = ?"},
		args:  []any{workspaceID},
		scan:  scanProject,
		key:   func(p store.Project) (time.Time, string) { return p.CreatedAt, p.ID },
	}.run(ctx, q.r, page)
}

// DeleteProject deletes the project with id. A project whose runtime still
// exists is errdefs.ErrFailedPrecondition.
func (q *queries) DeleteProject(ctx context.Context, id string) error {
	return q.deleteByID(ctx, "projects", resProject, id)
}

// deleteByID deletes one row of table by id; no such row is ErrNotFound.
func (q *queries) deleteByID(ctx context.Context, table string, res resource, id string) error {
	r, err := q.w.ExecContext(ctx, "DELETE FROM "+table+" WHERE id = ?", id)
	if err != nil {
		err = classify("delete "+string(res), res, err)
		if errors.Is(err, errdefs.ErrFailedPrecondition) {
			return errdefs.FailedPrecondition(string(res)+"_in_use",
				"the %s is still referenced by other records; delete them first", res).WithCause(err)
		}
		return err
	}
	n, err := r.RowsAffected()
	if err != nil {
		return classify("delete "+string(res), res, err)
	}
	if n == 0 {
		return notFound(res, nil)
	}
	return nil
}
