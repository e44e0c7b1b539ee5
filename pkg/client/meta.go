package client

import (
	"context"
	"net/http"
)

// Health answers GET /health; it needs no API key.
func (c *Client) Health(ctx context.Context) (Health, error) {
	return call[Health](ctx, c, http.MethodGet, routeOf("/health"), nil, nil)
}

// Capabilities answers what this installation offers: its providers and
// their capability matrix.
func (c *Client) Capabilities(ctx context.Context) (Capabilities, error) {
	return call[Capabilities](ctx, c, http.MethodGet, routeOf("/api/capabilities"), nil, nil)
}
