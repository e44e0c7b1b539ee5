package postgres

// SCAFFOLD, to be deleted when the tenancy and sandbox domains of this
// dialect are in: the few methods of other domains the credit tests call
// (orgs, workspaces, projects, runtimes, sandboxes), in plain SQL, and the
// helpers the credit methods share with those domains, under the names
// their files (codec.go, sandbox.go) give them: orNow, optTime,
// fromOptTime, optString and sandboxOf.

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/postgres/pgdb"
)

func (q *queries) CreateRuntime(ctx context.Context, r store.Runtime) error {
	config, err := json.Marshal(r.Config)
	if err != nil {
		return err
	}
	_, err = q.db.Exec(ctx, `INSERT INTO runtimes (id, org_id, workspace_id, project_id, status, status_reason, config,
		current_sandbox_id, workspace_volume, snapshot, version, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 1, $11, $12)`,
		r.ID, r.OrgID, r.WorkspaceID, r.ProjectID, r.Status, r.StatusReason, string(config),
		r.CurrentSandboxID, r.WorkspaceVolume, r.Snapshot, orNow(r.CreatedAt), orNow(r.UpdatedAt))
	return classify("create runtime", dialect.Runtime, err)
}

func (q *queries) CreateSandbox(ctx context.Context, s store.Sandbox) error {
	secrets, err := dialect.EncodeStrings(s.SecretIDs)
	if err != nil {
		return err
	}
	_, err = q.db.Exec(ctx, `INSERT INTO sandboxes (id, org_id, workspace_id, project_id, runtime_id, kind, state, pause_reason,
		provider, provider_sandbox_id, provider_state, image, cpu_millis, memory_mb, secret_ids, kill_reason, error,
		billed_micros, created_at, started_at, paused_at, killed_at, expires_at, last_settled_at, running_since,
		version, updated_at, network, billing_version)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22,
		$23, $24, $25, 1, $26, $27, 1)`,
		s.ID, s.OrgID, s.WorkspaceID, s.ProjectID, s.RuntimeID, s.Kind, s.State, s.PauseReason,
		s.Provider, s.ProviderSandboxID, s.ProviderState, s.Image, s.CPUMillis, s.MemoryMB, secrets, s.KillReason, s.Error,
		s.BilledMicros, orNow(s.CreatedAt), optTime(s.StartedAt), optTime(s.PausedAt), optTime(s.KilledAt),
		optTime(s.ExpiresAt), optTime(s.LastSettledAt), optTime(s.RunningSince), orNow(s.UpdatedAt), s.Network)
	return classify("create sandbox", dialect.Sandbox, err)
}

func (q *queries) GetSandbox(ctx context.Context, id string) (store.Sandbox, error) {
	rows, err := q.db.Query(ctx, "SELECT * FROM sandboxes WHERE id = $1", id)
	if err != nil {
		return store.Sandbox{}, classify("get sandbox", dialect.Sandbox, err)
	}
	r, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[pgdb.Sandbox])
	if err != nil {
		return store.Sandbox{}, classify("get sandbox", dialect.Sandbox, err)
	}
	return sandboxOf(r)
}

// sandboxOf maps a sandbox row to its ledger row.
func sandboxOf(r pgdb.Sandbox) (store.Sandbox, error) {
	secrets, err := dialect.DecodeStrings(r.SecretIds)
	if err != nil {
		return store.Sandbox{}, err
	}
	state := r.ProviderState
	if len(state) == 0 {
		state = nil
	}
	return store.Sandbox{
		ID: r.ID, OrgID: r.OrgID, WorkspaceID: r.WorkspaceID, ProjectID: r.ProjectID, RuntimeID: r.RuntimeID,
		Kind: store.SandboxKind(r.Kind), State: store.SandboxState(r.State), PauseReason: store.PauseReason(r.PauseReason),
		Provider: r.Provider, ProviderSandboxID: r.ProviderSandboxID, ProviderState: state, Image: r.Image,
		CPUMillis: r.CpuMillis, MemoryMB: r.MemoryMb, SecretIDs: secrets, Network: r.Network, KillReason: r.KillReason,
		Error: r.Error, BilledMicros: r.BilledMicros, CreatedAt: r.CreatedAt.UTC(), StartedAt: fromOptTime(r.StartedAt),
		RunningSince: fromOptTime(r.RunningSince), PausedAt: fromOptTime(r.PausedAt), KilledAt: fromOptTime(r.KilledAt),
		ExpiresAt: fromOptTime(r.ExpiresAt), LastSettledAt: fromOptTime(r.LastSettledAt), Version: r.Version,
		BillingVersion: r.BillingVersion, UpdatedAt: r.UpdatedAt.UTC(),
	}, nil
}
