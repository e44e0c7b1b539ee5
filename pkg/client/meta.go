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

// Images lists the sandbox images and how far the builds of those still
// being built are.
func (c *Client) Images(ctx context.Context) (List[ImageStatus], error) {
	return call[List[ImageStatus]](ctx, c, http.MethodGet, routeOf("/api/images"), nil, nil)
}
