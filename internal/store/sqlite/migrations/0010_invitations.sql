-- 0010: invitations. An org admin offers a membership to whoever holds an
-- email or wallet address; the user holding it accepts or declines. The
-- address need not belong to a user yet: the invitation waits until the
-- installation admin makes one. At most one pending invitation per org and
-- address.

CREATE TABLE invitations (
    id         TEXT PRIMARY KEY,
    org_id     TEXT NOT NULL REFERENCES orgs (id),
    email      TEXT CHECK (email IS NULL OR email != ''),
    wallet     TEXT CHECK (wallet IS NULL OR wallet != ''),
    role       TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
    -- The admin who invited: the role at acceptance is capped by theirs
    -- then, and the invitation is void once they are no admin there.
    inviter_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    state      TEXT NOT NULL DEFAULT 'pending'
               CHECK (state IN ('pending', 'accepted', 'declined', 'revoked', 'expired')),
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    decided_at INTEGER,
    CHECK ((email IS NULL) != (wallet IS NULL)),
    CHECK ((state = 'pending') = (decided_at IS NULL))
);
CREATE INDEX invitations_org_created ON invitations (org_id, created_at, id);
CREATE INDEX invitations_email ON invitations (email) WHERE email IS NOT NULL;
CREATE INDEX invitations_wallet ON invitations (wallet) WHERE wallet IS NOT NULL;
CREATE INDEX invitations_inviter ON invitations (org_id, inviter_id) WHERE state = 'pending';
CREATE UNIQUE INDEX invitations_pending_email ON invitations (org_id, email) WHERE state = 'pending' AND email IS NOT NULL;
CREATE UNIQUE INDEX invitations_pending_wallet ON invitations (org_id, wallet) WHERE state = 'pending' AND wallet IS NOT NULL;
