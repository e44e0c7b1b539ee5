package e2b

import (
	"context"
	"math"
	"net/http"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/runtime"
	"github.com/paddockhq/paddock/internal/shim"
	"github.com/paddockhq/paddock/internal/store"
)

// E2B's sandbox states. A runtime running or starting is running; paused,
// archived, idle (its sandbox released) or in error is paused: it has no
// running compute, and connect brings it back (or says why not).
const (
	stateRunning = "running"
	statePaused  = "paused"
)

// stateOf is rt's E2B state.
func stateOf(rt store.Runtime) string {
	switch rt.Status {
	case store.RuntimeRunning, store.RuntimeStarting:
		return stateRunning
	}
	return statePaused
}

// sandboxOf is the E2B sandbox {id} of the call's workspace: its runtime
// and its record. Anything else (another workspace's runtime, a runtime
// not made through this API, an id that is no UUID) is not found.
func (g *Gateway) sandboxOf(c *call) (store.Runtime, store.E2BSandbox, error) {
	id := c.r.PathValue("id")
	notFound := errdefs.NotFound("sandbox_not_found", "sandbox %q not found", id)
	if !store.IsID(id) {
		return store.Runtime{}, store.E2BSandbox{}, notFound
	}
	rt, err := g.o.Path.InWorkspace(c.ctx(), c.sc.Workspace.ID, id)
	if errdefs.IsNotFound(err) {
		return store.Runtime{}, store.E2BSandbox{}, notFound
	}
	if err != nil {
		return store.Runtime{}, store.E2BSandbox{}, err
	}
	rec, err := g.o.Store.GetE2BSandbox(c.ctx(), rt.ID)
	if errdefs.IsNotFound(err) {
		return store.Runtime{}, store.E2BSandbox{}, notFound
	}
	return rt, rec, err
}

// sandboxDetail is E2B's SandboxDetail (and, without the token,
// ListedSandbox).
type sandboxDetail struct {
	TemplateID          string            `json:"templateID"`
	Alias               string            `json:"alias,omitempty"`
	SandboxID           string            `json:"sandboxID"`
	ClientID            string            `json:"clientID"`
	StartedAt           time.Time         `json:"startedAt"`
	EndAt               time.Time         `json:"endAt"`
	State               string            `json:"state"`
	CPUCount            int64             `json:"cpuCount"`
	MemoryMB            int64             `json:"memoryMB"`
	DiskSizeMB          int64             `json:"diskSizeMB"`
	Metadata            map[string]string `json:"metadata"`
	EnvdVersion         string            `json:"envdVersion"`
	EnvdAccessToken     string            `json:"envdAccessToken,omitempty"`
	Domain              *string           `json:"domain,omitempty"`
	AllowInternetAccess *bool             `json:"allowInternetAccess,omitempty"`
	Lifecycle           *lifecycle        `json:"lifecycle,omitempty"`
}

// lifecycle is E2B's SandboxLifecycle: paddock pauses a sandbox that
// times out; envd does not wake a paused one (connect does), as E2B's
// without autoResume.
type lifecycle struct {
	OnTimeout  string `json:"onTimeout"`
	AutoResume bool   `json:"autoResume"`
}

// detail renders an E2B sandbox: its times are those of its current
// sandbox (started, expires), else of its record.
func (g *Gateway) detail(ctx context.Context, rt store.Runtime, rec store.E2BSandbox) (sandboxDetail, error) {
	d := sandboxDetail{
		TemplateID: rec.TemplateID, SandboxID: rt.ID, ClientID: ClientID,
		StartedAt: rec.CreatedAt, EndAt: rec.CreatedAt, State: stateOf(rt),
		CPUCount: int64(math.Ceil(float64(rt.Config.CPUMillis) / 1000)),
		MemoryMB: rt.Config.MemoryMB, DiskSizeMB: rt.Config.DiskMB,
		Metadata: rec.Metadata, EnvdVersion: shim.EnvdVersion,
	}
	if d.Metadata == nil {
		d.Metadata = map[string]string{}
	}
	sb, err := g.o.Runtimes.CurrentSandbox(ctx, rt)
	if err != nil {
		return d, err
	}
	if sb != nil {
		d.StartedAt = sb.CreatedAt
		if !sb.ExpiresAt.IsZero() {
			d.EndAt = sb.ExpiresAt
		}
	}
	return d, nil
}

func (g *Gateway) get(c *call) error {
	rt, rec, err := g.sandboxOf(c)
	if err != nil {
		return err
	}
	d, err := g.detail(c.ctx(), rt, rec)
	if err != nil {
		return err
	}
	d.EnvdAccessToken, _ = g.o.IAM.IssueEnvdToken(c.p, rt)
	d.Domain = g.domain()
	internet := rt.Config.Network.Mode != "none"
	d.AllowInternetAccess = &internet
	d.Lifecycle = &lifecycle{OnTimeout: "pause", AutoResume: false}
	writeJSON(c.w, http.StatusOK, d)
	return nil
}

