package server

import (
	"time"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/store"
)

// limitState is where the API keeps its limits' live state: its rate
// limits' buckets and the sessions its caps count. On a store that
// replicas share (PostgreSQL) it is the store, so a limit of N holds
// across the replicas, and h.renewal renews this replica's sessions
// there every third of ttl, from the start until the API has drained
// (every session it served released). On an embedded store (SQLite) one
// process serves: nil, and the API keeps the state in memory, so no
// request pays a database round trip for it.
func (h *httpServer) limitState(ttl time.Duration) api.LimitState {
	h.renewal = &automation{}
	if !store.Replicated(h.in.st) {
		return nil
	}
	shared := api.NewSharedLimits(api.SharedLimitsConfig{
		Store: h.in.st, Replica: h.in.leases.Replica(), TTL: ttl, Logger: h.in.logger.With("component", "limits"),
	})
	h.renewal.run = shared.Run
	h.in.logger.Info("the rate limits and session caps are shared with the store's other replicas")
	return shared
}
