-- Tasks and their events (ferry-store-sql, PostgreSQL).
--
-- A task row is the latest snapshot (ferry_proto::Task as JSON text) with the columns that
-- listing, expiry and restart recovery filter on; `seq` is the number of its last event.
-- Events are kept until their task goes (ON DELETE CASCADE): expire() deletes the task row.
-- Times are milliseconds since the Unix epoch; `state` is the wire name (TASK_STATE_WORKING).
--
-- Keys compare bytewise (COLLATE "C"): the listing's tie order by id is then the same as the
-- memory store's and SQLite's, whatever the database's locale.
--
-- Snapshots and events are TEXT, not JSONB: the store never looks inside them, JSONB would
-- parse every write and refuses text containing U+0000 (which a text part may hold), and
-- TEXT gives back exactly the bytes written.

CREATE TABLE tasks (
    tenant     TEXT COLLATE "C" NOT NULL,
    id         TEXT COLLATE "C" NOT NULL,
    context_id TEXT             NOT NULL,
    state      TEXT             NOT NULL,
    seq        BIGINT           NOT NULL,
    status_ms  BIGINT           NOT NULL,
    expires_ms BIGINT,
    snapshot   TEXT             NOT NULL,
    PRIMARY KEY (tenant, id)
);

-- ListTasks: one tenant, latest status first, ties by id.
CREATE INDEX tasks_listing ON tasks (tenant, status_ms DESC, id);

-- expire(now): the tasks due at or before now.
CREATE INDEX tasks_expiry ON tasks (expires_ms) WHERE expires_ms IS NOT NULL;

-- unfinished(): the turns a restart lost.
CREATE INDEX tasks_unfinished ON tasks (tenant, id)
    WHERE state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING');

CREATE TABLE events (
    tenant  TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    seq     BIGINT           NOT NULL,
    event   TEXT             NOT NULL,
    PRIMARY KEY (tenant, task_id, seq),
    FOREIGN KEY (tenant, task_id) REFERENCES tasks (tenant, id) ON DELETE CASCADE
);
