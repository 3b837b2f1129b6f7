-- The push-delivery outbox (ferry-store-sql, SQLite): one row per (event, config), written in
-- the transaction of the event. `status` is pending, delivered or dead; a pending row is due at
-- `due_ms` and leased to one deliverer until `lease_until_ms`. A trigger removes a task's
-- deliveries with the task; deleting a config deletes its deliveries.

CREATE TABLE push_deliveries (
    id               TEXT    NOT NULL PRIMARY KEY,
    tenant           TEXT    NOT NULL,
    task_id          TEXT    NOT NULL,
    config_id        TEXT    NOT NULL,
    seq              INTEGER NOT NULL,
    status           TEXT    NOT NULL DEFAULT 'pending',
    attempts         INTEGER NOT NULL DEFAULT 0,
    due_ms           INTEGER NOT NULL DEFAULT 0,
    first_attempt_ms INTEGER,
    done_ms          INTEGER,
    last_error       TEXT,
    lease            TEXT,
    lease_until_ms   INTEGER,
    UNIQUE (tenant, task_id, config_id, seq)
) STRICT;

CREATE INDEX push_deliveries_due ON push_deliveries (due_ms) WHERE status = 'pending';

CREATE TRIGGER tasks_take_their_push_deliveries AFTER DELETE ON tasks
BEGIN
    DELETE FROM push_deliveries WHERE tenant = OLD.tenant AND task_id = OLD.id;
END;
