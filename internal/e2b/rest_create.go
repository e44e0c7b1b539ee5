package e2b

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/store"
)

// BaseTemplate is E2B's default template: the server's default image.
const BaseTemplate = "base"

// Timeouts, in seconds. E2B's v2 create defaults to 300 s and its v1 to
// 15 s; its longest is 24 hours (Pro). A timeout is the runtime's idle
// timeout too, within paddock's bounds: at least minIdleTimeout, at
// most the installation's maximum keepalive, which also caps it.
const (
	defaultTimeoutV1 = 15
	defaultTimeoutV2 = 300
	maxTimeout       = 24 * 60 * 60
	minIdleTimeout   = 10
)

// Bounds of a sandbox's metadata.
const (
	maxMetadataKeys  = 64
	maxMetadataBytes = 16 << 10
)

// newSandbox is E2B's NewSandbox and NewSandboxV2: what the SDK sends to
// create a sandbox. The fields paddock does not read (iam tokens,
// autoPauseMemory, autoResume) are ignored; those it cannot honour
// (volumeMounts, mcp) are refused.
type newSandbox struct {
	TemplateID          string            `json:"templateID"`
	Timeout             *int64            `json:"timeout"`
	Metadata            map[string]string `json:"metadata"`
	EnvVars             map[string]string `json:"envVars"`
	Secure              *bool             `json:"secure"`
	AutoPause           *bool             `json:"autoPause"`
	AllowInternetAccess *bool             `json:"allow_internet_access"`
	Network             *networkConfig    `json:"network"`
	VolumeMounts        []json.RawMessage `json:"volumeMounts"`
	MCP                 json.RawMessage   `json:"mcp"`
}

// networkConfig is the part of E2B's SandboxNetworkConfig paddock maps:
// allow and deny rules, which its egress proxy applies.
type networkConfig struct {
	AllowOut []string `json:"allowOut"`
	DenyOut  []string `json:"denyOut"`
}

// sandboxOut is E2B's Sandbox: the answer to create and connect.
type sandboxOut struct {
	TemplateID      string  `json:"templateID"`
	SandboxID       string  `json:"sandboxID"`
	ClientID        string  `json:"clientID"`
	EnvdVersion     string  `json:"envdVersion"`
	EnvdAccessToken string  `json:"envdAccessToken,omitempty"`
	Domain          *string `json:"domain"`
}

func (g *Gateway) createV1(c *call) error { return g.create(c, defaultTimeoutV1) }
func (g *Gateway) createV2(c *call) error { return g.create(c, defaultTimeoutV2) }

// create makes a sandbox: a project e2b-<random> with its runtime in the
// key's workspace, the E2B record beside it, started, its expiry timeout
// from now. A start that fails removes what was made.
func (g *Gateway) create(c *call, defaultTimeout int64) error {
	var req newSandbox
	if err := decodeBody(c.r, &req); err != nil {
		return err
	}
	timeout, err := timeoutOf(req.Timeout, defaultTimeout)
	if err != nil {
		return err
	}
	cfg, err := g.configOf(req, timeout)
	if err != nil {
		return err
	}
	ctx := c.ctx()
	p, rt, err := g.makeProject(ctx, c.sc.Workspace, req, cfg)
	if err != nil {
		return err
	}
	template := req.TemplateID
	if template == "" {
		template = BaseTemplate
	}
	rec := store.E2BSandbox{RuntimeID: rt.ID, WorkspaceID: rt.WorkspaceID, TemplateID: template, Metadata: req.Metadata}
	if err := g.o.Store.CreateE2BSandbox(ctx, rec); err != nil {
		return g.undo(ctx, p, err)
	}
	if rt, err = g.o.Runtimes.Start(ctx, rt.ID, nil); err != nil {
		return g.undo(ctx, p, err)
	}
	if rt, err = g.o.Runtimes.SetTimeout(ctx, rt.ID, time.Duration(timeout)*time.Second); err != nil {
		return g.undo(ctx, p, err)
	}
	writeJSON(c.w, http.StatusCreated, g.sandboxOut(c, rt, rec))
	return nil
}

