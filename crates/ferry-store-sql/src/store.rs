//! What the SQLite and the PostgreSQL store share: the reads, expiry and the queueing of
//! writes, written once over sqlx's driver traits. Each store module supplies its
//! [`Dialect`] — its pools, and the two statements of a write batch, which differ (arrays on
//! PostgreSQL, multi-row `VALUES` on SQLite) — and the rest of the SQL is the same text for
//! both (`$1` placeholders, which sqlx's SQLite driver also takes).
//!
//! Rust does not carry higher-ranked bounds on a trait's associated types to the trait's
//! users, so the driver bounds are spelled out on each generic item rather than once on
//! `Dialect`.

use crate::dialect::Dialect;
use crate::error::{describe, seconds};
use crate::plan::{RowLease, TaskRow};
use crate::turn::WriteTurn;
use crate::writer::Writes;
use ferry_proto::{StreamResponse, Task, TaskState};
use ferry_store::{ListQuery, Page, StoreError, StoredEvent, StoredTask, TaskKey};
use sqlx::pool::PoolConnection;
use sqlx::{ColumnIndex, Database, Decode, Encode, Executor, IntoArguments, Pool};
use sqlx::{Row, Type};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::MutexGuard;

/// The `TaskStore` of a database's store type: every call goes to its `inner: SqlStore<DB>`
/// (written once here for SQLite and PostgreSQL alike).
macro_rules! delegate_task_store {
    ($store:ty) => {
        impl ferry_store::TaskStore for $store {
            fn create(&self, task: StoredTask) -> StoreFuture<'_, ()> {
                Box::pin(self.inner.create(task))
            }

            fn append(
                &self,
                key: &TaskKey,
                expected_seq: u64,
                event: Arc<ferry_store::Event>,
                snapshot: StoredTask,
            ) -> StoreFuture<'_, u64> {
                let key = key.clone();
                Box::pin(async move {
                    self.inner
                        .append(&key, expected_seq, event, &snapshot)
                        .await
                })
            }

            fn pipelines(&self) -> bool {
                true
            }

            fn queue_create(&self, task: StoredTask) -> StoreFuture<'_, Queued<()>> {
                Box::pin(self.inner.queue_create(task, Vec::new()))
            }

            fn queue_create_with_push(
                &self,
                task: StoredTask,
                configs: Vec<ferry_store::push::PushConfig>,
            ) -> StoreFuture<'_, Queued<()>> {
                Box::pin(self.inner.queue_create(task, configs))
            }

            fn push(&self) -> Option<&dyn ferry_store::push::PushStore> {
                Some(self)
            }

            fn replicas(&self) -> Option<&dyn ferry_store::replicas::ReplicaStore> {
                crate::store::Shared::replicas(self)
            }

            fn queue_append(
                &self,
                key: &TaskKey,
                expected_seq: u64,
                event: Arc<ferry_store::Event>,
                snapshot: StoredTask,
            ) -> StoreFuture<'_, Queued<u64>> {
                let key = key.clone();
                Box::pin(async move {
                    self.inner
                        .queue_append(&key, expected_seq, event, &snapshot)
                        .await
                })
            }

            fn get(&self, key: &TaskKey) -> StoreFuture<'_, Option<StoredTask>> {
                let key = key.clone();
                Box::pin(async move { self.inner.get(&key).await })
            }

            fn list(&self, query: &ListQuery) -> StoreFuture<'_, Page> {
                let query = query.clone();
                Box::pin(async move { self.inner.list(&query).await })
            }

            fn events_after(
                &self,
                key: &TaskKey,
                seq: u64,
                limit: usize,
            ) -> StoreFuture<'_, Vec<StoredEvent>> {
                let key = key.clone();
                Box::pin(async move { self.inner.events_after(&key, seq, limit).await })
            }

            fn expire(&self, now_ms: u64) -> StoreFuture<'_, Vec<TaskKey>> {
                Box::pin(self.inner.expire(now_ms))
            }

            fn ping(&self) -> StoreFuture<'_, ()> {
                Box::pin(self.inner.ping())
            }

            fn unfinished(&self) -> StoreFuture<'_, Vec<TaskKey>> {
                Box::pin(self.inner.unfinished())
            }

            fn count_by_state(&self) -> StoreFuture<'_, Vec<(TaskState, u64)>> {
                Box::pin(self.inner.count_by_state())
            }
        }
    };
}
pub(crate) use delegate_task_store;

