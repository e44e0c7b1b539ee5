package sqlite

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/sqlite/litedb"
)

// Hosts (migration 0019).

const resHost = dialect.Host

func toHost(h litedb.Host) (store.Host, error) {
	return store.Host{ID: h.ID, OrgID: h.OrgID, Name: h.Name, Address: h.Address, User: h.SshUser, HostKey: h.HostKey,
		KeyID: h.KeyID, SealedKey: h.SealedKey, DockerSocket: h.DockerSocket, RunDir: h.RunDir, DiskDir: h.DiskDir,
		IdleTeardown: time.Duration(h.IdleTeardownSeconds) * time.Second, TeardownCommand: h.TeardownCommand,
		CostPerHourMicros: h.CostPerHourMicros, Mode: store.HostMode(h.Mode), State: store.HostState(h.State), LastUsedAt: fromMicro(h.LastUsedAt),
		CreatedBy: h.CreatedBy, CreatedAt: fromMicro(h.CreatedAt)}, nil
}

// CreateHost inserts h; its name is unique in its org.
func (q *queries) CreateHost(ctx context.Context, h store.Host) error {
	if err := dialect.CheckHost(h); err != nil {
		return err
	}
	err := classify("create host", resHost, q.wq.CreateHost(ctx, litedb.CreateHostParams{
		ID: h.ID, OrgID: h.OrgID, Name: h.Name, Address: h.Address, SshUser: h.User, HostKey: h.HostKey,
		KeyID: h.KeyID, SealedKey: h.SealedKey, DockerSocket: h.DockerSocket, RunDir: h.RunDir, DiskDir: h.DiskDir,
		IdleTeardownSeconds: int64(h.IdleTeardown / time.Second), TeardownCommand: h.TeardownCommand,
		CostPerHourMicros: h.CostPerHourMicros, Mode: string(h.Mode.OrDefault()), CreatedBy: h.CreatedBy, CreatedAt: micros(orNow(h.CreatedAt)),
	}))
	if errdefs.IsConflict(err) {
		return dialect.HostExists(err)
	}
	return err
}

// GetHost returns the host id.
func (q *queries) GetHost(ctx context.Context, id string) (store.Host, error) {
	h, err := q.rq.GetHost(ctx, id)
	if err != nil {
		return store.Host{}, classify("get host", resHost, err)
	}
	return toHost(h)
}

// GetHostByName returns orgID's host called name.
func (q *queries) GetHostByName(ctx context.Context, orgID, name string) (store.Host, error) {
	h, err := q.rq.GetHostByName(ctx, litedb.GetHostByNameParams{OrgID: orgID, Name: name})
	if err != nil {
		return store.Host{}, classify("get host", resHost, err)
	}
	return toHost(h)
}

// ListHosts lists orgID's hosts in registration order.
func (q *queries) ListHosts(ctx context.Context, orgID string, page store.Page) ([]store.Host, string, error) {
	return listPage(ctx, "list hosts", resHost, page,
		func(ctx context.Context, k keyset) ([]litedb.Host, error) {
			return q.rq.ListHosts(ctx, litedb.ListHostsParams{OrgID: orgID, AfterAt: k.At, AfterID: k.ID, Lim: k.Fetch})
		},
		toHost, func(h store.Host) (time.Time, string) { return h.CreatedAt, h.ID })
}

// ListHostsAfter lists hosts of every org by id after afterID.
func (q *queries) ListHostsAfter(ctx context.Context, afterID string, limit int) ([]store.Host, error) {
	rows, err := q.rq.ListHostsAfter(ctx, litedb.ListHostsAfterParams{AfterID: afterID, Lim: int64(min(max(limit, 1), store.MaxLimit*10))})
	if err != nil {
		return nil, classify("list hosts", resHost, err)
	}
	return mapRows(rows, toHost)
}

// SetHostState writes host id's state and last use.
func (q *queries) SetHostState(ctx context.Context, id string, state store.HostState, lastUsed time.Time) error {
	n, err := q.wq.SetHostState(ctx, litedb.SetHostStateParams{State: string(state), LastUsedAt: micros(lastUsed), ID: id})
	return affected("set host state", resHost, n, err)
}

// ClaimHostTeardown moves host id from ready at lastUsed to torn_down.
func (q *queries) ClaimHostTeardown(ctx context.Context, id string, lastUsed time.Time) (bool, error) {
	n, err := q.wq.ClaimHostTeardown(ctx, litedb.ClaimHostTeardownParams{ID: id, LastUsedAt: micros(lastUsed)})
	return n == 1, classify("claim host teardown", resHost, err)
}

// SetHostSeal writes host id's key, sealed again under keyID.
func (q *queries) SetHostSeal(ctx context.Context, id, keyID string, sealed []byte) error {
	n, err := q.wq.SetHostSeal(ctx, litedb.SetHostSealParams{KeyID: keyID, SealedKey: sealed, ID: id})
	return affected("seal host key", resHost, n, err)
}

// DeleteHost deletes the host id.
func (q *queries) DeleteHost(ctx context.Context, id string) error {
	n, err := q.wq.DeleteHost(ctx, id)
	return affected("delete host", resHost, n, err)
}
