package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/component"
	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/lease"
	"github.com/paddockhq/paddock/internal/store"
)

const metaInstanceID = "instance_id"

// installation is the store component's instance: the store, the
// installation id it keeps (it labels all compute), this replica's leases
// on the background loops, and the logger that names the installation and
// the replica, for every component after it.
type installation struct {
	st store.Store
	id string
	// dataDir is the server's data directory.
	dataDir string
	// leases run the background loops (the settler, the lifecycle rounds,
	// the warm pool's filler) each on one replica at a time.
	leases *lease.Elector
	// presence is this replica's presence (the lease replica/<id>), kept
	// from its start until everything else has closed: what its tasks and
	// worlds name as their runner, and what tells the other replicas it
	// still runs them (internal/lease, Presence).
	presence *lease.Presence
	keep     *automation
	// limits are the limits' live state replicas share; nil on a store
	// one server has to itself. renewal renews this replica's holds in
	// it (limits.go).
	limits  *api.SharedLimits
	renewal *automation
	logger  *slog.Logger
}

// storeComponent opens the store (SQLite in the data directory unless the
// configuration names another) and establishes the installation id; from
// its start it keeps this replica's presence; on a store replicas share,
// it keeps the limits' live state there and renews this replica's holds
// until it closes, last (limits.go).
func (w *wiring) storeComponent() component.Registration {
	return component.Def[*installation]{
		Name: storeName,
		Init: func(ctx context.Context, ic *component.InitContext) (*installation, error) {
			cfg, err := component.SectionOf[*config.StoreConfig](ic)
			if err != nil {
				return nil, err
			}
			dsn := cfg.Store
			if dsn == "" {
				dsn = "sqlite:" + filepath.Join(w.dataDir, "paddock.db")
			}
			st, err := store.Open(ctx, dsn, w.logger)
			if err != nil {
				return nil, fmt.Errorf("open store: %w", err)
			}
			id, err := instanceID(ctx, st, cfg.InstanceID)
			if err != nil {
				_ = st.Close()
				return nil, err
			}
			logger := w.logger.With("instance", id, "replica", w.replica)
			// Leases keep the real time whatever the services' clock (a
			// test's may jump): they time the replicas' liveness.
			leases := lease.New(lease.Config{Store: st, Replica: w.replica, TTL: w.leaseTTL, Logger: logger.With("component", "leases")})
			logger.Info("replica", "lease_ttl", leases.TTL().String())
			presence := lease.NewPresence(st, lease.Config{Replica: w.replica, TTL: w.leaseTTL, Logger: logger.With("component", "presence")})
			in := &installation{st: st, id: id, dataDir: w.dataDir, leases: leases, presence: presence, logger: logger,
				keep: &automation{run: presence.Keep}}
			in.limits, in.renewal = w.sharedLimits(in)
			return in, nil
		},
		Start: func(ctx context.Context, in *installation) error {
			// Live before anything that names this replica is made.
			if err := in.presence.Announce(ctx); err != nil {
				return err
			}
			in.keep.start(ctx)
			in.renewal.start(ctx)
			return nil
		},
		Close: func(_ context.Context, in *installation) error {
			in.renewal.close()
			in.keep.close() // releases the presence: what this replica ran is now anyone's to reconcile
			return in.st.Close()
		},
	}.Registration()
}

// instanceID is the installation id the store keeps; on the first start
// the configured one, else a new one.
func instanceID(ctx context.Context, st store.Store, configured string) (string, error) {
	id, err := st.GetMeta(ctx, metaInstanceID)
	if err == nil || !errdefs.IsNotFound(err) {
		return id, err
	}
	id = configured
	if id == "" {
		id = uuid.NewString()
	}
	// Replicas starting together on a new store all keep the first's.
	return st.InitMeta(ctx, metaInstanceID, id)
}

// replicaID is the configured replica id, or one made of the host, the
// data directory and the API's address: <hostname>-<hash>. A server
// restarted with the same settings is the same replica, so after a crash
// it takes its loops' leases back at once instead of waiting for them to
// lapse; two replicas on one host differ by their address. An address
// with port 0 is a new one every start, and so is its replica:
// <hostname>-<pid>-<random>.
func replicaID(configured, dataDir, listen string) string {
	if configured != "" {
		return configured
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "paddock"
	}
	_, port, _ := net.SplitHostPort(listen)
	if port == "" || port == "0" {
		return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), uuid.NewString()[:8])
	}
	if abs, err := filepath.Abs(dataDir); err == nil {
		dataDir = abs
	}
	sum := sha256.Sum256([]byte(dataDir + "\x00" + listen))
	return fmt.Sprintf("%s-%s", host, hex.EncodeToString(sum[:4]))
}

// sweepUnder is a loop run under the lease name: every lease TTL (a dead
// replica's presence lapses within one), sweep ends what replicas that
// died left running; what it swept is logged as what.
func (in *installation) sweepUnder(name, what string, sweep func(context.Context) (int, error), logger *slog.Logger) func(context.Context) {
	return func(ctx context.Context) {
		in.leases.Run(ctx, name, func(ctx context.Context) {
			t := time.NewTicker(in.leases.TTL())
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
				if n, err := sweep(ctx); err != nil && ctx.Err() == nil {
					logger.Warn("sweeping the "+what+" of replicas gone", "err", err)
				} else if n > 0 {
					logger.Info("swept the "+what+" of replicas gone", "ended", n)
				}
			}
		})
	}
}