/// Whether a store's database is shared by replicas (`TaskStore::replicas`).
pub(crate) trait Shared {
    /// The store as replicas share it; `None` when one process owns it.
    fn replicas(&self) -> Option<&dyn ferry_store::replicas::ReplicaStore>;
}

/// The SUBMITTED and WORKING tasks of every tenant. The states are literals (not bound) so
/// that the partial index `tasks_unfinished` serves the query; a test checks them against
/// [`TaskState::as_str`].
pub(crate) const UNFINISHED: &str = "SELECT tenant, id FROM tasks \
     WHERE state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING') ORDER BY tenant, id";

/// Connections of a store's outbox pool: one deliverer claims and finishes, one at a time
/// each, and a second lets a claim pass a finish.
pub(crate) const OUTBOX_CONNECTIONS: u32 = 2;

/// Connections of a store's write pool: the writer keeps one per lane, expiry uses another.
pub(crate) fn write_connections<DB: Dialect>() -> u32 {
    u32::try_from(DB::LANES.max(1))
        .unwrap_or(1)
        .saturating_add(1)
}

/// The store over either database: two pools (reads, and writes with expiry) and the writer.
#[derive(Debug)]
pub(crate) struct SqlStore<DB: Database> {
    pub(crate) reads: Pool<DB>,
    pub(crate) writes: Pool<DB>,
    /// The push outbox's claims and finishes: connections whose commits are not waited to be
    /// durable (SQLite `synchronous=NORMAL`, PostgreSQL `synchronous_commit=off`). A crash
    /// can then forget only the last moment's claims and results, and a forgotten result
    /// sends a delivery again, which at-least-once allows; the rows themselves are written
    /// with their events, durably.
    pub(crate) outbox: Pool<DB>,
    /// Taken by every write when the database has one write lock for everyone (SQLite): the
    /// writer for each batch, the outbox for each claim and finish, and the rest through
    /// [`SqlStore::writers_turn`]. They take turns here, in order, instead of meeting at the
    /// database's lock, whose busy handler sleeps milliseconds at a time.
    pub(crate) write_turn: Option<WriteTurn>,
    pub(crate) writer: Writes,
    /// How long one operation may take once it has a connection.
    pub(crate) statement_timeout: Duration,
    /// How long an operation waits for a connection (named in its error).
    pub(crate) acquire_timeout: Duration,
}

/// A time or sequence number as stored: SQL integers are signed 64-bit, so values past
/// `i64::MAX` (292 million years of milliseconds) are kept as `i64::MAX`.
pub(crate) fn stored(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn loaded(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// The row of `task` in `tenant` at sequence number `seq` (its snapshot is serialized by the
/// writer, once per batch).
pub(crate) fn task_row(tenant: &str, id: &Arc<str>, task: &StoredTask, seq: u64) -> TaskRow {
    TaskRow {
        tenant: tenant.to_owned(),
        id: id.clone(),
        owner: task.owner.clone(),
        context_id: task.task.context_id.clone(),
        state: task.state().as_str(),
        seq: stored(seq),
        status_ms: stored(task.status_ms),
        expires_ms: task.expires_ms.map(stored),
        snapshot: task.task.clone(),
        lease: task.lease.as_ref().map(|l| RowLease {
            replica: l.replica.clone(),
            epoch: stored(l.epoch),
            until_ms: stored(l.until_ms),
            last: l.last,
        }),
    }
}

/// Where a page ended: the `"status_ms:id"` of its last task, the memory store's token form
/// (so tokens read the same whatever the store).
struct Position<'a> {
    status_ms: i64,
    id: &'a str,
}

fn parse_token(token: &str) -> Result<Position<'_>, StoreError> {
    let (ms, id) = token.split_once(':').ok_or(StoreError::BadPageToken)?;
    let status_ms: u64 = ms.parse().map_err(|_| StoreError::BadPageToken)?;
    Ok(Position {
        status_ms: stored(status_ms),
        id,
    })
}

