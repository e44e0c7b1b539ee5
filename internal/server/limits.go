package server

import (
	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/store"
)

// sharedLimits are where the API and the SSH gateway keep their limits'
// live state: the rate limits' buckets, and the sessions and connections
// their caps count. On a store that replicas share (PostgreSQL) it is the
// store, so a limit of N holds across the replicas, and the returned
// automation renews this replica's holds there every third of the lease
// TTL, from the start until everything else has closed (every session
// released). On an embedded store (SQLite) one process serves: nil, and
// each keeps its state in memory, so no request pays a database round trip
// for it.
func (w *wiring) sharedLimits(in *installation) (*api.SharedLimits, *automation) {
	if !store.Replicated(in.st) {
		return nil, &automation{}
	}
	shared := api.NewSharedLimits(api.SharedLimitsConfig{
		Store: in.st, Replica: w.replica, TTL: w.leaseTTL, Logger: in.logger.With("component", "limits"),
	})
	in.logger.Info("the rate limits and session caps are shared with the store's other replicas")
	return shared, &automation{run: shared.Run}
}

// limitState is the API's LimitState: the shared one, or nil (in the
// API's process).
func (in *installation) limitState() api.LimitState {
	if in.limits == nil {
		return nil
	}
	return in.limits
}