// domain is the sandboxes' domain in the answers: the configured one, or
// null.
func (g *Gateway) domain() *string {
	if g.o.Domain == "" {
		return nil
	}
	d := g.o.Domain
	return &d
}

// sandboxOut is the answer to create and connect.
func (g *Gateway) sandboxOut(c *call, rt store.Runtime, rec store.E2BSandbox) sandboxOut {
	tok, _ := g.o.IAM.IssueEnvdToken(c.p, rt)
	return sandboxOut{TemplateID: rec.TemplateID, SandboxID: rt.ID, ClientID: ClientID,
		EnvdVersion: shim.EnvdVersion, EnvdAccessToken: tok, Domain: g.domain()}
}

// kill deletes the sandbox's project and runtime: its compute is
// released (the ledger keeps its row) and its record goes with it.
func (g *Gateway) kill(c *call) error {
	rt, _, err := g.sandboxOf(c)
	if err != nil {
		return err
	}
	p, err := g.o.Store.GetProject(c.ctx(), rt.ProjectID)
	if err != nil {
		return err
	}
	if err := g.o.Runtimes.DeleteProject(c.ctx(), p); err != nil {
		return err
	}
	c.w.WriteHeader(http.StatusNoContent)
	return nil
}

// pause pauses a running sandbox; one already paused is 409, as E2B
// answers.
func (g *Gateway) pause(c *call) error {
	rt, _, err := g.sandboxOf(c)
	if err != nil {
		return err
	}
	if stateOf(rt) != stateRunning {
		return errdefs.Conflict("sandbox_already_paused", "sandbox %s is already paused", rt.ID)
	}
	if _, err := g.o.Runtimes.Pause(c.ctx(), rt.ID, store.PauseUser); err != nil {
		return err
	}
	c.w.WriteHeader(http.StatusNoContent)
	return nil
}

// timeoutRequest is E2B's SandboxTimeoutRequest, ResumedSandbox and
// ConnectSandbox: a timeout in seconds.
type timeoutRequest struct {
	Timeout *int64 `json:"timeout"`
}

// setTimeout sets the sandbox's expiry to now+timeout (and its idle
// timeout to timeout, so activity keeps it that long past its last use).
func (g *Gateway) setTimeout(c *call) error {
	var req timeoutRequest
	if err := decodeBody(c.r, &req); err != nil {
		return err
	}
	if req.Timeout == nil {
		return errdefs.InvalidArgument("invalid_timeout", "timeout is required")
	}
	timeout, err := timeoutOf(req.Timeout, 0)
	if err != nil {
		return err
	}
	rt, _, err := g.sandboxOf(c)
	if err != nil {
		return err
	}
	if _, err := g.applyTimeout(c.ctx(), rt, timeout); err != nil {
		return err
	}
	c.w.WriteHeader(http.StatusNoContent)
	return nil
}

// applyTimeout makes timeout rt's idle timeout and, when it runs, its
// expiry from now.
func (g *Gateway) applyTimeout(ctx context.Context, rt store.Runtime, timeout int64) (store.Runtime, error) {
	idle := g.idleTimeout(timeout)
	rt, _, err := g.o.Runtimes.Configure(ctx, rt.ID, runtime.Patch{IdleTimeoutSeconds: &idle})
	if err != nil || rt.Status != store.RuntimeRunning {
		return rt, err
	}
	return g.o.Runtimes.SetTimeout(ctx, rt.ID, time.Duration(timeout)*time.Second)
}

// extendTimeout is applyTimeout for a sandbox already running, as E2B's
// connect does it: the timeout only ever extends its window, and its
// idle timeout is never lowered.
func (g *Gateway) extendTimeout(ctx context.Context, rt store.Runtime, timeout int64) (store.Runtime, error) {
	if idle := g.idleTimeout(timeout); idle > rt.Config.IdleTimeoutSeconds {
		var err error
		if rt, _, err = g.o.Runtimes.Configure(ctx, rt.ID, runtime.Patch{IdleTimeoutSeconds: &idle}); err != nil {
			return rt, err
		}
	}
	if rt.Status != store.RuntimeRunning {
		return rt, nil
	}
	return g.o.Runtimes.Keepalive(ctx, rt.ID, time.Duration(timeout)*time.Second)
}

// refreshRequest is E2B's SandboxRefreshRequest.
type refreshRequest struct {
	Duration *int64 `json:"duration"`
}

// refresh keeps the sandbox alive for duration more (its idle timeout
// when none), never shortening its window: a keepalive.
func (g *Gateway) refresh(c *call) error {
	var req refreshRequest
	if err := decodeBody(c.r, &req); err != nil {
		return err
	}
	d := int64(0)
	if req.Duration != nil {
		var err error
		if d, err = timeoutOf(req.Duration, 0); err != nil {
			return err
		}
	}
	rt, _, err := g.sandboxOf(c)
	if err != nil {
		return err
	}
	if _, err := g.o.Runtimes.Keepalive(c.ctx(), rt.ID, time.Duration(d)*time.Second); err != nil {
		return err
	}
	c.w.WriteHeader(http.StatusNoContent)
	return nil
}
