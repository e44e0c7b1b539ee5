-- 0024: the replica that runs a task or made a world (its runner), so a
-- replica's reconciliation ends only what no live replica is running: a
-- task or world whose runner is itself restarted, or a replica whose
-- presence (its lease replica/<id>) has lapsed. Rows from before this
-- migration have runner '': unknown, reconciled as before.

ALTER TABLE tasks ADD COLUMN runner TEXT NOT NULL DEFAULT '';
ALTER TABLE worlds ADD COLUMN runner TEXT NOT NULL DEFAULT '';
