-- Replicas: the lease a replica holds on a task while one of its turns runs there. The epoch
-- is a new one for every hold, so a write of a replica that lost its lease is refused.
ALTER TABLE tasks ADD COLUMN lease_replica TEXT;
ALTER TABLE tasks ADD COLUMN lease_epoch INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN lease_until_ms INTEGER;
CREATE INDEX tasks_leased ON tasks (lease_until_ms) WHERE lease_replica IS NOT NULL;
