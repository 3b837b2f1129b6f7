//! The SQLite store: tasks in one local file, for a single ferry process.
//!
//! Durability: the file is in WAL mode with `synchronous=FULL`, so the WAL is synced at every
//! commit and an acknowledged write survives a crash or a power loss; group commit (see the
//! writer) makes that one sync per batch, not per write. WAL also lets reads run beside the
//! writer: they use their own pool and never wait for a batch.
//!
//! One process should own a file: SQLite serializes writers across processes (a second one
//! waits up to the busy timeout), and its migrations take no lock across processes, so two
//! processes creating the same new file at the same instant may see one of them fail.

use crate::StoreOptions;
use crate::checkpoint::Checkpointer;
use crate::dialect::{Batched, Dialect, Locked};
use crate::error::{OpenError, describe, describe_migration, seconds};
use crate::plan::{FinalRow, Plan};
use crate::store::{OUTBOX_CONNECTIONS, SqlStore, write_connections};
use crate::writer::{self, Writer};
use ferry_proto::TaskState;
use ferry_store::{ListQuery, Page, Queued, StoreFuture, StoredEvent, StoredTask, TaskKey};
use sqlx::migrate::Migrator;
use sqlx::sqlite::{
    SqliteArguments, SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePoolOptions,
    SqliteQueryResult, SqliteSynchronous,
};
use sqlx::{ConnectOptions, Connection, Executor, Row, Sqlite};
use std::path::Path;
use std::sync::Arc;

/// The schema, embedded: applied when a store opens (a new file gets all of it, an older one
/// what it lacks).
static MIGRATOR: Migrator = sqlx::migrate!("migrations/sqlite");

impl Dialect for Sqlite {
    const ENGINE: &'static str = "sqlite";
    const LANES: usize = 1;
    // IMMEDIATE takes the write lock at BEGIN, where the busy timeout can wait for it; a
    // deferred transaction upgrading later could fail at once instead.
    const BEGIN_WRITE: &'static str = "BEGIN IMMEDIATE";
    // BEGIN IMMEDIATE takes the database's write lock.
    const LOCK_PROFILE_OWNER: Option<&'static str> = None;
    const LOCK_TASK: &'static str = "SELECT 1 FROM tasks WHERE tenant = $1 AND id = $2";
    const EXPIRE: &'static str =
        "DELETE FROM tasks WHERE expires_ms IS NOT NULL AND expires_ms <= $1 RETURNING tenant, id";
    const SKIP_LOCKED: &'static str = "";
    const ADD_DELIVERIES: &'static str = "INSERT INTO push_deliveries (id, tenant, task_id, config_id, seq) \
         SELECT lower(hex(randomblob(16))), tenant, task_id, id, $3 FROM push_configs \
         WHERE tenant = $1 AND task_id = $2";

    fn rows_affected(result: &SqliteQueryResult) -> u64 {
        result.rows_affected()
    }

    // Both steps are one call to the driver each (several statements in one string): a
    // call is a round trip to the connection's worker thread, and those, not SQLite, are what
    // a batch mostly waits for. No other connection can write between the two steps (this one
    // holds the write lock from BEGIN IMMEDIATE on), so the plan cannot go stale.
    fn begin_and_lock<'c>(
        conn: &'c mut SqliteConnection,
        keys: &'c [(&'c str, &'c str)],
    ) -> Batched<'c, Vec<Locked>> {
        Box::pin(async move {
            let mut sql = String::from("BEGIN IMMEDIATE;");
            for chunk in keys.chunks(ROWS_PER_STATEMENT) {
                sql.push_str(&format!(
                    " SELECT tenant, id, seq, EXISTS (SELECT 1 FROM push_configs p \
                     WHERE p.tenant = tasks.tenant AND p.task_id = tasks.id), lease_epoch \
                     FROM tasks WHERE (tenant, id) IN (VALUES {});",
                    rows(chunk.len(), 2)
                ));
            }
            let mut query = sqlx::query::<Sqlite>(&sql);
            for (tenant, id) in keys {
                query = query.bind(*tenant).bind(*id);
            }
            query
                .fetch_all(&mut *conn)
                .await?
                .iter()
                .map(|row| {
                    Ok(Locked {
                        tenant: row.try_get(0)?,
                        id: row.try_get(1)?,
                        seq: row.try_get(2)?,
                        may_push: row.try_get(3)?,
                        lease_epoch: row.try_get(4)?,
                    })
                })
                .collect()
        })
    }

    fn write_and_commit<'c>(
        conn: &'c mut SqliteConnection,
        plan: &'c Plan<'c>,
    ) -> Batched<'c, bool> {
        Box::pin(async move { write(conn, plan, "").await.map(|()| true) })
    }

    // The transaction is opened in the same call as the plan is written (one round trip to
    // the connection's worker, and no read of the tasks first). A task that exists already
    // (nobody else writes tasks, so only a creation the caller repeated) fails its insert:
    // then the transaction is rolled back and the batch planned again under the lock.
    fn write_new_alone<'c>(
        conn: &'c mut SqliteConnection,
        plan: &'c Plan<'c>,
    ) -> Option<Batched<'c, bool>> {
        Some(Box::pin(async move {
            match write(conn, plan, "BEGIN IMMEDIATE;").await {
                Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                    conn.execute("ROLLBACK").await?;
                    Ok(false)
                }
                written => written.map(|()| true),
            }
        }))
    }
}

