-- 0006: settlements get their own version (PostgreSQL).

ALTER TABLE sandboxes ADD COLUMN billing_version BIGINT NOT NULL DEFAULT 1;

CREATE INDEX sandboxes_live ON sandboxes (provider, state) WHERE state <> 'killed';
