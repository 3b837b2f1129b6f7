-- Tasks and their events (ferry-store-sql, SQLite).
--
-- A task row is the latest snapshot (ferry_proto::Task as JSON text) with the columns that
-- listing, expiry and restart recovery filter on; `seq` is the number of its last event.
-- Events are kept until their task goes (ON DELETE CASCADE): expire() deletes the task row.
-- Times are milliseconds since the Unix epoch; `state` is the wire name (TASK_STATE_WORKING).
-- Text compares bytewise (SQLite's BINARY collation), the order the memory store lists in.

CREATE TABLE tasks (
    tenant     TEXT    NOT NULL,
    id         TEXT    NOT NULL,
    context_id TEXT    NOT NULL,
    state      TEXT    NOT NULL,
    seq        INTEGER NOT NULL,
    status_ms  INTEGER NOT NULL,
    expires_ms INTEGER,
    snapshot   TEXT    NOT NULL,
    PRIMARY KEY (tenant, id)
) STRICT;

-- ListTasks: one tenant, latest status first, ties by id.
CREATE INDEX tasks_listing ON tasks (tenant, status_ms DESC, id);

-- expire(now): the tasks due at or before now.
CREATE INDEX tasks_expiry ON tasks (expires_ms) WHERE expires_ms IS NOT NULL;

-- unfinished(): the turns a restart lost.
CREATE INDEX tasks_unfinished ON tasks (tenant, id)
    WHERE state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING');

CREATE TABLE events (
    tenant  TEXT    NOT NULL,
    task_id TEXT    NOT NULL,
    seq     INTEGER NOT NULL,
    event   TEXT    NOT NULL,
    PRIMARY KEY (tenant, task_id, seq),
    FOREIGN KEY (tenant, task_id) REFERENCES tasks (tenant, id) ON DELETE CASCADE
) STRICT;
