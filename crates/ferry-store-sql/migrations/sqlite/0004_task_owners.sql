-- Task owners (ferry-store-sql, SQLite): the caller that created each task, as the server
-- names callers, written at creation and never updated. Tasks stored before this migration
-- have none (NULL): every caller of their tenant sees them, as before.

ALTER TABLE tasks ADD COLUMN owner TEXT;

-- ListTasks for one caller: its tasks (and the unowned ones), latest status first.
CREATE INDEX tasks_owner_listing ON tasks (tenant, owner, status_ms DESC, id);
