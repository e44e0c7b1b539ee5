package client

import (
	"context"
	"net/http"
)

// secretsRoute is the route of org's secrets (ws "") or workspace ws's,
// then rest.
func secretsRoute(org, ws string, rest ...string) route {
	if ws == "" {
		return orgRoute(org, append([]string{"secrets"}, rest...)...)
	}
	return wsRoute(org, ws, append([]string{"secrets"}, rest...)...)
}

// CreateSecret makes a secret of org (ws "") or of its workspace ws.
func (c *Client) CreateSecret(ctx context.Context, org, ws string, req CreateSecretRequest) (Secret, error) {
	return call[Secret](ctx, c, http.MethodPost, secretsRoute(org, ws), nil, req)
}

// ListSecrets lists one page of org's own secrets (ws "") or workspace
// ws's: names and metadata, never values.
func (c *Client) ListSecrets(ctx context.Context, org, ws string, opts ListOptions) (List[Secret], error) {
	return call[List[Secret]](ctx, c, http.MethodGet, secretsRoute(org, ws), opts.query(), nil)
}

// GetSecret returns a secret's metadata, by id or name.
func (c *Client) GetSecret(ctx context.Context, org, ws, secret string) (Secret, error) {
	return call[Secret](ctx, c, http.MethodGet, secretsRoute(org, ws, secret), nil, nil)
}

// ReplaceSecret changes a secret's value, variable, brokering or hosts.
func (c *Client) ReplaceSecret(ctx context.Context, org, ws, secret string, req ReplaceSecretRequest) (Secret, error) {
	return call[Secret](ctx, c, http.MethodPut, secretsRoute(org, ws, secret), nil, req)
}

// DeleteSecret deletes a secret. Sandboxes started with it keep it until
// they stop.
func (c *Client) DeleteSecret(ctx context.Context, org, ws, secret string) error {
	return c.callDiscard(ctx, http.MethodDelete, secretsRoute(org, ws, secret), nil, nil)
}
