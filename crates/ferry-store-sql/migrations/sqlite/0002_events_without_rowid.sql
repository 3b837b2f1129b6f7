-- Events stored in their key's order, without a foreign key (ferry-store-sql, SQLite).
--
-- Every event inserted paid for two b-trees (the table by rowid and its primary key) and a
-- foreign-key lookup of its task; a write batch inserts several events per task, and this was
-- most of what SQLite itself did per request. Now the table is its key (WITHOUT ROWID), and
-- nothing checks the task per event: the writer inserts an event only in the transaction
-- that holds the write lock and has just seen its task. A trigger removes a task's events
-- with the task (expiry deletes tasks), which is what ON DELETE CASCADE did.

CREATE TABLE events_by_key (
    tenant  TEXT    NOT NULL,
    task_id TEXT    NOT NULL,
    seq     INTEGER NOT NULL,
    event   TEXT    NOT NULL,
    PRIMARY KEY (tenant, task_id, seq)
) STRICT, WITHOUT ROWID;

INSERT INTO events_by_key (tenant, task_id, seq, event)
    SELECT tenant, task_id, seq, event FROM events;

DROP TABLE events;

ALTER TABLE events_by_key RENAME TO events;

CREATE TRIGGER tasks_take_their_events AFTER DELETE ON tasks
BEGIN
    DELETE FROM events WHERE tenant = OLD.tenant AND task_id = OLD.id;
END;
