package api

import (
	"time"

	"github.com/paddockhq/paddock/internal/ledger"
	"github.com/paddockhq/paddock/internal/sidecar"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

func orgOut(o store.Org) client.Org {
	return client.Org{ID: o.ID, Name: o.Name, CreatedAt: o.CreatedAt}
}

func workspaceOut(w store.Workspace) client.Workspace {
	return client.Workspace{ID: w.ID, OrgID: w.OrgID, Name: w.Name, CreatedAt: w.CreatedAt}
}

func projectOut(p store.Project, runtimeID string) client.Project {
	return client.Project{
		ID: p.ID, OrgID: p.OrgID, WorkspaceID: p.WorkspaceID, Name: p.Name,
		Description: p.Description, RuntimeID: runtimeID, CreatedAt: p.CreatedAt,
	}
}

func configOut(c store.RuntimeConfig) client.RuntimeConfig {
	return client.RuntimeConfig{
		Image: c.Image, Provider: c.Provider, CPUMillis: c.CPUMillis, MemoryMB: c.MemoryMB,
		PidsLimit: c.PidsLimit, DiskMB: c.DiskMB,
		Network:            &client.NetworkPolicy{Mode: c.Network.Mode, Allow: c.Network.Allow, Deny: c.Network.Deny},
		IdleTimeoutSeconds: c.IdleTimeoutSeconds, MaxLifetimeSeconds: c.MaxLifetimeSeconds,
		ArchiveAfterSeconds: c.ArchiveAfterSeconds, Secrets: c.Secrets, RootFS: c.RootFSMode(),
		User: c.UserName(), CapabilitiesJSON: sidecar.JSON(c.Sidecars), Ports: portsOut(c.Ports),
		Harness: c.Harness, Model: c.Model,
	}
}

func portsOut(ps []store.DeclaredPort) []client.RuntimePort {
	var out []client.RuntimePort
	for _, p := range ps {
		out = append(out, client.RuntimePort{Port: p.Port, Public: p.Public})
	}
	return out
}

func portsIn(ps []client.RuntimePort) []store.DeclaredPort {
	var out []store.DeclaredPort
	for _, p := range ps {
		out = append(out, store.DeclaredPort{Port: p.Port, Public: p.Public})
	}
	return out
}

func configIn(c *client.RuntimeConfig) (store.RuntimeConfig, error) {
	if c == nil {
		return store.RuntimeConfig{}, nil
	}
	sidecars, err := sidecar.Parse(c.CapabilitiesJSON)
	if err != nil {
		return store.RuntimeConfig{}, err
	}
	prov, err := providerOf(c.Provider, c.MetadataJSON)
	if err != nil {
		return store.RuntimeConfig{}, err
	}
	out := store.RuntimeConfig{
		Image: c.Image, Provider: prov, CPUMillis: c.CPUMillis, MemoryMB: c.MemoryMB,
		PidsLimit: c.PidsLimit, DiskMB: c.DiskMB,
		IdleTimeoutSeconds: c.IdleTimeoutSeconds, MaxLifetimeSeconds: c.MaxLifetimeSeconds,
		ArchiveAfterSeconds: c.ArchiveAfterSeconds, Secrets: c.Secrets, RootFS: c.RootFS,
		User: c.User, Sidecars: sidecars, Ports: portsIn(c.Ports),
		Harness: c.Harness, Model: c.Model,
	}
	if c.Network != nil {
		out.Network = store.NetworkConfig{Mode: c.Network.Mode, Allow: c.Network.Allow, Deny: c.Network.Deny}
	}
	return out, nil
}

// runtimeOut renders a runtime with what its current sandbox (if any) adds,
// and what an hour of its compute costs at prices p.
func runtimeOut(rt store.Runtime, sb *store.Sandbox, p ledger.Pricing) client.Runtime {
	out := client.Runtime{
		ID: rt.ID, OrgID: rt.OrgID, WorkspaceID: rt.WorkspaceID, ProjectID: rt.ProjectID,
		Status: string(rt.Status), StatusReason: rt.StatusReason, Config: configOut(rt.Config),
		CurrentSandboxID: rt.CurrentSandboxID, CreatedAt: rt.CreatedAt, UpdatedAt: rt.UpdatedAt,
		CreditsPerHour: ledger.Credits(p.ClassOf(rt.Config.Provider, rt.Config.CPUMillis, rt.Config.MemoryMB).PerHour()),
	}
	if sb != nil && sb.ID == rt.CurrentSandboxID {
		out.PauseReason = string(sb.PauseReason)
		out.ExpiresAt = timePtr(sb.ExpiresAt)
	}
	return out
}

// egressOut renders one decision of the egress proxy.
func egressOut(d store.EgressDecision) client.EgressDecision {
	return client.EgressDecision{
		ID: d.ID, RuntimeID: d.RuntimeID, SandboxID: d.SandboxID, At: d.At, Allowed: d.Allowed, Reason: d.Reason,
		Method: d.Method, Host: d.Host, Port: d.Port, Addr: d.Addr, BytesUp: d.BytesUp, BytesDown: d.BytesDown,
		DurationMS: float64(d.Duration.Microseconds()) / 1000, Brokered: d.Brokered,
	}
}

// sandboxOut renders a ledger row with its running credits (micro-credits
// accrued since its billing watermark): estimated = billed + running.
func sandboxOut(sb store.Sandbox, runningMicros int64) client.Sandbox {
	billed := ledger.Credits(sb.BilledMicros)
	running := ledger.Credits(runningMicros)
	return client.Sandbox{
		ID: sb.ID, OrgID: sb.OrgID, WorkspaceID: sb.WorkspaceID, ProjectID: sb.ProjectID,
		RuntimeID: sb.RuntimeID, Kind: string(sb.Kind), State: string(sb.State),
		PauseReason: string(sb.PauseReason), Provider: sb.Provider,
		ProviderSandboxID: sb.ProviderSandboxID, Image: sb.Image,
		Resources:  client.Resources{CPUMillis: sb.CPUMillis, MemoryMB: sb.MemoryMB},
		SecretIDs:  sb.SecretIDs,
		KillReason: sb.KillReason, Error: sb.Error,
		BilledCredits: billed, RunningCredits: running, EstimatedTotalCredits: billed + running,
		CreatedAt: sb.CreatedAt, StartedAt: timePtr(sb.StartedAt), PausedAt: timePtr(sb.PausedAt),
		KilledAt: timePtr(sb.KilledAt), ExpiresAt: timePtr(sb.ExpiresAt), UpdatedAt: sb.UpdatedAt,
	}
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// pricing is the installation's price list; without a ledger compute is
// free.
func (a *API) pricing() ledger.Pricing {
	if a.ledger == nil {
		return ledger.Free
	}
	return a.ledger.Meter().Pricing()
}

// sandboxView renders a ledger row priced at the API's clock.
func (a *API) sandboxView(sb store.Sandbox) client.Sandbox {
	var running int64
	if a.ledger != nil {
		running = a.ledger.Meter().RunningMicros(sb, a.now())
	}
	return sandboxOut(sb, running)
}