impl<DB> SqlStore<DB>
where
    DB: Dialect,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB>,
    for<'q> i64: Encode<'q, DB> + Type<DB>,
    for<'q> Option<i64>: Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'r> i64: Decode<'r, DB>,
    for<'r> Option<i64>: Decode<'r, DB>,
    for<'r> &'r str: Decode<'r, DB>,
    usize: ColumnIndex<DB::Row>,
{
    pub(crate) fn unavailable(&self, reason: String) -> StoreError {
        StoreError::Unavailable(format!("{}: {reason}", DB::ENGINE))
    }

    /// A database error (a statement's, or a column's that does not decode) as the store
    /// reports it.
    pub(crate) fn failed(&self, e: &sqlx::Error) -> StoreError {
        self.unavailable(describe(e, self.acquire_timeout))
    }

    /// Runs `op` on a connection of the read pool within the statement timeout; a connection
    /// whose operation failed or timed out is dropped (see [`SqlStore::finish`]).
    pub(crate) async fn on_reads<T>(
        &self,
        op: impl AsyncFnOnce(&mut DB::Connection) -> Result<T, sqlx::Error>,
    ) -> Result<T, StoreError> {
        self.on(&self.reads, op).await
    }

    /// [`SqlStore::on_reads`] on the outbox's pool, in the writers' turn when there is one.
    pub(crate) async fn on_outbox<T>(
        &self,
        op: impl AsyncFnOnce(&mut DB::Connection) -> Result<T, sqlx::Error>,
    ) -> Result<T, StoreError> {
        let _turn = self.writers_turn().await?;
        self.on(&self.outbox, op).await
    }

    /// A write the writer does not batch (a push config, a profile, a redelivery): on the
    /// read pool, in the writers' turn when there is one.
    pub(crate) async fn on_reads_writing<T>(
        &self,
        op: impl AsyncFnOnce(&mut DB::Connection) -> Result<T, sqlx::Error>,
    ) -> Result<T, StoreError> {
        let _turn = self.writers_turn().await?;
        self.on(&self.reads, op).await
    }

    /// The writers' turn, where the database has one write lock for everyone (SQLite): held
    /// by every write for as long as it writes. A write that met the writer at the lock
    /// instead would wait in SQLite's busy handler, which sleeps up to 100 ms between tries
    /// and, against a writer that commits back to back, can lose every try until its
    /// timeout.
    async fn writers_turn(&self) -> Result<Option<MutexGuard<'_, ()>>, StoreError> {
        match &self.write_turn {
            Some(turn) => turn
                .take(self.acquire_timeout)
                .await
                .map(Some)
                .map_err(|reason| self.unavailable(reason)),
            None => Ok(None),
        }
    }

    /// [`SqlStore::on_reads`] on `pool`.
    pub(crate) async fn on<T>(
        &self,
        pool: &Pool<DB>,
        op: impl AsyncFnOnce(&mut DB::Connection) -> Result<T, sqlx::Error>,
    ) -> Result<T, StoreError> {
        let mut conn = self.connection(pool).await?;
        let result = tokio::time::timeout(self.statement_timeout, op(&mut conn)).await;
        self.finish(conn, result)
    }

    pub(crate) async fn connection(
        &self,
        pool: &Pool<DB>,
    ) -> Result<PoolConnection<DB>, StoreError> {
        pool.acquire()
            .await
            .map_err(|e| self.unavailable(describe(&e, self.acquire_timeout)))
    }

    /// The answer of an operation that ran on `conn` with a timeout; a connection whose
    /// operation failed or timed out is dropped, not handed out again.
    pub(crate) fn finish<T>(
        &self,
        conn: PoolConnection<DB>,
        result: Result<Result<T, sqlx::Error>, tokio::time::error::Elapsed>,
    ) -> Result<T, StoreError> {
        let reason = match result {
            Ok(Ok(value)) => return Ok(value),
            Ok(Err(e)) => describe(&e, self.acquire_timeout),
            Err(_) => format!("no answer within {}", seconds(self.statement_timeout)),
        };
        drop(conn.detach());
        Err(self.unavailable(reason))
    }

    /// A stored snapshot read back; the columns are `seq, status_ms, expires_ms, snapshot,
    /// owner` from `first` on.
    fn stored_task(
        &self,
        tenant: &str,
        row: &DB::Row,
        first: usize,
    ) -> Result<StoredTask, StoreError> {
        let decode = |e: sqlx::Error| self.unavailable(describe(&e, self.acquire_timeout));
        let seq: i64 = row.try_get(first).map_err(decode)?;
        let status_ms: i64 = row.try_get(first + 1).map_err(decode)?;
        let expires_ms: Option<i64> = row.try_get(first + 2).map_err(decode)?;
        let snapshot: &str = row.try_get(first + 3).map_err(decode)?;
        let owner: Option<&str> = row.try_get(first + 4).map_err(decode)?;
        let task: Task = serde_json::from_str(snapshot)
            .map_err(|e| self.unavailable(format!("a stored snapshot does not parse: {e}")))?;
        Ok(StoredTask {
            tenant: tenant.to_owned(),
            owner: owner.map(Arc::from),
            task: Arc::new(task),
            seq: loaded(seq),
            status_ms: loaded(status_ms),
            expires_ms: expires_ms.map(loaded),
            lease: None,
        })
    }

    pub(crate) async fn create(&self, task: StoredTask) -> Result<(), StoreError> {
        let row = task_row(&task.tenant, &task.task.id, &task, task.seq);
        self.writer.create(row).await
    }

    /// Queues a create with the task's push configs (see `TaskStore::queue_create`).
    pub(crate) async fn queue_create(
        &self,
        task: StoredTask,
        push: Vec<ferry_store::push::PushConfig>,
    ) -> Result<ferry_store::Queued<()>, StoreError> {
        let row = task_row(&task.tenant, &task.task.id, &task, task.seq);
        self.writer.queue_create(row, push).await
    }

    pub(crate) async fn append(
        &self,
        key: &TaskKey,
        expected_seq: u64,
        event: Arc<ferry_store::Event>,
        snapshot: &StoredTask,
    ) -> Result<u64, StoreError> {
        self.queue_append(key, expected_seq, event, snapshot)
            .await?
            .await
    }

    /// Queues an append (see `TaskStore::queue_append`).
    pub(crate) async fn queue_append(
        &self,
        key: &TaskKey,
        expected_seq: u64,
        event: Arc<ferry_store::Event>,
        snapshot: &StoredTask,
    ) -> Result<ferry_store::Queued<u64>, StoreError> {
        let row = task_row(&key.tenant, &key.id, snapshot, expected_seq);
        // Serialized here, before the write is queued, into the event the server's streams
        // share: a subscriber sends these bytes, not its own.
        event.json();
        self.writer.queue_append(row, expected_seq, event).await
    }

    /// One round trip on a read connection.
    pub(crate) async fn ping(&self) -> Result<(), StoreError> {
        self.on_reads(async |conn| conn.execute("SELECT 1").await.map(|_| ()))
            .await
    }

    pub(crate) async fn get(&self, key: &TaskKey) -> Result<Option<StoredTask>, StoreError> {
        let mut conn = self.connection(&self.reads).await?;
        let result = tokio::time::timeout(
            self.statement_timeout,
            sqlx::query::<DB>(
                "SELECT seq, status_ms, expires_ms, snapshot, owner FROM tasks \
                 WHERE tenant = $1 AND id = $2",
            )
            .bind(key.tenant.as_str())
            .bind(&*key.id)
            .fetch_optional(&mut *conn),
        )
        .await;
        let row = self.finish(conn, result)?;
        row.map(|row| self.stored_task(&key.tenant, &row, 0))
            .transpose()
    }

    pub(crate) async fn list(&self, query: &ListQuery) -> Result<Page, StoreError> {
        let size = query.page_size.max(1);
        let (count_sql, count_binds) = count_statement(query);
        let (page_sql, page_binds) = page_statement(query)?;
        let mut conn = self.connection(&self.reads).await?;
        let result = tokio::time::timeout(self.statement_timeout, async {
            let total: i64 = bind_all(sqlx::query::<DB>(&count_sql), &count_binds)
                .fetch_one(&mut *conn)
                .await?
                .try_get(0)?;
            let rows = bind_all(sqlx::query::<DB>(&page_sql), &page_binds)
                .fetch_all(&mut *conn)
                .await?;
            Ok((total, rows))
        })
        .await;
        let (total, rows) = self.finish(conn, result)?;
        let more = rows.len() > size;
        let mut tasks = Vec::with_capacity(size.min(rows.len()));
        let mut last_id = String::new();
        for row in rows.iter().take(size) {
            let id: &str = row
                .try_get(0)
                .map_err(|e| self.unavailable(describe(&e, self.acquire_timeout)))?;
            last_id = id.to_owned();
            tasks.push(self.stored_task(&query.tenant, row, 1)?);
        }
        let next_page_token = more
            .then(|| tasks.last().map(|t| format!("{}:{last_id}", t.status_ms)))
            .flatten();
        Ok(Page {
            tasks,
            next_page_token,
            total: usize::try_from(total).unwrap_or(0),
        })
    }

    pub(crate) async fn count_by_state(&self) -> Result<Vec<(TaskState, u64)>, StoreError> {
        let mut conn = self.connection(&self.reads).await?;
        let result = tokio::time::timeout(
            self.statement_timeout,
            sqlx::query::<DB>("SELECT state, COUNT(*) FROM tasks GROUP BY state ORDER BY state")
                .fetch_all(&mut *conn),
        )
        .await;
        let rows = self.finish(conn, result)?;
        rows.iter()
            .map(|row| {
                let decode = |e: sqlx::Error| self.unavailable(describe(&e, self.acquire_timeout));
                let name: &str = row.try_get(0).map_err(decode)?;
                let count: i64 = row.try_get(1).map_err(decode)?;
                let state = TaskState::from_name(name).ok_or_else(|| {
                    self.unavailable(format!("a stored task has the unknown state {name:?}"))
                })?;
                Ok((state, loaded(count)))
            })
            .collect()
    }

    pub(crate) async fn events_after(
        &self,
        key: &TaskKey,
        seq: u64,
        limit: usize,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let mut conn = self.connection(&self.reads).await?;
        let result = tokio::time::timeout(
            self.statement_timeout,
            sqlx::query::<DB>(
                "SELECT seq, event FROM events WHERE tenant = $1 AND task_id = $2 AND seq > $3 \
                 ORDER BY seq LIMIT $4",
            )
            .bind(key.tenant.as_str())
            .bind(&*key.id)
            .bind(stored(seq))
            .bind(stored(limit as u64))
            .fetch_all(&mut *conn),
        )
        .await;
        let rows = self.finish(conn, result)?;
        rows.iter()
            .map(|row| {
                let decode = |e: sqlx::Error| self.unavailable(describe(&e, self.acquire_timeout));
                let seq: i64 = row.try_get(0).map_err(decode)?;
                // The text it was read from is its ProtoJSON: a stream sends it as it is.
                let text: &str = row.try_get(1).map_err(decode)?;
                let json = bytes::Bytes::copy_from_slice(text.as_bytes());
                let value: StreamResponse = serde_json::from_slice(&json)
                    .map_err(|e| self.unavailable(format!("a stored event does not parse: {e}")))?;
                let event = ferry_store::Event::with_json(Arc::new(value), json);
                Ok(StoredEvent {
                    seq: loaded(seq),
                    event: Arc::new(event),
                })
            })
            .collect()
    }

    /// On the write pool, in the writers' turn: expiry deletes, and waits for a write batch
    /// rather than racing it.
    pub(crate) async fn expire(&self, now_ms: u64) -> Result<Vec<TaskKey>, StoreError> {
        let _turn = self.writers_turn().await?;
        let mut conn = self.connection(&self.writes).await?;
        let result = tokio::time::timeout(
            self.statement_timeout,
            sqlx::query::<DB>(DB::EXPIRE)
                .bind(stored(now_ms))
                .fetch_all(&mut *conn),
        )
        .await;
        let rows = self.finish(conn, result)?;
        let mut keys =
            keys(&rows).map_err(|e| self.unavailable(describe(&e, self.acquire_timeout)))?;
        keys.sort();
        Ok(keys)
    }

    pub(crate) async fn unfinished(&self) -> Result<Vec<TaskKey>, StoreError> {
        let mut conn = self.connection(&self.reads).await?;
        let result = tokio::time::timeout(
            self.statement_timeout,
            sqlx::query::<DB>(UNFINISHED).fetch_all(&mut *conn),
        )
        .await;
        let rows = self.finish(conn, result)?;
        keys(&rows).map_err(|e| self.unavailable(describe(&e, self.acquire_timeout)))
    }
}

