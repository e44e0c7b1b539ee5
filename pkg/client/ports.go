package client

import (
	"context"
	"net/http"
	"strconv"
)

// ListPorts lists a runtime's ports: those something listens on in its
// sandbox (when it is running) and those marked public, with their URLs.
func (c *Client) ListPorts(ctx context.Context, org, ws, runtimeID string) (List[Port], error) {
	return call[List[Port]](ctx, c, http.MethodGet, runtimeRoute(org, ws, runtimeID, "previews"), nil, nil)
}

// SetPortPublic marks a runtime's port public (its URLs need no key or
// token) or private.
func (c *Client) SetPortPublic(ctx context.Context, org, ws, runtimeID string, port int, public bool) (Port, error) {
	return call[Port](ctx, c, http.MethodPatch, runtimeRoute(org, ws, runtimeID, "previews", strconv.Itoa(port)), nil, SetPortRequest{Public: public})
}

// PreviewToken signs an expiring token for one port of a runtime and
// returns it with the preview URL that carries it.
func (c *Client) PreviewToken(ctx context.Context, org, ws, runtimeID string, port int, req PreviewTokenRequest) (PreviewToken, error) {
	return call[PreviewToken](ctx, c, http.MethodPost, runtimeRoute(org, ws, runtimeID, "previews", strconv.Itoa(port), "token"), nil, req)
}
