-- 0002: credits and seats (PostgreSQL). Amounts are BIGINT micro-credits;
-- the journal's seq orders entries and a trigger refuses any UPDATE or
-- DELETE of an entry.

CREATE TABLE credit_accounts (
    org_id         TEXT PRIMARY KEY REFERENCES orgs (id),
    balance_micros BIGINT NOT NULL DEFAULT 0 CHECK (balance_micros >= 0),
    held_micros    BIGINT NOT NULL DEFAULT 0 CHECK (held_micros >= 0),
    updated_at     TIMESTAMPTZ NOT NULL
);

CREATE TABLE credit_journal (
    seq                  BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id                   TEXT NOT NULL UNIQUE,
    org_id               TEXT NOT NULL REFERENCES orgs (id),
    kind                 TEXT NOT NULL
        CHECK (kind IN ('grant', 'adjustment', 'hold', 'release', 'deduction', 'refund')),
    amount_micros        BIGINT NOT NULL,
    held_micros          BIGINT NOT NULL,
    balance_after_micros BIGINT NOT NULL CHECK (balance_after_micros >= 0),
    held_after_micros    BIGINT NOT NULL CHECK (held_after_micros >= 0),
    shortfall_micros     BIGINT NOT NULL DEFAULT 0 CHECK (shortfall_micros >= 0),
    sandbox_id           TEXT NOT NULL DEFAULT '',
    runtime_id           TEXT NOT NULL DEFAULT '',
    project_id           TEXT NOT NULL DEFAULT '',
    workspace_id         TEXT NOT NULL DEFAULT '',
    period_start         TIMESTAMPTZ,
    period_end           TIMESTAMPTZ,
    idempotency_key      TEXT NOT NULL,
    note                 TEXT NOT NULL DEFAULT '',
    actor                TEXT NOT NULL DEFAULT '',
    created_at           TIMESTAMPTZ NOT NULL,
    UNIQUE (org_id, idempotency_key)
);
CREATE INDEX credit_journal_org ON credit_journal (org_id, seq);
CREATE INDEX credit_journal_org_created ON credit_journal (org_id, created_at);
CREATE INDEX credit_journal_sandbox ON credit_journal (org_id, sandbox_id, seq);
CREATE INDEX credit_journal_runtime ON credit_journal (org_id, runtime_id, seq);
CREATE INDEX credit_journal_project ON credit_journal (org_id, project_id, seq);

CREATE FUNCTION credit_journal_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the credit journal is append-only';
END;
$$;
CREATE TRIGGER credit_journal_no_update BEFORE UPDATE ON credit_journal
    FOR EACH ROW EXECUTE FUNCTION credit_journal_append_only();
CREATE TRIGGER credit_journal_no_delete BEFORE DELETE ON credit_journal
    FOR EACH ROW EXECUTE FUNCTION credit_journal_append_only();

CREATE INDEX sandboxes_state_id ON sandboxes (state, id);

ALTER TABLE workspaces ADD COLUMN member_limit BIGINT NOT NULL DEFAULT 0 CHECK (member_limit >= 0);

CREATE TABLE workspace_members (
    id           TEXT PRIMARY KEY,
    org_id       TEXT NOT NULL REFERENCES orgs (id),
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    member       TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    UNIQUE (workspace_id, member)
);
CREATE INDEX workspace_members_created ON workspace_members (workspace_id, created_at, id);
