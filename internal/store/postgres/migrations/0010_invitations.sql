-- 0010: invitations (PostgreSQL). At most one pending invitation per org
-- and address.

CREATE TABLE invitations (
    id         TEXT PRIMARY KEY,
    org_id     TEXT NOT NULL REFERENCES orgs (id),
    email      TEXT CHECK (email IS NULL OR email <> ''),
    wallet     TEXT CHECK (wallet IS NULL OR wallet <> ''),
    role       TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
    inviter_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    state      TEXT NOT NULL DEFAULT 'pending'
               CHECK (state IN ('pending', 'accepted', 'declined', 'revoked', 'expired')),
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    decided_at TIMESTAMPTZ,
    CHECK ((email IS NULL) <> (wallet IS NULL)),
    CHECK ((state = 'pending') = (decided_at IS NULL))
);
CREATE INDEX invitations_org_created ON invitations (org_id, created_at, id);
CREATE INDEX invitations_email ON invitations (email) WHERE email IS NOT NULL;
CREATE INDEX invitations_wallet ON invitations (wallet) WHERE wallet IS NOT NULL;
CREATE INDEX invitations_inviter ON invitations (org_id, inviter_id) WHERE state = 'pending';
CREATE UNIQUE INDEX invitations_pending_email ON invitations (org_id, email) WHERE state = 'pending' AND email IS NOT NULL;
CREATE UNIQUE INDEX invitations_pending_wallet ON invitations (org_id, wallet) WHERE state = 'pending' AND wallet IS NOT NULL;