/// The statement that counts the tasks `query` selects (all its pages), and its values.
fn count_statement(query: &ListQuery) -> (String, Vec<Bind<'_>>) {
    let mut counted = Select::matching(query);
    let sql = match &query.owner {
        None => format!("SELECT COUNT(*) FROM tasks{}", counted.sql),
        Some(owner) => {
            let [mine, unowned] = visible_to(&counted.bind(Bind::Text(owner)));
            let count = |filter: &str| format!("SELECT COUNT(*) FROM tasks{}{filter}", counted.sql);
            format!("SELECT ({}) + ({})", count(&mine), count(&unowned))
        }
    };
    (sql, counted.binds)
}

/// `ferry_store::visible_to` for the owner bound as `p`: the owner's tasks and those stored
/// before owners were, as two filters, each of which the owner listing index serves in order
/// (one `owner = p OR owner IS NULL` would not be).
fn visible_to(p: &str) -> [String; 2] {
    [format!(" AND owner = {p}"), " AND owner IS NULL".to_owned()]
}

/// The columns of a listing page.
const PAGE_COLUMNS: &str = "id, seq, status_ms, expires_ms, snapshot, owner";

/// A listing's order: latest status first, ties by id.
const LATEST_FIRST: &str = "ORDER BY status_ms DESC, id ASC";

