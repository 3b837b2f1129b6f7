-- Events without a foreign key to their task (ferry-store-sql, PostgreSQL).
--
-- The key's check ran a trigger, a lookup and a row lock on the task for every event
-- inserted — the largest part of what a write batch cost the server. Nothing needs it: the
-- writer inserts an event only in the transaction that holds its task's row locked and has
-- just seen it there, and expiry deletes a task's events in the statement that deletes the
-- task (under the same row locks), which is what ON DELETE CASCADE did.

ALTER TABLE events DROP CONSTRAINT IF EXISTS events_tenant_task_id_fkey;
