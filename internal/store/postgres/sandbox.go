package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/postgres/pgdb"
)

// sandboxOf maps a sandboxes row to the store's ledger row.
func sandboxOf(s pgdb.Sandbox) (store.Sandbox, error) {
	secrets, err := dialect.DecodeStrings(s.SecretIds)
	if err != nil {
		return store.Sandbox{}, errDecode(dialect.Sandbox, "secret_ids", err)
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
		CreatedAt:         s.CreatedAt.UTC(),
		StartedAt:         fromOptTime(s.StartedAt),
		RunningSince:      fromOptTime(s.RunningSince),
		PausedAt:          fromOptTime(s.PausedAt),
		KilledAt:          fromOptTime(s.KilledAt),
		ExpiresAt:         fromOptTime(s.ExpiresAt),
		LastSettledAt:     fromOptTime(s.LastSettledAt),
		Version:           s.Version,
		BillingVersion:    s.BillingVersion,
		UpdatedAt:         s.UpdatedAt.UTC(),
	}, nil
}

// sandboxesOf maps rows of sandboxes, keeping nil for none.
func sandboxesOf(rows []pgdb.Sandbox) ([]store.Sandbox, error) {
	var out []store.Sandbox
	for _, r := range rows {
		s, err := sandboxOf(r)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// CreateSandbox inserts the ledger row s with version 1.
func (q *queries) CreateSandbox(ctx context.Context, s store.Sandbox) error {
	err := dialect.Required(dialect.Sandbox, "id", s.ID, "org id", s.OrgID, "kind", string(s.Kind), "state", string(s.State))
	if err != nil {
		return err
	}
	secrets, err := dialect.EncodeStrings(s.SecretIDs)
	if err != nil {
		return errEncode(dialect.Sandbox, "secret_ids", err)
	}
	created, updated := orNow(s.CreatedAt), orNow(s.UpdatedAt)
	if s.UpdatedAt.IsZero() {
		updated = created
	}
	return classify("create sandbox", dialect.Sandbox, q.q.CreateSandbox(ctx, pgdb.CreateSandboxParams{
		ID: s.ID, OrgID: s.OrgID, WorkspaceID: s.WorkspaceID, ProjectID: s.ProjectID, RuntimeID: s.RuntimeID,
		Kind: string(s.Kind), State: string(s.State), PauseReason: string(s.PauseReason),
		Provider: s.Provider, ProviderSandboxID: s.ProviderSandboxID, ProviderState: blob(s.ProviderState),
		Image: s.Image, CpuMillis: s.CPUMillis, MemoryMb: s.MemoryMB, SecretIds: secrets,
		KillReason: s.KillReason, Error: s.Error, BilledMicros: s.BilledMicros,
		CreatedAt: created, StartedAt: optTime(s.StartedAt), PausedAt: optTime(s.PausedAt),
		KilledAt: optTime(s.KilledAt), ExpiresAt: optTime(s.ExpiresAt), LastSettledAt: optTime(s.LastSettledAt),
		RunningSince: optTime(s.RunningSince), UpdatedAt: updated, Network: s.Network,
	}))
}

// GetSandbox returns the ledger row with id.
func (q *queries) GetSandbox(ctx context.Context, id string) (store.Sandbox, error) {
	row, err := q.q.GetSandbox(ctx, id)
	return oneSandbox("get sandbox", row, err)
}

// oneSandbox maps the row one statement returned, or classifies its error.
func oneSandbox(op string, row pgdb.Sandbox, err error) (store.Sandbox, error) {
	if err != nil {
		return store.Sandbox{}, classify(op, dialect.Sandbox, err)
	}
	return sandboxOf(row)
}

// GetSandboxByProviderID returns orgID's row for the provider's sandbox id,
// the newest if a provider ever reused one. An id long enough that matches
// no row exactly is resolved as a prefix of exactly one provider id.
func (q *queries) GetSandboxByProviderID(ctx context.Context, orgID, providerSandboxID string) (store.Sandbox, error) {
	return dialect.SandboxByProviderID(providerSandboxID, func(id string) (store.Sandbox, error) {
		row, err := q.q.GetSandboxByProviderID(ctx, pgdb.GetSandboxByProviderIDParams{OrgID: orgID, ProviderSandboxID: id})
		return oneSandbox("get sandbox by provider id", row, err)
	}, func(prefix string) ([]string, error) {
		ids, err := q.q.ProviderSandboxIDsByPrefix(ctx, pgdb.ProviderSandboxIDsByPrefixParams{OrgID: orgID, Prefix: prefix})
		return ids, classify("get sandbox by provider id prefix", dialect.Sandbox, err)
	})
}

// ListSandboxes lists f.OrgID's rows newest first, narrowed by f.
func (q *queries) ListSandboxes(ctx context.Context, f store.SandboxFilter, page store.Page) ([]store.Sandbox, string, error) {
	if none, err := dialect.CheckSandboxFilter(f, page); none || err != nil {
		return nil, "", err
	}
	rows, next, err := listPage(ctx, "list sandboxes", dialect.Sandbox, page,
		func(ctx context.Context, k keyset) ([]pgdb.Sandbox, error) {
			return q.q.ListSandboxes(ctx, pgdb.ListSandboxesParams{
				OrgID: f.OrgID, Kind: optString(string(f.Kind)), State: optString(string(f.State)),
				Provider: optString(f.Provider), RuntimeID: optString(f.RuntimeID), Workspaces: f.Workspaces,
				BeforeAt: k.At, BeforeID: k.ID, Lim: k.Fetch,
			})
		}, same, func(s pgdb.Sandbox) (time.Time, string) { return s.CreatedAt, s.ID })
	if err != nil {
		return nil, "", err
	}
	out, err := sandboxesOf(rows)
	return out, next, err
}

// CountSandboxes counts the rows that are not killed, by provider and state.
func (q *queries) CountSandboxes(ctx context.Context) ([]store.SandboxCount, error) {
	rows, err := q.q.CountSandboxes(ctx)
	if err != nil {
		return nil, classify("count sandboxes", dialect.Sandbox, err)
	}
	return mapRows(rows, func(r pgdb.CountSandboxesRow) store.SandboxCount {
		return store.SandboxCount{Provider: r.Provider, State: store.SandboxState(r.State), Count: int(r.Count)}
	}), nil
}

// transition runs one verb's versioned UPDATE on row id and maps the row
// it returns; no row is told apart as missing or stale.
func (q *queries) transition(ctx context.Context, op, id string, version int64, update func() (pgdb.Sandbox, error)) (store.Sandbox, error) {
	if id == "" {
		return store.Sandbox{}, errdefs.InvalidArgument("invalid_sandbox", "a sandbox id is required")
	}
	row, err := update()
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Sandbox{}, missOrConflict(ctx, dialect.Sandbox, id, version, q.q.SandboxExists)
	}
	return oneSandbox(op, row, err)
}

// RecordSandboxProvider records the provider's id and recovery state.
func (q *queries) RecordSandboxProvider(ctx context.Context, id string, version int64, providerID string, state []byte, at time.Time) (store.Sandbox, error) {
	return q.transition(ctx, "record a sandbox's provider id", id, version, func() (pgdb.Sandbox, error) {
		return q.q.RecordSandboxProvider(ctx, pgdb.RecordSandboxProviderParams{
			ProviderSandboxID: providerID, ProviderState: blob(state), At: orNow(at), ID: id, Version: version,
		})
	})
}

// MarkSandboxRunning records a start or a resume at at.
func (q *queries) MarkSandboxRunning(ctx context.Context, id string, version int64, at, expires time.Time) (store.Sandbox, error) {
	return q.transition(ctx, "mark a sandbox running", id, version, func() (pgdb.Sandbox, error) {
		return q.q.MarkSandboxRunning(ctx, pgdb.MarkSandboxRunningParams{At: orNow(at), ExpiresAt: optTime(expires), ID: id, Version: version})
	})
}

// MarkSandboxPaused records a pause at at.
func (q *queries) MarkSandboxPaused(ctx context.Context, id string, version int64, reason store.PauseReason, at time.Time) (store.Sandbox, error) {
	return q.transition(ctx, "mark a sandbox paused", id, version, func() (pgdb.Sandbox, error) {
		return q.q.MarkSandboxPaused(ctx, pgdb.MarkSandboxPausedParams{PauseReason: string(reason), At: orNow(at), ID: id, Version: version})
	})
}

// KillSandbox records that the row's compute is gone for good.
func (q *queries) KillSandbox(ctx context.Context, id string, version int64, reason, detail string, at time.Time) (store.Sandbox, error) {
	return q.transition(ctx, "kill a sandbox", id, version, func() (pgdb.Sandbox, error) {
		return q.q.KillSandbox(ctx, pgdb.KillSandboxParams{KillReason: reason, Detail: detail, At: orNow(at), ID: id, Version: version})
	})
}

// ExtendSandboxExpiry moves a running row's expiry later.
func (q *queries) ExtendSandboxExpiry(ctx context.Context, id string, expires time.Time) (bool, error) {
	n, err := q.q.ExtendSandboxExpiry(ctx, pgdb.ExtendSandboxExpiryParams{ExpiresAt: expires, ID: id})
	return n == 1, classify("extend a sandbox's expiry", dialect.Sandbox, err)
}

// SetSandboxExpiry sets a running row's expiry.
func (q *queries) SetSandboxExpiry(ctx context.Context, id string, expires time.Time) (bool, error) {
	n, err := q.q.SetSandboxExpiry(ctx, pgdb.SetSandboxExpiryParams{ExpiresAt: expires, ID: id})
	return n == 1, classify("set a sandbox's expiry", dialect.Sandbox, err)
}
