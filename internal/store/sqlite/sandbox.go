package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/sqlite/litedb"
)

// sandboxOf maps a sandboxes row to the store's ledger row.
func sandboxOf(s litedb.Sandbox) (store.Sandbox, error) {
	secrets, err := dialect.DecodeStrings(s.SecretIds)
	if err != nil {
		return store.Sandbox{}, errDecode(resSandbox, "secret_ids", err)
	}
	return store.Sandbox{
		ID:                s.ID,
		OrgID:             s.OrgID,
		WorkspaceID:       s.WorkspaceID,
		ProjectID:         s.ProjectID,
		RuntimeID:         s.RuntimeID,
		Kind:              store.SandboxKind(s.Kind),
		State:             store.SandboxState(s.State),
		PauseReason:       store.PauseReason(s.PauseReason),
		Provider:          s.Provider,
		ProviderSandboxID: s.ProviderSandboxID,
		ProviderState:     blob(s.ProviderState),
		Image:             s.Image,
		CPUMillis:         s.CpuMillis,
		MemoryMB:          s.MemoryMb,
		SecretIDs:         secrets,
		Network:           s.Network,
		KillReason:        s.KillReason,
		Error:             s.Error,
		BilledMicros:      s.BilledMicros,
		CreatedAt:         fromMicro(s.CreatedAt),
		StartedAt:         fromOptTime(s.StartedAt),
		RunningSince:      fromOptTime(s.RunningSince),
		PausedAt:          fromOptTime(s.PausedAt),
		KilledAt:          fromOptTime(s.KilledAt),
		ExpiresAt:         fromOptTime(s.ExpiresAt),
		LastSettledAt:     fromOptTime(s.LastSettledAt),
		Version:           s.Version,
		BillingVersion:    s.BillingVersion,
		UpdatedAt:         fromMicro(s.UpdatedAt),
	}, nil
}

// oneSandbox maps the row one statement returned, or classifies its error.
func oneSandbox(op string, row litedb.Sandbox, err error) (store.Sandbox, error) {
	if err != nil {
		return store.Sandbox{}, classify(op, resSandbox, err)
	}
	return sandboxOf(row)
}

// CreateSandbox inserts the ledger row s with version 1.
func (q *queries) CreateSandbox(ctx context.Context, s store.Sandbox) error {
	err := required(resSandbox, "id", s.ID, "org id", s.OrgID, "kind", string(s.Kind), "state", string(s.State))
	if err != nil {
		return err
	}
	secrets, err := dialect.EncodeStrings(s.SecretIDs)
	if err != nil {
		return errEncode(resSandbox, "secret_ids", err)
	}
	created := orNow(s.CreatedAt)
	updated := s.UpdatedAt
	if updated.IsZero() {
		updated = created
	}
	return classify("create sandbox", resSandbox, q.wq.CreateSandbox(ctx, litedb.CreateSandboxParams{
		ID: s.ID, OrgID: s.OrgID, WorkspaceID: s.WorkspaceID, ProjectID: s.ProjectID, RuntimeID: s.RuntimeID,
		Kind: string(s.Kind), State: string(s.State), PauseReason: string(s.PauseReason),
		Provider: s.Provider, ProviderSandboxID: s.ProviderSandboxID, ProviderState: blob(s.ProviderState),
		Image: s.Image, CpuMillis: s.CPUMillis, MemoryMb: s.MemoryMB, SecretIds: secrets,
		KillReason: s.KillReason, Error: s.Error, BilledMicros: s.BilledMicros,
		CreatedAt: micros(created), StartedAt: optTime(s.StartedAt), PausedAt: optTime(s.PausedAt),
		KilledAt: optTime(s.KilledAt), ExpiresAt: optTime(s.ExpiresAt), LastSettledAt: optTime(s.LastSettledAt),
		RunningSince: optTime(s.RunningSince), UpdatedAt: micros(updated), Network: s.Network,
	}))
}

// GetSandbox returns the ledger row with id.
func (q *queries) GetSandbox(ctx context.Context, id string) (store.Sandbox, error) {
	row, err := q.rq.GetSandbox(ctx, id)
	return oneSandbox("get sandbox", row, err)
}

// GetSandboxByProviderID returns orgID's row for the provider's sandbox id,
// the newest if a provider ever reused one. An id long enough that matches
// no row exactly is resolved as a prefix of exactly one provider id.
func (q *queries) GetSandboxByProviderID(ctx context.Context, orgID, providerSandboxID string) (store.Sandbox, error) {
	return dialect.SandboxByProviderID(providerSandboxID, func(id string) (store.Sandbox, error) {
		row, err := q.rq.GetSandboxByProviderID(ctx, litedb.GetSandboxByProviderIDParams{OrgID: orgID, ProviderSandboxID: id})
		return oneSandbox("get sandbox by provider id", row, err)
	}, func(prefix string) ([]string, error) {
		// Provider ids are ASCII, so every id starting with the prefix
		// sorts below prefix+0x7f.
		ids, err := q.rq.ProviderSandboxIDsByPrefix(ctx, litedb.ProviderSandboxIDsByPrefixParams{
			OrgID: orgID, Prefix: prefix, Below: prefix + "\x7f",
		})
		return ids, classify("get sandbox by provider id prefix", resSandbox, err)
	})
}

