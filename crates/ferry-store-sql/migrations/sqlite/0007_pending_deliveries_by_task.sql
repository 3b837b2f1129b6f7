-- The pending rows of each (task, config) in sequence order (ferry-store-sql): a claim asks
-- whether a due row has a pending row before it, and a retry moves the rows behind its head.
-- Without this index both walk every row the task ever had, delivered ones included, so a
-- long-lived task's claims grew with its history.

CREATE INDEX push_deliveries_pending ON push_deliveries (tenant, task_id, config_id, seq)
    WHERE status = 'pending';
