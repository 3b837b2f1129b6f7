-- Replicas: a cancel asked on one replica for a turn running on another. The holder of the
-- task's lease hears it (a notification, and its heartbeat's look as the backstop) and ends
-- the turn; a new lease clears it.
ALTER TABLE tasks ADD COLUMN cancel_requested BOOLEAN NOT NULL DEFAULT false;
CREATE INDEX tasks_cancel_requested ON tasks (lease_replica) WHERE cancel_requested;