/// Writes `plan` and commits, in one call: `opening` (the statement that opens the
/// transaction, or nothing when it is open), each insert, update and delete as multi-row
/// statements, then `COMMIT`.
async fn write<'c>(
    conn: &'c mut SqliteConnection,
    plan: &'c Plan<'c>,
    opening: &str,
) -> Result<(), sqlx::Error> {
    let mut sql = String::from(opening);
    for chunk in plan.inserts.chunks(ROWS_PER_STATEMENT) {
        sql.push_str(&format!(
            "INSERT INTO tasks (tenant, id, context_id, state, seq, status_ms, \
             expires_ms, snapshot, owner) VALUES {};",
            rows(chunk.len(), 9)
        ));
    }
    for chunk in plan.push_configs.chunks(ROWS_PER_STATEMENT) {
        sql.push_str(&format!(
            " INSERT INTO push_configs (tenant, task_id, id, config, created_ms) \
             VALUES {};",
            rows(chunk.len(), 5)
        ));
    }
    for chunk in plan.updates.chunks(ROWS_PER_STATEMENT) {
        sql.push_str(&format!(
            " WITH v (tenant, id, context_id, state, seq, status_ms, expires_ms, \
             snapshot) AS (VALUES {}) \
             UPDATE tasks SET context_id = v.context_id, state = v.state, seq = v.seq, \
             status_ms = v.status_ms, expires_ms = v.expires_ms, snapshot = v.snapshot \
             FROM v WHERE tasks.tenant = v.tenant AND tasks.id = v.id;",
            rows(chunk.len(), 8)
        ));
    }
    for chunk in plan.events.chunks(ROWS_PER_STATEMENT) {
        sql.push_str(&format!(
            " INSERT INTO events (tenant, task_id, seq, event) VALUES {};",
            rows(chunk.len(), 4)
        ));
    }
    let pushed: Vec<_> = plan.events.iter().filter(|e| e.push).collect();
    for chunk in pushed.chunks(ROWS_PER_STATEMENT) {
        sql.push_str(&format!(
            " INSERT INTO push_deliveries (id, tenant, task_id, config_id, seq) \
             SELECT lower(hex(randomblob(16))), c.tenant, c.task_id, c.id, v.column3 \
             FROM (VALUES {}) AS v JOIN push_configs c \
             ON c.tenant = v.column1 AND c.task_id = v.column2;",
            rows(chunk.len(), 3)
        ));
    }
    sql.push_str(" COMMIT;");
    let mut query = sqlx::query::<Sqlite>(&sql);
    for r in &plan.inserts {
        query = bind_row(query, r).bind(r.owner);
    }
    for c in &plan.push_configs {
        query = query
            .bind(c.tenant)
            .bind(c.id)
            .bind(c.config.id.as_str())
            .bind(&*c.config.config)
            .bind(i64::try_from(c.config.created_ms).unwrap_or(i64::MAX));
    }
    for r in &plan.updates {
        query = bind_row(query, r);
    }
    for e in &plan.events {
        query = query.bind(e.tenant).bind(e.id).bind(e.seq).bind(e.event);
    }
    for e in pushed {
        query = query.bind(e.tenant).bind(e.id).bind(e.seq);
    }
    query.execute(&mut *conn).await?;
    Ok(())
}

