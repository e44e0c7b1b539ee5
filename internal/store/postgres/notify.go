package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// The live events of the fleet (internal/fleetevents) go between replicas
// by PostgreSQL's LISTEN/NOTIFY on one channel of the database: a replica
// notifies with the ids of what happened, every replica listening (itself
// included) hears it after the notifying statement commits, and reads the
// rows. A payload is under 8000 bytes. A listener holds one connection of
// its own, outside the pools, for as long as it listens.

// eventsChannel is the channel the fleet's events go on.
const eventsChannel = "paddock_events"

// Notify sends payload to every listener of the events channel.
func (s *Store) Notify(ctx context.Context, payload string) error {
	if _, err := s.pool.Exec(ctx, "SELECT pg_notify($1, $2)", eventsChannel, payload); err != nil {
		return wrap("notify", err)
	}
	return nil
}

// Listen listens on the events channel on a connection of its own: it
// calls listening once PostgreSQL listens, then fn with each payload, in
// the order they were committed, until ctx ends (nil) or the connection
// fails (its error).
func (s *Store) Listen(ctx context.Context, listening func(), fn func(payload string)) error {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return wrap("listen", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unlockTimeout)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+eventsChannel); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return wrap("listen", err)
	}
	listening()
	for {
		n, err := conn.WaitForNotification(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return wrap("listen", err)
		}
		fn(n.Payload)
	}
}
