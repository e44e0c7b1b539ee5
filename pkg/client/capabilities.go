package client

import (
	"context"
	"io"
	"net/http"
	"net/url"
)

// MaxCapabilityBundle is the largest bundle PushCapability may send: the
// server answers a larger one 413 body_too_large.
const MaxCapabilityBundle = 16 << 20

// Catalog lists the capabilities built into paddock, every version of
// each.
func (c *Client) Catalog(ctx context.Context) ([]CapabilityVersion, error) {
	l, err := call[List[CapabilityVersion]](ctx, c, http.MethodGet, routeOf("/api/v1/catalog"), nil, nil)
	return l.Items, err
}

// ListInventory lists the capability versions uploaded to org: every
// one, or those of name when it is not empty.
func (c *Client) ListInventory(ctx context.Context, org, name string) ([]CapabilityVersion, error) {
	var q url.Values
	if name != "" {
		q = url.Values{"name": {name}}
	}
	l, err := call[List[CapabilityVersion]](ctx, c, http.MethodGet, orgRoute(org, "capabilities"), q, nil)
	return l.Items, err
}

// PushCapability uploads a capability bundle, a tar.gz of its directory,
// to org's inventory. Pushing the very bundle a version already holds
// returns that version; the same name and version with other contents is
// code "capability_version_exists", and a bundle the server refuses is
// code "invalid_capability", its message listing every problem.
func (c *Client) PushCapability(ctx context.Context, org string, tarGz io.Reader) (CapabilityVersion, error) {
	return sendFor[CapabilityVersion](ctx, c, http.MethodPost, orgRoute(org, "capabilities"), nil, tarGz, "application/gzip")
}

// DeleteCapabilityVersion deletes a version from org's inventory. A
// version a binding pins is code "capability_in_use".
func (c *Client) DeleteCapabilityVersion(ctx context.Context, org, name, version string) error {
	return c.callDiscard(ctx, http.MethodDelete, orgRoute(org, "capabilities", name, version), nil, nil)
}

// ListBindings lists the capabilities installed on a runtime, in install
// order.
func (c *Client) ListBindings(ctx context.Context, org, ws, runtimeID string) ([]CapabilityBinding, error) {
	l, err := call[List[CapabilityBinding]](ctx, c, http.MethodGet, runtimeRoute(org, ws, runtimeID, "capabilities"), nil, nil)
	return l.Items, err
}

// InstallCapability binds a capability version to a runtime; its next
// sandbox gets it (a running one at once). A name the runtime already has
// is code "capability_already_installed"; one that would ship what another
// enabled binding ships is "capability_conflict".
func (c *Client) InstallCapability(ctx context.Context, org, ws, runtimeID string, req InstallCapabilityRequest) (CapabilityBinding, error) {
	return call[CapabilityBinding](ctx, c, http.MethodPost, runtimeRoute(org, ws, runtimeID, "capabilities"), nil, req)
}

// ResolvedCapabilities returns the merged set of the runtime's enabled
// bindings, with the names two of them both ship.
func (c *Client) ResolvedCapabilities(ctx context.Context, org, ws, runtimeID string) (ResolvedCapabilities, error) {
	return call[ResolvedCapabilities](ctx, c, http.MethodGet, runtimeRoute(org, ws, runtimeID, "capabilities", "resolved"), nil, nil)
}

// UpdateBinding enables or disables a binding, replaces its config or
// moves its version pin.
func (c *Client) UpdateBinding(ctx context.Context, org, ws, runtimeID, bindingID string, req UpdateBindingRequest) (CapabilityBinding, error) {
	return call[CapabilityBinding](ctx, c, http.MethodPatch, runtimeRoute(org, ws, runtimeID, "capabilities", bindingID), nil, req)
}

// UninstallCapability removes a binding from a runtime.
func (c *Client) UninstallCapability(ctx context.Context, org, ws, runtimeID, bindingID string) error {
	return c.callDiscard(ctx, http.MethodDelete, runtimeRoute(org, ws, runtimeID, "capabilities", bindingID), nil, nil)
}
