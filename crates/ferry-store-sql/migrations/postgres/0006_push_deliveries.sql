-- The push-delivery outbox (ferry-store-sql, PostgreSQL): one row per (event, config), written
-- in the transaction of the event. `status` is pending, delivered or dead; a pending row is due
-- at `due_ms` and leased to one deliverer until `lease_until_ms` (claims take rows with
-- FOR UPDATE SKIP LOCKED, so replicas never claim one row at once). Expiry deletes a task's
-- deliveries in the statement that deletes the task; deleting a config deletes its deliveries.

CREATE TABLE push_deliveries (
    id               TEXT    NOT NULL PRIMARY KEY,
    tenant           TEXT    NOT NULL,
    task_id          TEXT    NOT NULL,
    config_id        TEXT    NOT NULL,
    seq              BIGINT  NOT NULL,
    status           TEXT    NOT NULL DEFAULT 'pending',
    attempts         BIGINT  NOT NULL DEFAULT 0,
    due_ms           BIGINT  NOT NULL DEFAULT 0,
    first_attempt_ms BIGINT,
    done_ms          BIGINT,
    last_error       TEXT,
    lease            TEXT,
    lease_until_ms   BIGINT,
    UNIQUE (tenant, task_id, config_id, seq)
);

CREATE INDEX push_deliveries_due ON push_deliveries (due_ms) WHERE status = 'pending';
