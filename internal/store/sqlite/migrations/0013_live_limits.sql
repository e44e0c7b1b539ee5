-- 0013: the API's limits, shared by the replicas of one database.
-- rate_buckets are token buckets by key: tokens left after the last draw
-- at drawn_at, and whether that draw took one. live_holds are the live
-- sessions (exec streams, terminals) counted against caps: one row per
-- hold and cap, with the replica that serves it and an expiry it renews.
-- Neither is copied between stores: it is the replicas' live state.

CREATE TABLE rate_buckets (
    key      TEXT PRIMARY KEY CHECK (key != ''),
    tokens   REAL NOT NULL,
    granted  INTEGER NOT NULL,
    drawn_at INTEGER NOT NULL
);

CREATE TABLE live_holds (
    id         TEXT NOT NULL CHECK (id != ''),
    kind       TEXT NOT NULL CHECK (kind != ''),
    key        TEXT NOT NULL CHECK (key != ''),
    holder     TEXT NOT NULL CHECK (holder != ''),
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (id, kind, key)
);

CREATE INDEX live_holds_by_cap ON live_holds (kind, key, expires_at);
CREATE INDEX live_holds_by_expiry ON live_holds (expires_at);