/// The statement of one listing page and its values: the tasks `query` selects after its page
/// token, latest status first, ties by id, one more than a page (whether it exists says if
/// there is a next page). The listing indexes hold the oldest first, so that new tasks go in
/// at their end; this order is the same index read backwards.
///
/// A listing for an owner shows the owner's tasks and those stored before owners were
/// (`ferry_store::visible_to`). Those are two reads of the owner listing index, each in order
/// and at most a page long, merged: one read for `owner = $p OR owner IS NULL` would be of the
/// tenant's listing index, filtered, and pass every other caller's tasks on the way (77 ms
/// against 0.04 ms for a page of a caller with 10 of a tenant's 200,000 tasks, SQLite).
pub(crate) fn page_statement(query: &ListQuery) -> Result<(String, Vec<Bind<'_>>), StoreError> {
    let after = query.page_token.as_deref().map(parse_token).transpose()?;
    let mut select = Select::matching(query);
    if let Some(position) = &after {
        // Latest first, then by id: what comes after (ms, id) is an older status, or the
        // same one with a greater id.
        let ms = select.bind(Bind::Int(position.status_ms));
        let id = select.bind(Bind::Text(position.id));
        select.sql.push_str(&format!(
            " AND status_ms <= {ms} AND (status_ms < {ms} OR id > {id})"
        ));
    }
    let more = stored(query.page_size.max(1) as u64).saturating_add(1);
    let limit = select.bind(Bind::Int(more));
    let owner = query.owner.as_deref().map(|o| select.bind(Bind::Text(o)));
    let page = |filter: &str| {
        format!(
            "SELECT {PAGE_COLUMNS} FROM tasks{}{filter} {LATEST_FIRST} LIMIT {limit}",
            select.sql
        )
    };
    let sql = match owner {
        None => page(""),
        Some(owner) => {
            let [mine, unowned] = visible_to(&owner);
            format!(
                "SELECT {PAGE_COLUMNS} FROM ({}) AS mine UNION ALL \
                 SELECT {PAGE_COLUMNS} FROM ({}) AS unowned {LATEST_FIRST} LIMIT {limit}",
                page(&mine),
                page(&unowned),
            )
        }
    };
    Ok((sql, select.binds))
}