/// `n` rows of `columns` anonymous placeholders, for a multi-row `VALUES`: `(?, ?), (?, ?)`.
/// Anonymous, because the driver looks a named one up by name for every value, and counts
/// them on across the statements of one string, so each statement binds the next values.
fn rows(n: usize, columns: usize) -> String {
    let row = format!("({})", vec!["?"; columns].join(", "));
    vec![row; n].join(", ")
}

/// Prepared statements the writer's connection keeps: its batch statements differ by their
/// row counts.
const WRITER_STATEMENTS: usize = 1024;

/// The writer's page cache (negative: KiB), so that the pages every batch touches (the ends
/// of the indexes, the newest tasks) stay in memory instead of being read again.
const WRITER_CACHE: &str = "-65536";

/// WAL pages at which a commit checkpoints itself (SQLite's default is 1000): the backstop
/// for when the checkpointer (see `crate::checkpoint`) falls behind, about 40 MB of WAL.
const CHECKPOINT_PAGES: &str = "10000";

/// Rows per multi-row statement: with 8 values a row, far below SQLite's limit of 32 766
/// bound values per statement, whatever `max_batch` is.
const ROWS_PER_STATEMENT: usize = 500;

type SqliteQuery<'q> = sqlx::query::Query<'q, Sqlite, SqliteArguments<'q>>;

/// Binds the 8 columns of a task row, in table order.
fn bind_row<'q>(query: SqliteQuery<'q>, r: &'q FinalRow<'q>) -> SqliteQuery<'q> {
    query
        .bind(r.row.tenant.as_str())
        .bind(&*r.row.id)
        .bind(&*r.row.context_id)
        .bind(r.row.state)
        .bind(r.seq)
        .bind(r.row.status_ms)
        .bind(r.row.expires_ms)
        .bind(r.snapshot.as_str())
}

/// A [`TaskStore`] in an SQLite file (embedded: no server, one process).
///
/// Writes go through one writer task that commits them in batches; reads use a pool of their
/// own. Dropping the store stops the writer once the writes queued before are committed.
#[derive(Debug)]
pub struct SqliteStore {
    inner: SqlStore<Sqlite>,
    /// How many checkpoints the checkpointer ran (the tests wait on it).
    #[cfg_attr(not(test), expect(dead_code))]
    checkpointed: tokio::sync::watch::Receiver<u64>,
}

