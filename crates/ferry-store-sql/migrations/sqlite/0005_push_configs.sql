-- Push-notification configs of tasks (ferry-store-sql, SQLite). `config` is the
-- TaskPushNotificationConfig as ProtoJSON text, credentials included (only deliveries read
-- them). A trigger removes a task's configs with the task, as it does its events.

CREATE TABLE push_configs (
    tenant     TEXT    NOT NULL,
    task_id    TEXT    NOT NULL,
    id         TEXT    NOT NULL,
    config     TEXT    NOT NULL,
    created_ms INTEGER NOT NULL,
    PRIMARY KEY (tenant, task_id, id)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER tasks_take_their_push_configs AFTER DELETE ON tasks
BEGIN
    DELETE FROM push_configs WHERE tenant = OLD.tenant AND task_id = OLD.id;
END;