// ListSandboxes lists f.OrgID's rows newest first, narrowed by f.
func (q *queries) ListSandboxes(ctx context.Context, f store.SandboxFilter, page store.Page) ([]store.Sandbox, string, error) {
	if none, err := dialect.CheckSandboxFilter(f, page); none || err != nil {
		return nil, "", err
	}
	workspaces, err := dialect.EncodeStrings(f.Workspaces) // nil: every workspace
	if err != nil {
		return nil, "", errEncode(resSandbox, "workspace_id", err)
	}
	return listPage(ctx, "list sandboxes", resSandbox, page,
		func(ctx context.Context, k keyset) ([]litedb.Sandbox, error) {
			return q.rq.ListSandboxes(ctx, litedb.ListSandboxesParams{
				OrgID: f.OrgID, Kind: optString(string(f.Kind)), State: optString(string(f.State)),
				Provider: optString(f.Provider), RuntimeID: optString(f.RuntimeID), Workspaces: workspaces,
				BeforeAt: k.At, BeforeID: k.ID, Lim: k.Fetch,
			})
		}, sandboxOf, func(s store.Sandbox) (time.Time, string) { return s.CreatedAt, s.ID })
}

// transition runs one sandbox verb: update, a generated versioned UPDATE,
// changes row id at version, bumps the version and returns the stored row.
// No row back is a missing row or a stale version, told apart by
// versionMiss.
func (q *queries) transition(ctx context.Context, op, id string, version int64, update func() (litedb.Sandbox, error)) (store.Sandbox, error) {
	if id == "" {
		return store.Sandbox{}, errdefs.InvalidArgument("invalid_sandbox", "a sandbox id is required")
	}
	row, err := update()
	if errors.Is(err, sql.ErrNoRows) {
		return store.Sandbox{}, versionMiss(ctx, resSandbox, id, version, q.wq.SandboxExists)
	}
	return oneSandbox(op, row, err)
}

// RecordSandboxProvider records the provider's id and recovery state.
func (q *queries) RecordSandboxProvider(ctx context.Context, id string, version int64, providerID string, state []byte, at time.Time) (store.Sandbox, error) {
	return q.transition(ctx, "record a sandbox's provider id", id, version, func() (litedb.Sandbox, error) {
		return q.wq.RecordSandboxProvider(ctx, litedb.RecordSandboxProviderParams{
			ProviderSandboxID: providerID, ProviderState: blob(state), At: micros(orNow(at)), ID: id, Version: version,
		})
	})
}

// MarkSandboxRunning records a start or a resume at at.
func (q *queries) MarkSandboxRunning(ctx context.Context, id string, version int64, at, expires time.Time) (store.Sandbox, error) {
	return q.transition(ctx, "mark a sandbox running", id, version, func() (litedb.Sandbox, error) {
		return q.wq.MarkSandboxRunning(ctx, litedb.MarkSandboxRunningParams{At: micros(orNow(at)), ExpiresAt: optTime(expires), ID: id, Version: version})
	})
}

// MarkSandboxPaused records a pause at at.
func (q *queries) MarkSandboxPaused(ctx context.Context, id string, version int64, reason store.PauseReason, at time.Time) (store.Sandbox, error) {
	return q.transition(ctx, "mark a sandbox paused", id, version, func() (litedb.Sandbox, error) {
		return q.wq.MarkSandboxPaused(ctx, litedb.MarkSandboxPausedParams{PauseReason: string(reason), At: micros(orNow(at)), ID: id, Version: version})
	})
}

// KillSandbox records that the row's compute is gone for good.
func (q *queries) KillSandbox(ctx context.Context, id string, version int64, reason, detail string, at time.Time) (store.Sandbox, error) {
	return q.transition(ctx, "kill a sandbox", id, version, func() (litedb.Sandbox, error) {
		return q.wq.KillSandbox(ctx, litedb.KillSandboxParams{KillReason: reason, Detail: detail, At: micros(orNow(at)), ID: id, Version: version})
	})
}

// ExtendSandboxExpiry moves a running row's expiry later.
func (q *queries) ExtendSandboxExpiry(ctx context.Context, id string, expires time.Time) (bool, error) {
	n, err := q.wq.ExtendSandboxExpiry(ctx, litedb.ExtendSandboxExpiryParams{ExpiresAt: micros(expires), ID: id})
	return n == 1, classify("extend a sandbox's expiry", resSandbox, err)
}

// SetSandboxExpiry sets a running row's expiry.
func (q *queries) SetSandboxExpiry(ctx context.Context, id string, expires time.Time) (bool, error) {
	n, err := q.wq.SetSandboxExpiry(ctx, litedb.SetSandboxExpiryParams{ExpiresAt: micros(expires), ID: id})
	return n == 1, classify("set a sandbox's expiry", resSandbox, err)
}

// CountSandboxes counts the rows that are not killed, by provider and state.
func (q *queries) CountSandboxes(ctx context.Context) ([]store.SandboxCount, error) {
	rows, err := q.rq.CountSandboxes(ctx)
	if err != nil {
		return nil, classify("count sandboxes", resSandbox, err)
	}
	return mapRows(rows, total(func(r litedb.CountSandboxesRow) store.SandboxCount {
		return store.SandboxCount{Provider: r.Provider, State: store.SandboxState(r.State), Count: int(r.Count)}
	}))
}
