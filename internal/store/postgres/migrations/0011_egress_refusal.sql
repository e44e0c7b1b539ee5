-- 0011: an egress decision's kind of refusal, and a sandbox's decisions in
-- order (PostgreSQL).

ALTER TABLE egress_decisions ADD COLUMN refusal TEXT NOT NULL DEFAULT '';
CREATE INDEX egress_decisions_by_sandbox ON egress_decisions (sandbox_id, created_at, id);
