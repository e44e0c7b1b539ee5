-- 0006: settlements get their own version. A ledger row's lifecycle
-- (version) and its billing (billed_micros, last_settled_at) are written by
-- different writers; each guards only its own columns, so neither loses a
-- race to the other.

ALTER TABLE sandboxes ADD COLUMN billing_version INTEGER NOT NULL DEFAULT 1;

-- Metrics count live rows by provider and state on every scrape; killed
-- rows, which are kept forever, stay out of the index.
CREATE INDEX sandboxes_live ON sandboxes (provider, state) WHERE state != 'killed';
