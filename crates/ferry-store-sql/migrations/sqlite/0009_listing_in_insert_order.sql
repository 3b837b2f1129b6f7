-- The listing indexes in the order tasks arrive (ferry-store-sql, SQLite).
--
-- Both listing indexes kept the latest status first (status_ms DESC), so every new task went
-- in at their left edge. SQLite splits a full page there half and half and rewrites its
-- neighbours: a write batch rewrote about 4.8 pages of each of the two indexes for some
-- 2 KB of entries, and the pages stayed half empty. Now they hold the oldest first
-- (status_ms ascending, ties by id descending): new tasks go in at the right edge, and a
-- listing (latest first, ties by id ascending) reads the same index backwards, still
-- without sorting.

DROP INDEX tasks_listing;
CREATE INDEX tasks_listing ON tasks (tenant, status_ms, id DESC);

DROP INDEX tasks_owner_listing;
CREATE INDEX tasks_owner_listing ON tasks (tenant, owner, status_ms, id DESC);
