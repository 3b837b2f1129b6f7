-- Push-notification configs of tasks (ferry-store-sql, PostgreSQL). `config` is the
-- TaskPushNotificationConfig as ProtoJSON text, credentials included (only deliveries read
-- them). Expiry deletes a task's configs in the statement that deletes the task.

CREATE TABLE push_configs (
    tenant     TEXT   NOT NULL,
    task_id    TEXT   NOT NULL,
    id         TEXT   NOT NULL,
    config     TEXT   NOT NULL,
    created_ms BIGINT NOT NULL,
    PRIMARY KEY (tenant, task_id, id)
);
