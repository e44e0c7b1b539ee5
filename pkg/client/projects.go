package client

import (
	"context"
	"net/http"
)

// CreateProject creates a project in org/ws, and with it the project's
// runtime (Project.RuntimeID).
func (c *Client) CreateProject(ctx context.Context, org, ws string, req CreateProjectRequest) (Project, error) {
	return call[Project](ctx, c, http.MethodPost, wsRoute(org, ws, "projects"), nil, req)
}

// ListProjects lists one page of the projects in org/ws.
func (c *Client) ListProjects(ctx context.Context, org, ws string, opts ListOptions) (List[Project], error) {
	return call[List[Project]](ctx, c, http.MethodGet, wsRoute(org, ws, "projects"), opts.query(), nil)
}

// GetProject returns a project of org/ws by name or id.
func (c *Client) GetProject(ctx context.Context, org, ws, project string) (Project, error) {
	return call[Project](ctx, c, http.MethodGet, wsRoute(org, ws, "projects", project), nil, nil)
}

// DeleteProject deletes a project of org/ws, given by name or id, after
// resetting its runtime.
func (c *Client) DeleteProject(ctx context.Context, org, ws, project string) error {
	return c.callDiscard(ctx, http.MethodDelete, wsRoute(org, ws, "projects", project), nil, nil)
}
