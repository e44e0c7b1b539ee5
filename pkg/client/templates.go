package client

import (
	"context"
	"net/http"
)

// CreateTemplate creates a template in org/ws: a runtime config projects
// start from (CreateProjectRequest.Template).
func (c *Client) CreateTemplate(ctx context.Context, org, ws string, req CreateTemplateRequest) (Template, error) {
	return call[Template](ctx, c, http.MethodPost, wsRoute(org, ws, "templates"), nil, req)
}

// ListTemplates lists one page of the templates in org/ws.
func (c *Client) ListTemplates(ctx context.Context, org, ws string, opts ListOptions) (List[Template], error) {
	return call[List[Template]](ctx, c, http.MethodGet, wsRoute(org, ws, "templates"), opts.query(), nil)
}

// GetTemplate returns a template of org/ws by name or id.
func (c *Client) GetTemplate(ctx context.Context, org, ws, template string) (Template, error) {
	return call[Template](ctx, c, http.MethodGet, wsRoute(org, ws, "templates", template), nil, nil)
}

// DeleteTemplate deletes a template of org/ws, given by name or id; the
// projects made from it keep their runtime config.
func (c *Client) DeleteTemplate(ctx context.Context, org, ws, template string) error {
	return c.callDiscard(ctx, http.MethodDelete, wsRoute(org, ws, "templates", template), nil, nil)
}
