-- 0012: leases. Each background loop (the settler, the lifecycle rounds,
-- the warm pool's filler) runs on the one replica that holds its lease:
-- a holder (a replica's id, '' once released) and an expiry it renews.
-- token is the fencing token: it grows by one each time the lease
-- changes holder, never on a renewal.

CREATE TABLE leases (
    name        TEXT PRIMARY KEY CHECK (name != ''),
    holder      TEXT NOT NULL DEFAULT '',
    token       BIGINT NOT NULL CHECK (token > 0),
    acquired_at TIMESTAMPTZ NOT NULL,
    renewed_at  TIMESTAMPTZ NOT NULL,
    expires_at  TIMESTAMPTZ NOT NULL
);
