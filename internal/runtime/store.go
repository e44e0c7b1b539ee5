package runtime

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/store"
)

// Store is what the Service uses of the store: runtime rows and their
// projects, ledger rows, the warm pool and a runtime's egress log, and
// transactions, whose work goes through tx.
type Store interface {
	store.Transactor

	GetProject(ctx context.Context, id string) (store.Project, error)
	DeleteProject(ctx context.Context, id string) error

	GetRuntimeByProject(ctx context.Context, projectID string) (store.Runtime, error)
	ListRuntimes(ctx context.Context, workspaceID string, page store.Page) ([]store.Runtime, string, error)
	runtimeWriter
	DeleteRuntime(ctx context.Context, id string) error

	GetSandbox(ctx context.Context, id string) (store.Sandbox, error)
	GetSandboxByProviderID(ctx context.Context, orgID, providerSandboxID string) (store.Sandbox, error)
	ListSandboxes(ctx context.Context, f store.SandboxFilter, page store.Page) ([]store.Sandbox, string, error)
	RecordSandboxProvider(ctx context.Context, id string, version int64, providerID string, state []byte, at time.Time) (store.Sandbox, error)
	ExtendSandboxExpiry(ctx context.Context, id string, expires time.Time) (bool, error)
	SetSandboxExpiry(ctx context.Context, id string, expires time.Time) (bool, error)

	CreateWarmSandbox(ctx context.Context, w store.WarmSandbox) error
	GetWarmSandbox(ctx context.Context, id string) (store.WarmSandbox, error)
	UpdateWarmSandbox(ctx context.Context, w store.WarmSandbox) error
	ListWarmSandboxes(ctx context.Context) ([]store.WarmSandbox, error)
	DeleteWarmSandbox(ctx context.Context, id string) error

	ListEgress(ctx context.Context, runtimeID string, page store.Page) ([]store.EgressDecision, string, error)

	store.TemplateQueries
	// OrgImageAllowed: an org's own images (template builds).
	OrgImageAllowed(ctx context.Context, orgID, image string) (bool, error)
	SetTemplateConfig(ctx context.Context, t store.Template) error
	GetHostByName(ctx context.Context, orgID, name string) (store.Host, error)
}

// tx is what the Service's helpers do inside one of its transactions (an
// InTx callback hands them its Queries): a runtime's and its sandboxes'
// transitions and a warm sandbox's claim. What Billing does there is
// BillingTx.
type tx interface {
	runtimeWriter

	GetSandbox(ctx context.Context, id string) (store.Sandbox, error)
	ListSandboxes(ctx context.Context, f store.SandboxFilter, page store.Page) ([]store.Sandbox, string, error)
	MarkSandboxRunning(ctx context.Context, id string, version int64, at, expires time.Time) (store.Sandbox, error)
	MarkSandboxPaused(ctx context.Context, id string, version int64, reason store.PauseReason, at time.Time) (store.Sandbox, error)
	KillSandbox(ctx context.Context, id string, version int64, reason, detail string, at time.Time) (store.Sandbox, error)
	ExtendSandboxExpiry(ctx context.Context, id string, expires time.Time) (bool, error)

	ClaimWarmSandbox(ctx context.Context, template string) (store.WarmSandbox, error)
}

// runtimeWriter writes a runtime row through its verbs, and reads it again
// when another server's write made the version stale (see writeRuntime).
type runtimeWriter interface {
	GetRuntime(ctx context.Context, id string) (store.Runtime, error)
	SetRuntimeState(ctx context.Context, id string, version int64, st store.RuntimeState, at time.Time) (store.Runtime, error)
	SetRuntimeConfig(ctx context.Context, id string, version int64, c store.RuntimeConfig, at time.Time) (store.Runtime, error)
	SetRuntimeSnapshot(ctx context.Context, id string, version int64, ref string, at time.Time) (store.Runtime, error)
	SetRuntimeWorkspaceVolume(ctx context.Context, id string, version int64, volume string, at time.Time) (store.Runtime, error)
}
