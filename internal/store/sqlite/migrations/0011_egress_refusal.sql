-- 0010: an egress decision that let nothing through says of which kind
-- (not_allowed, denied, internal, unresolved, unavailable,
-- upstream_failed, malformed, proxy), for code to tell them apart; a
-- sandbox's decisions are read in order, for a turn watching its model.

ALTER TABLE egress_decisions ADD COLUMN refusal TEXT NOT NULL DEFAULT '';
CREATE INDEX egress_decisions_by_sandbox ON egress_decisions (sandbox_id, created_at, id);
