package client

import (
	"context"
	"net/http"
)

// AddHost registers a machine for org: reached over SSH with a Docker
// engine, it becomes a provider only org's runtimes use, by its name.
func (c *Client) AddHost(ctx context.Context, org string, req AddHostRequest) (Host, error) {
	return call[Host](ctx, c, http.MethodPost, orgRoute(org, "hosts"), nil, req)
}

// ListHosts lists one page of org's machines.
func (c *Client) ListHosts(ctx context.Context, org string, opts ListOptions) (List[Host], error) {
	return call[List[Host]](ctx, c, http.MethodGet, orgRoute(org, "hosts"), opts.query(), nil)
}

// GetHost returns org's machine called name.
func (c *Client) GetHost(ctx context.Context, org, name string) (Host, error) {
	return call[Host](ctx, c, http.MethodGet, orgRoute(org, "hosts", name), nil, nil)
}

// RemoveHost removes org's machine called name.
func (c *Client) RemoveHost(ctx context.Context, org, name string) error {
	return c.callDiscard(ctx, http.MethodDelete, orgRoute(org, "hosts", name), nil, nil)
}