impl SqliteStore {
    /// Opens (creating it if missing) the database file at `path` and brings its schema up to
    /// date. The directory must exist. An in-memory database (`:memory:`) is refused: it
    /// would be one database per connection; use `ferry_store::MemoryStore` instead.
    ///
    /// Must be called within a tokio runtime (the writer task is spawned on it).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use ferry_store::TaskStore;
    /// use ferry_store_sql::{SqliteStore, StoreOptions};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let store = SqliteStore::open(dir.path().join("tasks.db"), &StoreOptions::default()).await?;
    /// assert!(store.unfinished().await?.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn open(
        path: impl AsRef<Path>,
        options: &StoreOptions,
    ) -> Result<SqliteStore, OpenError> {
        let path = path.as_ref();
        let shown = path.display().to_string();
        let refuse = |reason: String| OpenError::Sqlite {
            path: shown.clone(),
            reason,
        };
        if path.as_os_str().is_empty() {
            return Err(refuse("no file path given".to_owned()));
        }
        if path == Path::new(":memory:") {
            return Err(refuse(
                "an in-memory database cannot hold a store (use the memory store)".to_owned(),
            ));
        }
        let parent = path.parent().filter(|d| !d.as_os_str().is_empty());
        if let Some(dir) = parent.filter(|d| !d.is_dir()) {
            return Err(refuse(format!(
                "its directory {} does not exist",
                dir.display()
            )));
        }
        let connect = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            .busy_timeout(options.timeout)
            // The checkpointer copies the WAL; SQLite's own checkpoint in a commit (which
            // every connection that writes would start past 1000 pages) is the backstop.
            .pragma("wal_autocheckpoint", CHECKPOINT_PAGES)
            // Statement journals (a multi-row statement's undo log inside a transaction) in
            // memory, not in temporary files: they never need to survive a crash.
            .pragma("temp_store", "memory");

        // The first connection creates the file, turns on WAL (kept in the file) and migrates.
        let mut first = match tokio::time::timeout(options.timeout, connect.connect()).await {
            Ok(Ok(conn)) => conn,
            Ok(Err(e)) => return Err(refuse(describe(&e, options.timeout))),
            Err(_) => {
                return Err(refuse(format!(
                    "no answer within {}",
                    seconds(options.timeout)
                )));
            }
        };
        let migrated = tokio::time::timeout(options.statement_timeout, MIGRATOR.run(&mut first));
        let failure = match migrated.await {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(describe_migration(&e, options.timeout)),
            Err(_) => Some(format!(
                "not done within {}",
                seconds(options.statement_timeout)
            )),
        };
        // Closing only ends this connection; the pools open their own.
        let _ = first.close().await;
        if let Some(reason) = failure {
            return Err(OpenError::Migrate {
                store: shown,
                reason,
            });
        }

        // The writer's connection keeps the multi-row statements of every batch size.
        let writes = SqlitePoolOptions::new()
            .max_connections(write_connections::<Sqlite>())
            .acquire_timeout(options.timeout)
            .connect_lazy_with(
                connect
                    .clone()
                    .statement_cache_capacity(WRITER_STATEMENTS)
                    .pragma("cache_size", WRITER_CACHE),
            );
        let outbox = SqlitePoolOptions::new()
            .max_connections(OUTBOX_CONNECTIONS)
            .acquire_timeout(options.timeout)
            .connect_lazy_with(connect.clone().synchronous(SqliteSynchronous::Normal));
        let checkpoints = SqlitePoolOptions::new()
            .max_connections(1)
            .acquire_timeout(options.timeout)
            .connect_lazy_with(connect.clone());
        let reads = SqlitePoolOptions::new()
            .max_connections(options.read_connections.max(1))
            .acquire_timeout(options.timeout)
            .connect_lazy_with(connect);
        let (writes_queue, queue) = writer::channel(options.max_batch);
        let turn = crate::turn::WriteTurn::default();
        let (committed, commits) = tokio::sync::watch::channel(0);
        let (done, checkpointed) = tokio::sync::watch::channel(0);
        tokio::spawn(
            Writer {
                pool: writes.clone(),
                max_batch: options.max_batch,
                statement_timeout: options.statement_timeout,
                acquire_timeout: options.timeout,
                turn: Some(turn.clone()),
                announce: None,
                committed: Some(committed),
            }
            .run(queue),
        );
        tokio::spawn(
            Checkpointer {
                pool: checkpoints,
                turn: turn.clone(),
                commits,
                timeout: options.timeout,
                done,
            }
            .run(),
        );
        Ok(SqliteStore {
            checkpointed,
            inner: SqlStore {
                reads,
                writes,
                outbox,
                write_turn: Some(turn),
                writer: writes_queue,
                statement_timeout: options.statement_timeout,
                acquire_timeout: options.timeout,
            },
        })
    }
}

crate::store::delegate_task_store!(SqliteStore);
crate::profiles::delegate_profile_store!(SqliteStore);
crate::outbox::delegate_push_store!(SqliteStore);
crate::push::delegate_push_config_store!(SqliteStore);

/// One process owns a SQLite database (its write lock is the file's).
impl crate::store::Shared for SqliteStore {
    fn replicas(&self) -> Option<&dyn ferry_store::replicas::ReplicaStore> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_store::{StoreError, TaskStore as _};

    /// Writes the writer does not batch wait for the writers' turn, not for SQLite's lock:
    /// while the turn is held (as the writer holds it for a batch) they do not write, and
    /// they do once it is free. Were they to meet the writer at the lock, they would write
    /// here at once, as nothing holds the lock.
    #[tokio::test]
    async fn writes_outside_the_writer_take_the_writers_turn() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut store = SqliteStore::open(dir.path().join("turn.db"), &StoreOptions::default())
            .await
            .expect("the store opens");
        let turn = store
            .inner
            .write_turn
            .clone()
            .expect("SQLite has a writers' turn");
        let key = TaskKey::new("", "no-such-task");

        // How long a write waits for the turn; the pools keep their own timeouts, so only
        // the wait for the turn can run out here.
        let patient = store.inner.acquire_timeout;
        store.inner.acquire_timeout = std::time::Duration::from_millis(50);
        let held = turn.take(patient).await.expect("the turn is free");
        let inner = &store.inner;
        let refused = |result: Result<(), StoreError>| match result {
            Err(StoreError::Unavailable(reason)) => assert!(
                reason.contains("no turn to write"),
                "waited for something else: {reason}"
            ),
            other => panic!("wrote while the writers' turn was held: {other:?}"),
        };
        refused(inner.expire(0).await.map(drop));
        refused(inner.delete_push_config(&key, "c").await.map(drop));
        refused(inner.redeliver(&key, "d").await.map(drop));
        drop(held);

