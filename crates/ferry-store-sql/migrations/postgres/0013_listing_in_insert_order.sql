-- The listing indexes in the order tasks arrive (ferry-store-sql, PostgreSQL).
--
-- Both listing indexes kept the latest status first (status_ms DESC), so every new task went
-- in at their left edge, where a full page is split half and half: the indexes were nearly twice
-- their size and their write-ahead log some 6 % larger. Now they hold the oldest first
-- (status_ms ascending, ties by id descending): new tasks go in at the right edge, and a
-- listing (latest first, ties by id ascending) scans the same index backwards, still
-- without sorting. Rebuilding them locks the tasks table for the time it takes.

DROP INDEX tasks_listing;
CREATE INDEX tasks_listing ON tasks (tenant, status_ms, id DESC);

DROP INDEX tasks_owner_listing;
CREATE INDEX tasks_owner_listing ON tasks (tenant, owner, status_ms, id DESC);