// makeProject creates the sandbox's project and runtime, with cfg. A
// network left to E2B's default (open) that the provider does not offer
// is the installation's default instead; one asked for is refused.
func (g *Gateway) makeProject(ctx context.Context, ws store.Workspace, req newSandbox, cfg runtime.ConfigRequest) (store.Project, store.Runtime, error) {
	const description = "made through the E2B-compatible API"
	p, rt, err := g.o.Runtimes.CreateProject(ctx, ws, projectName(), description, cfg)
	pe, ok := errdefs.Public(err)
	if ok && pe.Code == runtime.CodeNetworkNotSupported && req.AllowInternetAccess == nil && cfg.Network.Mode == string(provider.NetworkOpen) {
		cfg.Network = store.NetworkConfig{}
		p, rt, err = g.o.Runtimes.CreateProject(ctx, ws, projectName(), description, cfg)
	}
	return p, rt, err
}

// undo deletes the project a create made, and returns the create's
// error.
func (g *Gateway) undo(ctx context.Context, p store.Project, cause error) error {
	if err := g.o.Runtimes.DeleteProject(context.WithoutCancel(ctx), p); err != nil {
		g.o.Logger.ErrorContext(ctx, "removing a sandbox whose create failed", "project", p.ID, "err", err)
	}
	return cause
}

// projectName is a new sandbox's project name: e2b- and 12 random hex
// digits.
func projectName() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "e2b-" + hex.EncodeToString(b)
}

// timeoutOf is a requested timeout in seconds, or def.
func timeoutOf(t *int64, def int64) (int64, error) {
	if t == nil {
		return def, nil
	}
	if *t <= 0 || *t > maxTimeout {
		return 0, errdefs.InvalidArgument("invalid_timeout", "timeout must be between 1 and %d seconds", maxTimeout)
	}
	return *t, nil
}

// idleTimeout is the runtime's idle timeout for an E2B timeout: within
// paddock's bounds.
func (g *Gateway) idleTimeout(timeout int64) int64 {
	maxKeep := int64(g.o.Runtimes.Defaults().MaxKeepalive / time.Second)
	return max(minIdleTimeout, min(timeout, maxKeep))
}

// configOf is the runtime configuration req asks for: the template's
// image, a writable root, the environment, the network, the timeout as
// idle timeout.
func (g *Gateway) configOf(req newSandbox, timeout int64) (runtime.ConfigRequest, error) {
	switch {
	case len(req.VolumeMounts) > 0:
		return runtime.ConfigRequest{}, errdefs.InvalidArgument("volumes_not_supported", "paddock does not mount E2B volumes; every sandbox has its own /workspace")
	case len(req.MCP) > 0 && string(req.MCP) != "null":
		return runtime.ConfigRequest{}, errdefs.InvalidArgument("mcp_not_supported", "paddock does not run an MCP gateway in E2B sandboxes")
	}
	if err := checkMetadata(req.Metadata); err != nil {
		return runtime.ConfigRequest{}, err
	}
	cfg := runtime.ConfigRequest{
		RootFS:             store.RootFSWritable,
		User:               store.UserDefault,
		Env:                req.EnvVars,
		IdleTimeoutSeconds: g.idleTimeout(timeout),
		Network:            networkOf(req),
	}
	if req.TemplateID != BaseTemplate {
		cfg.Image = req.TemplateID
	}
	return cfg, nil
}

// networkOf maps E2B's network settings to paddock's egress: no internet
// is network none, rules are the egress proxy's, and otherwise (E2B's
// default) the network is open (where the provider offers it:
// makeProject).
func networkOf(req newSandbox) store.NetworkConfig {
	switch {
	case req.AllowInternetAccess != nil && !*req.AllowInternetAccess:
		return store.NetworkConfig{Mode: string(provider.NetworkNone)}
	case req.Network != nil && len(req.Network.AllowOut)+len(req.Network.DenyOut) > 0:
		return store.NetworkConfig{Mode: string(provider.NetworkProxy), Allow: req.Network.AllowOut, Deny: req.Network.DenyOut}
	}
	return store.NetworkConfig{Mode: string(provider.NetworkOpen)}
}

// checkMetadata refuses metadata beyond its bounds.
func checkMetadata(md map[string]string) error {
	if len(md) > maxMetadataKeys {
		return errdefs.InvalidArgument("invalid_metadata", "at most %d metadata keys", maxMetadataKeys)
	}
	size := 0
	for k, v := range md {
		if k == "" {
			return errdefs.InvalidArgument("invalid_metadata", "a metadata key must not be empty")
		}
		size += len(k) + len(v)
	}
	if size > maxMetadataBytes {
		return errdefs.InvalidArgument("invalid_metadata", "metadata is larger than %d bytes", maxMetadataBytes)
	}
	return nil
}