        store.inner.acquire_timeout = patient;
        let inner = &store.inner;
        assert_eq!(inner.expire(0).await, Ok(Vec::new()));
        assert_eq!(inner.delete_push_config(&key, "c").await, Ok(false));
        assert_eq!(inner.redeliver(&key, "d").await, Ok(false));
    }

    /// Each listing page is read in order from a listing index, latest first, without
    /// sorting what it selects: the indexes hold the oldest first (new tasks go in at their
    /// end), and the page reads one backwards. A listing for an owner reads the owner
    /// listing index twice (the owner's tasks, the unowned ones), each read a page at most,
    /// and sorts only those two pages to merge them; it never reads other callers' tasks.
    #[tokio::test]
    async fn a_listing_page_reads_a_listing_index_backwards_without_sorting() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = SqliteStore::open(dir.path().join("plan.db"), &StoreOptions::default())
            .await
            .expect("the store opens");
        let later = |mut query: ListQuery| {
            query.page_token = Some("300:task-9".to_owned());
            query
        };
        let owned = |mut query: ListQuery| {
            query.owner = Some("alice".to_owned());
            query
        };
        let mut conn = store.inner.reads.acquire().await.expect("a connection");
        let mut plan_of = async |query: &ListQuery| {
            let (sql, binds) = crate::store::page_statement(query).expect("a statement");
            let explain = format!("EXPLAIN QUERY PLAN {sql}");
            let plan: Vec<String> = crate::store::bind_all(sqlx::query(&explain), &binds)
                .fetch_all(&mut *conn)
                .await
                .expect("a plan")
                .iter()
                .map(|row| row.get::<String, _>(3))
                .collect();
            plan.join("; ")
        };
        for query in [ListQuery::all("t", 50), later(ListQuery::all("t", 50))] {
            let plan = plan_of(&query).await;
            assert!(
                plan.contains("INDEX tasks_listing") && !plan.contains("TEMP B-TREE"),
                "{query:?}: {plan}"
            );
        }
        for query in [
            owned(ListQuery::all("t", 50)),
            later(owned(ListQuery::all("t", 50))),
        ] {
            let plan = plan_of(&query).await;
            let owner_reads = plan
                .matches("INDEX tasks_owner_listing (tenant=? AND owner=?")
                .count();
            assert!(
                owner_reads == 2 && !plan.contains("tasks_listing") && !plan.contains("SCAN tasks"),
                "{query:?}: {plan}"
            );
        }
    }

    /// The checkpointer copies what the writer committed into the database file: after one
    /// write, far less than the WAL size at which a commit checkpoints itself, the file holds
    /// the task. Without it the task would stay in the WAL until that size.
    #[tokio::test]
    async fn the_checkpointer_copies_the_writers_commits_into_the_database_file() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("checkpoint.db");
        let store = SqliteStore::open(&path, &StoreOptions::default())
            .await
            .expect("the store opens");
        let file_size = || std::fs::metadata(&path).expect("the database file").len();
        let mut checkpointed = store.checkpointed.clone();
        let migrated = file_size();

        let task = ferry_store::conformance::task("", "t-1", "c-1", TaskState::Working, 1);
        let mut wide = task.clone();
        let history = (0..64).map(|i| {
            let text = ferry_proto::Part::text("x".repeat(1024));
            Arc::new(ferry_proto::Message::user(format!("m-{i}"), vec![text]))
        });
        Arc::make_mut(&mut wide.task).history = history.collect();
        store.create(wide).await.expect("the task is written");
        checkpointed
            .wait_for(|done| *done >= 1)
            .await
            .expect("the checkpointer runs");

        assert!(
            file_size() >= migrated + 64 * 1024,
            "the task's pages are in the database file ({migrated} bytes before, {} after)",
            file_size()
        );
        assert_eq!(store.get(&task.key()).await.map(|t| t.is_some()), Ok(true));
    }

    #[test]
    fn rows_of_placeholders() {
        assert_eq!(rows(2, 2), "(?, ?), (?, ?)");
        assert_eq!(rows(1, 3), "(?, ?, ?)");
    }
}
