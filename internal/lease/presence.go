package lease

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/paddockhq/paddock/internal/store"
)

// PresencePrefix begins the name of a replica's presence lease:
// replica/<its id>.
const PresencePrefix = "replica/"

// PresenceStore is what a Presence keeps and reads the replicas'
// presences in.
type PresenceStore interface {
	Store
	ListLeases(ctx context.Context) ([]store.Lease, error)
}

// Replicas is what a service that reconciles the rows of replicas (tasks,
// worlds) knows of them: this replica's id and who is live now. A
// *Presence is one.
type Replicas interface {
	Replica() string
	Runners(ctx context.Context) (Runners, error)
}

// Presence is one replica's presence in the store: the lease
// replica/<id>, which only that replica takes, held from its start until
// it stops, renewed as every lease is. A replica is live while its
// presence has not expired; one that stops gracefully releases it, and
// one that dies stops renewing it, so it lapses within a TTL.
//
// What a replica runs in its own process (a task, the making of a world)
// names it as its runner; a reconciliation ends only what is orphaned:
// its runner gone (its presence lapsed), or, at the reconciling replica's
// start, unknown or that replica itself (see Runners.Orphaned).
type Presence struct {
	st PresenceStore
	e  *Elector
}

// NewPresence returns the presence of cfg.Replica in st, timed by cfg.TTL
// and cfg.Now as a lease is; it is not taken until Announce.
func NewPresence(st PresenceStore, cfg Config) *Presence {
	cfg.Store = st
	return &Presence{st: st, e: New(cfg)}
}

// Replica is this replica's id.
func (p *Presence) Replica() string { return p.e.Replica() }

func (p *Presence) name() string { return PresencePrefix + p.e.Replica() }

// Announce takes the presence once, so the replica is live before it
// runs anything that names it; Keep then renews it.
func (p *Presence) Announce(ctx context.Context) error {
	l, ok, err := p.st.AcquireLease(ctx, p.name(), p.e.Replica(), p.e.cfg.Now(), p.e.TTL())
	if err != nil {
		return fmt.Errorf("announce replica %s: %w", p.e.Replica(), err)
	}
	if !ok {
		return fmt.Errorf("announce replica %s: its presence is held by %s", p.e.Replica(), l.Holder)
	}
	return nil
}

// Keep renews the presence until ctx ends, then releases it. A presence
// that could not be renewed in time (the store was out of reach) is
// taken again as soon as the store answers.
func (p *Presence) Keep(ctx context.Context) {
	p.e.Run(ctx, p.name(), func(ctx context.Context) { <-ctx.Done() })
}

// Runners reads which replicas are live now, for a reconciliation.
func (p *Presence) Runners(ctx context.Context) (Runners, error) {
	ls, err := p.st.ListLeases(ctx)
	if err != nil {
		return Runners{}, err
	}
	now := p.e.cfg.Now()
	r := Runners{self: p.e.Replica(), live: map[string]bool{}}
	for _, l := range ls {
		id, ok := strings.CutPrefix(l.Name, PresencePrefix)
		if ok && l.Holder == id && l.ExpiresAt.After(now) {
			r.live[id] = true
		}
	}
	return r, nil
}

// Runners is what a replica knows, at one moment, of the replicas that
// run things: itself and those whose presence was live. The zero value
// knows of none: everything is orphaned.
type Runners struct {
	self string
	live map[string]bool
}

// Orphaned reports whether what runner runs (a task, a world's create or
// delete) is no live replica's: runner is a replica whose presence had
// lapsed, or, when restart (this replica starting, before it runs
// anything), this replica itself, which left it when it stopped, or
// runner "" (unknown: made by a binary from before runners were
// recorded). A sweep (not restart) leaves the unknown alone: in a
// rolling upgrade an older replica may run it still, and only a start,
// as before runners were recorded, takes it.
func (r Runners) Orphaned(runner string, restart bool) bool {
	switch {
	case runner == "":
		return restart
	case runner == r.self:
		return restart
	default:
		return !r.live[runner]
	}
}

// ErrRowsLeft marks a reconciliation's pass that took some orphaned rows
// and could not end others (their sandbox's provider gone or out of
// reach): those are left as they are for the next pass, and the pass
// went on with the rest. A server starts despite it.
var ErrRowsLeft = errors.New("some orphaned rows could not be ended; the next pass tries them again")

// Live reports whether replica's presence was live.
func (r Runners) Live(replica string) bool { return r.live[replica] }
