package client

import (
	"context"
	"net/http"
)

// CreateOrg creates an org; it needs an installation admin key.
func (c *Client) CreateOrg(ctx context.Context, req CreateOrgRequest) (Org, error) {
	return call[Org](ctx, c, http.MethodPost, routeOf("/api/v1/orgs"), nil, req)
}

// ListOrgs lists one page of the orgs the key may see.
func (c *Client) ListOrgs(ctx context.Context, opts ListOptions) (List[Org], error) {
	return call[List[Org]](ctx, c, http.MethodGet, routeOf("/api/v1/orgs"), opts.query(), nil)
}

// GetOrg returns the org named org.
func (c *Client) GetOrg(ctx context.Context, org string) (Org, error) {
	return call[Org](ctx, c, http.MethodGet, orgRoute(org), nil, nil)
}

// CreateWorkspace creates a workspace in org.
func (c *Client) CreateWorkspace(ctx context.Context, org string, req CreateWorkspaceRequest) (Workspace, error) {
	return call[Workspace](ctx, c, http.MethodPost, orgRoute(org, "ws"), nil, req)
}

// ListWorkspaces lists one page of org's workspaces.
func (c *Client) ListWorkspaces(ctx context.Context, org string, opts ListOptions) (List[Workspace], error) {
	return call[List[Workspace]](ctx, c, http.MethodGet, orgRoute(org, "ws"), opts.query(), nil)
}

// GetWorkspace returns the workspace named ws in org.
func (c *Client) GetWorkspace(ctx context.Context, org, ws string) (Workspace, error) {
	return call[Workspace](ctx, c, http.MethodGet, wsRoute(org, ws), nil, nil)
}