/// The task keys of `rows` whose first two columns are `tenant, id`.
pub(crate) fn keys<R>(rows: &[R]) -> Result<Vec<TaskKey>, sqlx::Error>
where
    R: Row,
    for<'r> &'r str: Decode<'r, R::Database> + Type<R::Database>,
    usize: ColumnIndex<R>,
{
    rows.iter()
        .map(|row| {
            let tenant: &str = row.try_get(0)?;
            let id: &str = row.try_get(1)?;
            Ok(TaskKey::new(tenant, id))
        })
        .collect()
}

/// A value bound to a dynamically built statement.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Bind<'a> {
    Text(&'a str),
    Int(i64),
}

/// The WHERE clause of a listing and its values, numbered `$1, $2, …` (both drivers take
/// that form).
struct Select<'a> {
    sql: String,
    binds: Vec<Bind<'a>>,
}

impl<'a> Select<'a> {
    /// The filters of `query`, without its owner and its page position.
    fn matching(query: &'a ListQuery) -> Select<'a> {
        let mut select = Select {
            sql: String::new(),
            binds: Vec::new(),
        };
        let tenant = select.bind(Bind::Text(&query.tenant));
        select.sql = format!(" WHERE tenant = {tenant}");
        if let Some(context) = &query.context_id {
            let p = select.bind(Bind::Text(context));
            select.sql.push_str(&format!(" AND context_id = {p}"));
        }
        if let Some(state) = query.state {
            let p = select.bind(Bind::Text(state.as_str()));
            select.sql.push_str(&format!(" AND state = {p}"));
        }
        if let Some(since) = query.status_since_ms {
            let p = select.bind(Bind::Int(stored(since)));
            select.sql.push_str(&format!(" AND status_ms >= {p}"));
        }
        select
    }

    /// Adds a value; its placeholder.
    fn bind(&mut self, value: Bind<'a>) -> String {
        self.binds.push(value);
        format!("${}", self.binds.len())
    }
}

pub(crate) fn bind_all<'q, DB>(
    mut query: sqlx::query::Query<'q, DB, DB::Arguments<'q>>,
    binds: &[Bind<'q>],
) -> sqlx::query::Query<'q, DB, DB::Arguments<'q>>
where
    DB: Database,
    for<'b> i64: Encode<'b, DB> + Type<DB>,
    for<'b> &'b str: Encode<'b, DB> + Type<DB>,
{
    for bind in binds {
        query = match *bind {
            Bind::Text(s) => query.bind(s),
            Bind::Int(n) => query.bind(n),
        };
    }
    query
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unfinished_query_names_the_wire_states() {
        for state in [TaskState::Submitted, TaskState::Working] {
            assert!(
                UNFINISHED.contains(&format!("'{}'", state.as_str())),
                "{state}"
            );
        }
    }

    #[test]
    fn page_tokens_are_status_then_id() {
        let p = parse_token("300:a:b").expect("token");
        assert_eq!((p.status_ms, p.id), (300, "a:b"), "ids may hold colons");
        assert!(matches!(parse_token("x:a"), Err(StoreError::BadPageToken)));
        assert!(matches!(parse_token("300"), Err(StoreError::BadPageToken)));
        let token = format!("{}:z", u64::MAX);
        let far = parse_token(&token).expect("token");
        assert_eq!(far.status_ms, i64::MAX, "far times clamp as stored ones do");
    }
}
