//! The PostgreSQL store: tasks in a shared database, for one or several ferry processes.
//!
//! The URL is libpq's (`postgres://user:password@host:5432/database?sslmode=require`). A
//! schema other than the user's default is chosen the libpq way, with the connection's
//! `search_path`: `?options=-csearch_path%3Dferry` (or sqlx's `?options[search_path]=ferry`).
//! The schema must exist; the tables and sqlx's `_sqlx_migrations` are created in it.
//!
//! Every connection is opened with `statement_timeout` and
//! `idle_in_transaction_session_timeout` set to [`StoreOptions::statement_timeout`], so the
//! server ends a statement (or an abandoned transaction) that takes longer; the client bounds
//! each operation by the same time, in case the server is not answering at all.
//!
//! Migrations run at open under sqlx's advisory lock, so processes opening the same schema at
//! once apply them exactly once.

use crate::StoreOptions;
use crate::dialect::{Batched, Dialect, Locked};
use crate::error::{OpenError, Redacted, describe, describe_migration, seconds};
use crate::notices::{self, Announcer};
use crate::plan::{FinalRow, Plan, RowLease, lease_action};
use crate::store::{OUTBOX_CONNECTIONS, SqlStore, write_connections};
use crate::writer::{self, Writer};
use ferry_proto::TaskState;
use ferry_store::{Lease, ListQuery, Page, Queued, StoreFuture, StoredEvent, StoredTask, TaskKey};
use sqlx::migrate::Migrator;
use sqlx::postgres::{PgArguments, PgConnectOptions, PgConnection, PgPoolOptions, PgQueryResult};
use sqlx::{ConnectOptions, Connection, Executor, Postgres, Row};
use std::sync::Arc;

/// The schema, embedded: applied when a store opens.
static MIGRATOR: Migrator = sqlx::migrate!("migrations/postgres");

impl Dialect for Postgres {
    const ENGINE: &'static str = "postgresql";
    // One batch at a time: appends of one task are queued ahead of their commits
    // (`TaskStore::queue_append`), so a task's next write is often in the next batch, and a
    // second lane could read that task's sequence number before the first lane locked it.
    const LANES: usize = 1;
    const BEGIN_WRITE: &'static str = "BEGIN";
    // Every other connection plans every statement for its arguments (`force_custom_plan`,
    // see `open`). The writer's may cache the plan of [`WRITE_NEW`], which reads no table, so
    // no plan made while the tables were small can mislead it, and planning it was 14 % of
    // the database's work per batch. Each statement on it that reads a table is sent
    // unnamed instead (`persistent(false)`): PostgreSQL plans an unnamed statement for its
    // arguments every time, whatever the setting.
    const WRITER_SESSION: Option<&'static str> = Some("SET plan_cache_mode = auto");
    // A transaction-scoped advisory lock per owner (two 32-bit keys: the pair space is
    // apart from the single 64-bit keys sqlx's migrations lock). Under READ COMMITTED the
    // count after it sees every profile committed before it was granted.
    const LOCK_PROFILE_OWNER: Option<&'static str> =
        Some("SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))");
    const LOCK_TASK: &'static str = "SELECT 1 FROM tasks WHERE tenant = $1 AND id = $2 FOR UPDATE";
    // The rows are locked in key order, the order write batches lock them in (see the
    // writer), so that expiry and the writers of several replicas never deadlock.
    const EXPIRE: &'static str = "WITH gone AS ( \
           DELETE FROM tasks WHERE (tenant, id) IN \
             (SELECT tenant, id FROM tasks WHERE expires_ms <= $1 ORDER BY tenant, id FOR UPDATE) \
           RETURNING tenant, id \
         ), their_events AS ( \
           DELETE FROM events e USING gone g WHERE e.tenant = g.tenant AND e.task_id = g.id \
         ), their_push_configs AS ( \
           DELETE FROM push_configs p USING gone g WHERE p.tenant = g.tenant AND p.task_id = g.id \
         ), their_deliveries AS ( \
           DELETE FROM push_deliveries d USING gone g \
           WHERE d.tenant = g.tenant AND d.task_id = g.id \
         ), remembered_requests AS ( \
           DELETE FROM requests WHERE expires_ms <= $1 \
         ) \
         SELECT tenant, id FROM gone";

    const SKIP_LOCKED: &'static str = " FOR UPDATE SKIP LOCKED";
    const ADD_DELIVERIES: &'static str = "INSERT INTO push_deliveries (id, tenant, task_id, config_id, seq) \
         SELECT replace(gen_random_uuid()::text, '-', ''), tenant, task_id, id, $3 \
         FROM push_configs WHERE tenant = $1 AND task_id = $2";

    fn notify<'c>(
        conn: &'c mut PgConnection,
        channel: &'c str,
        payloads: &'c [String],
    ) -> Batched<'c, ()> {
        Box::pin(async move {
            sqlx::query::<Postgres>(concat!(
                "SELECT pg_notify($1, ",
                notices::sent_at!(),
                "p) FROM unnest($2::text[]) AS p"
            ))
            .bind(channel)
            .bind(payloads)
            .execute(&mut *conn)
            .await?;
            Ok(())
        })
    }

    fn rows_affected(result: &PgQueryResult) -> u64 {
        result.rows_affected()
    }

    fn begin_and_lock<'c>(
        conn: &'c mut PgConnection,
        keys: &'c [(&'c str, &'c str)],
    ) -> Batched<'c, Vec<Locked>> {
        Box::pin(async move {
            conn.execute("BEGIN").await?;
            let (tenants, ids): (Vec<&str>, Vec<&str>) = keys.iter().copied().unzip();
            let rows = sqlx::query::<Postgres>(
                "SELECT t.tenant, t.id, t.seq, t.lease_epoch FROM tasks t \
                 JOIN unnest($1::text[], $2::text[]) AS k (tenant, id) \
                 ON t.tenant = k.tenant AND t.id = k.id \
                 ORDER BY t.tenant, t.id FOR UPDATE OF t",
            )
            .persistent(false)
            .bind(tenants)
            .bind(ids)
            .fetch_all(&mut *conn)
            .await?;
            rows.iter()
                .map(|row| {
                    Ok(Locked {
                        tenant: row.try_get(0)?,
                        id: row.try_get(1)?,
                        seq: row.try_get(2)?,
                        lease_epoch: row.try_get(3)?,
                        may_push: true,
                    })
                })
                .collect()
        })
    }

    fn write_and_commit<'c>(conn: &'c mut PgConnection, plan: &'c Plan<'c>) -> Batched<'c, bool> {
        Box::pin(async move {
            if write(conn, plan).await? {
                conn.execute("COMMIT").await?;
                Ok(true)
            } else {
                conn.execute("ROLLBACK").await?;
                Ok(false)
            }
        })
    }

    // The plan's statement is one transaction by itself: nothing to open, lock or commit,
    // so the batch costs one round trip. New tasks need no lock, as nobody else can write
    // them (or add push configs to them) before they exist.
    fn write_new_alone<'c>(
        conn: &'c mut PgConnection,
        plan: &'c Plan<'c>,
    ) -> Option<Batched<'c, bool>> {
        Some(Box::pin(write(conn, plan)))
    }
}

/// SQLSTATE of `ferry_plan_holds` (migration 0012): the rows no longer match the plan.
const PLAN_STALE: &str = "FYPLN";

/// The part of a batch's statement that new tasks need: insert them (`$1`–`$12`), insert
/// the events (`$13`–`$16`) if every task was inserted (`$17` of them), and announce them
/// (`$18` channel, `$19` payloads). `$20` is the number of events.
macro_rules! new_tasks {
    () => {
        "WITH inserted AS ( \
           INSERT INTO tasks (tenant, id, context_id, state, seq, status_ms, expires_ms, \
             snapshot, owner, lease_replica, lease_epoch, lease_until_ms) \
           SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], \
             $5::int8[], $6::int8[], $7::int8[], $8::text[], $9::text[], $10::text[], \
             $11::int8[], $12::int8[]) \
           ON CONFLICT (tenant, id) DO NOTHING RETURNING 1 \
         ), appended AS ( \
           INSERT INTO events (tenant, task_id, seq, event) \
           SELECT * FROM unnest($13::text[], $14::text[], $15::int8[], $16::text[]) \
           WHERE (SELECT count(*) FROM inserted) = $17 \
           RETURNING 1 \
         ), notified AS ( \
           SELECT pg_notify($18, "
    };
}

/// A batch of new tasks without push configs (turns that complete at once): the statement
/// plans in a fraction of the time of [`WRITE_ANY`], and planning is a large part of the
/// database's work per batch (every statement is planned for its arguments).
const WRITE_NEW: &str = concat!(
    new_tasks!(),
    notices::sent_at!(),
    "p) FROM unnest($19::text[]) AS p \
       WHERE $18 IS NOT NULL AND (SELECT count(*) FROM inserted) = $17 \
     ) \
     SELECT ferry_plan_holds((SELECT count(*) FROM inserted) = $17 \
       AND (SELECT count(*) FROM appended) = $20), \
       (SELECT count(*) FROM notified)",
);

/// Any batch: [`WRITE_NEW`], and the updates of stored tasks (`$21`–`$30`, `$31` of them),
/// the push configs new tasks arrive with (`$32`–`$36`), and a pending delivery of each
/// event to each push config of its task.
const WRITE_ANY: &str = concat!(
    new_tasks!(),
    notices::sent_at!(),
    "p) FROM unnest($19::text[]) AS p \
       WHERE $18 IS NOT NULL AND (SELECT count(*) FROM inserted) = $17 \
     ), updated AS ( \
       UPDATE tasks t SET context_id = v.context_id, state = v.state, seq = v.seq, \
         status_ms = v.status_ms, expires_ms = v.expires_ms, snapshot = v.snapshot, \
         lease_replica = CASE v.lease_action WHEN 2 THEN NULL \
           ELSE t.lease_replica END, \
         lease_epoch = CASE v.lease_action WHEN 2 THEN t.lease_epoch + 1 \
           ELSE t.lease_epoch END, \
         lease_until_ms = CASE v.lease_action WHEN 2 THEN NULL \
           WHEN 1 THEN v.lease_until_ms ELSE t.lease_until_ms END \
       FROM unnest($21::text[], $22::text[], $23::text[], $24::text[], \
         $25::int8[], $26::int8[], $27::int8[], $28::text[], $29::int8[], $30::int8[]) \
         AS v (tenant, id, context_id, state, seq, status_ms, expires_ms, snapshot, \
           lease_until_ms, lease_action) \
       WHERE t.tenant = v.tenant AND t.id = v.id \
         AND (SELECT count(*) FROM inserted) = $17 \
       RETURNING 1 \
     ), configured AS ( \
       INSERT INTO push_configs (tenant, task_id, id, config, created_ms) \
       SELECT * FROM unnest($32::text[], $33::text[], $34::text[], $35::text[], \
         $36::int8[]) \
       WHERE (SELECT count(*) FROM inserted) = $17 \
       RETURNING tenant, task_id, id \
     ), delivered AS ( \
       INSERT INTO push_deliveries (id, tenant, task_id, config_id, seq) \
       SELECT replace(gen_random_uuid()::text, '-', ''), c.tenant, c.task_id, c.id, v.seq \
       FROM unnest($13::text[], $14::text[], $15::int8[]) AS v (tenant, task_id, seq) \
       JOIN (SELECT tenant, task_id, id FROM push_configs \
             UNION ALL SELECT tenant, task_id, id FROM configured) c \
         ON c.tenant = v.tenant AND c.task_id = v.task_id \
       WHERE (SELECT count(*) FROM inserted) = $17 \
     ) \
     SELECT ferry_plan_holds((SELECT count(*) FROM inserted) = $17 \
       AND (SELECT count(*) FROM updated) = $31 \
       AND (SELECT count(*) FROM appended) = $20), \
       (SELECT count(*) FROM notified)",
);

/// Writes `plan` with one statement, whatever its size (arrays, prepared once); `false` when
/// the rows no longer match the plan, and then the statement failed whole (its transaction
/// must be rolled back, or was, if it was the statement's own).
///
/// The tasks a locked batch found are locked, so their updates cannot miss; a new task can
/// still have been created by another process since the plan was made: then the insert
/// skips it, the guards keep the rest from being written, and the last line,
/// `ferry_plan_holds`, fails the statement.
async fn write<'c>(conn: &'c mut PgConnection, plan: &'c Plan<'c>) -> Result<bool, sqlx::Error> {
    let written = if plan.updates.is_empty() && plan.push_configs.is_empty() {
        bind_new(sqlx::query(WRITE_NEW), plan)
            .execute(&mut *conn)
            .await
    } else {
        bind_rest(
            bind_new(sqlx::query(WRITE_ANY).persistent(false), plan),
            plan,
        )
        .execute(&mut *conn)
        .await
    };
    match written {
        Ok(_) => Ok(true),
        Err(sqlx::Error::Database(e)) if e.code().as_deref() == Some(PLAN_STALE) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Binds `$1`–`$20` (see [`new_tasks`]).
fn bind_new<'q>(query: PgQuery<'q>, plan: &'q Plan<'q>) -> PgQuery<'q> {
    let inserts = &plan.inserts;
    let leases = || inserts.iter().map(|r| r.row.lease.as_ref());
    let events = &plan.events;
    bind_columns(query, inserts)
        .bind(inserts.iter().map(|r| r.owner).collect::<Vec<_>>())
        .bind(
            leases()
                .map(|l| l.and_then(RowLease::holder_after))
                .collect::<Vec<_>>(),
        )
        .bind(
            leases()
                .map(|l| l.map_or(0, RowLease::epoch_after))
                .collect::<Vec<_>>(),
        )
        .bind(
            leases()
                .map(|l| l.and_then(RowLease::until_after))
                .collect::<Vec<_>>(),
        )
        .bind(events.iter().map(|e| e.tenant).collect::<Vec<_>>())
        .bind(events.iter().map(|e| e.id).collect::<Vec<_>>())
        .bind(events.iter().map(|e| e.seq).collect::<Vec<_>>())
        .bind(events.iter().map(|e| e.event).collect::<Vec<_>>())
        .bind(len(inserts.len()))
        .bind(plan.channel)
        .bind(&plan.notices)
        .bind(len(events.len()))
}

/// Binds `$21`–`$36` of [`WRITE_ANY`].
fn bind_rest<'q>(query: PgQuery<'q>, plan: &'q Plan<'q>) -> PgQuery<'q> {
    let updates = &plan.updates;
    let leases = || updates.iter().map(|r| r.row.lease.as_ref());
    let configs = &plan.push_configs;
    bind_columns(query, updates)
        .bind(leases().map(|l| l.map(|l| l.until_ms)).collect::<Vec<_>>())
        .bind(leases().map(lease_action).collect::<Vec<_>>())
        .bind(len(updates.len()))
        .bind(configs.iter().map(|c| c.tenant).collect::<Vec<_>>())
        .bind(configs.iter().map(|c| c.id).collect::<Vec<_>>())
        .bind(
            configs
                .iter()
                .map(|c| c.config.id.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(
            configs
                .iter()
                .map(|c| &*c.config.config)
                .collect::<Vec<_>>(),
        )
        .bind(
            configs
                .iter()
                .map(|c| i64::try_from(c.config.created_ms).unwrap_or(i64::MAX))
                .collect::<Vec<_>>(),
        )
}

/// A count as PostgreSQL's `count(*)` gives it.
fn len(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

type PgQuery<'q> = sqlx::query::Query<'q, Postgres, PgArguments>;

/// Binds the 8 columns of task rows as 8 arrays, in table order: one statement for any
/// number of rows, prepared once.
fn bind_columns<'q>(query: PgQuery<'q>, rows: &'q [FinalRow<'q>]) -> PgQuery<'q> {
    query
        .bind(
            rows.iter()
                .map(|r| r.row.tenant.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(rows.iter().map(|r| &*r.row.id).collect::<Vec<_>>())
        .bind(rows.iter().map(|r| &*r.row.context_id).collect::<Vec<_>>())
        .bind(rows.iter().map(|r| r.row.state).collect::<Vec<_>>())
        .bind(rows.iter().map(|r| r.seq).collect::<Vec<_>>())
        .bind(rows.iter().map(|r| r.row.status_ms).collect::<Vec<_>>())
        .bind(rows.iter().map(|r| r.row.expires_ms).collect::<Vec<_>>())
        .bind(rows.iter().map(|r| r.snapshot.as_str()).collect::<Vec<_>>())
}

/// A [`TaskStore`] in a PostgreSQL database (shared: several ferry processes may use one).
///
/// Writes go through one writer task per store that commits them in batches; reads use a pool
/// of their own. Dropping the store stops the writer once the writes queued before are
/// committed.
#[derive(Debug)]
pub struct PostgresStore {
    inner: SqlStore<Postgres>,
    /// The pool of the one connection that listens for other replicas' writes.
    listens: sqlx::PgPool,
    /// This replica's id and its schema's channel.
    announcer: Announcer,
}

impl ferry_store::replicas::ReplicaStore for PostgresStore {
    fn replica_id(&self) -> &str {
        &self.announcer.replica
    }

    fn notices(&self) -> ferry_store::replicas::Notices {
        notices::listen(
            self.listens.clone(),
            self.announcer.channel.clone(),
            self.announcer.replica.clone(),
        )
    }

    fn take_lease(&self, key: &TaskKey, until_ms: u64) -> StoreFuture<'_, Option<Lease>> {
        let key = key.clone();
        Box::pin(async move {
            self.inner
                .take_lease(&self.announcer.replica, &key, until_ms)
                .await
        })
    }

    fn request_cancel(&self, key: &TaskKey) -> StoreFuture<'_, Option<String>> {
        let key = key.clone();
        Box::pin(async move { self.inner.request_cancel(&self.announcer, &key).await })
    }

    fn cancels_requested(&self) -> StoreFuture<'_, Vec<TaskKey>> {
        Box::pin(self.inner.cancels_requested(&self.announcer.replica))
    }

    fn remember_request(
        &self,
        caller: &str,
        message_id: &str,
        content: &str,
        now_ms: u64,
        expires_ms: u64,
    ) -> StoreFuture<'_, ferry_store::replicas::Remembered> {
        let (caller, message_id, content) =
            (caller.to_owned(), message_id.to_owned(), content.to_owned());
        Box::pin(async move {
            self.inner
                .remember_request(&caller, &message_id, &content, now_ms, expires_ms)
                .await
        })
    }

    fn answer_request(&self, caller: &str, message_id: &str, answer: &str) -> StoreFuture<'_, ()> {
        let (caller, message_id, answer) =
            (caller.to_owned(), message_id.to_owned(), answer.to_owned());
        Box::pin(async move {
            self.inner
                .answer_request(&caller, &message_id, &answer)
                .await
        })
    }

    fn forget_request(&self, caller: &str, message_id: &str) -> StoreFuture<'_, ()> {
        let (caller, message_id) = (caller.to_owned(), message_id.to_owned());
        Box::pin(async move { self.inner.forget_request(&caller, &message_id).await })
    }

    fn announce(&self, url: &str, now_ms: u64) -> StoreFuture<'_, ()> {
        let url = url.to_owned();
        Box::pin(async move {
            self.inner
                .announce(&self.announcer.replica, &url, now_ms)
                .await
        })
    }

    fn claim(
        &self,
        key: &str,
        now_ms: u64,
        live_since_ms: u64,
    ) -> StoreFuture<'_, ferry_store::replicas::Claim> {
        let key = key.to_owned();
        Box::pin(async move {
            self.inner
                .claim(&self.announcer.replica, &key, now_ms, live_since_ms)
                .await
        })
    }

    fn fenced_writes(&self) -> u64 {
        self.announcer
            .fenced
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    fn release_lease(&self, key: &TaskKey, epoch: u64) -> StoreFuture<'_, ()> {
        let key = key.clone();
        Box::pin(async move { self.inner.release_lease(&key, epoch).await })
    }

    fn renew_leases(&self, now_ms: u64, until_ms: u64) -> StoreFuture<'_, u64> {
        Box::pin(
            self.inner
                .renew_leases(&self.announcer.replica, now_ms, until_ms),
        )
    }

    fn take_expired(
        &self,
        now_ms: u64,
        until_ms: u64,
        limit: usize,
    ) -> StoreFuture<'_, Vec<(TaskKey, Lease)>> {
        Box::pin(
            self.inner
                .take_expired(&self.announcer.replica, now_ms, until_ms, limit),
        )
    }
}

impl PostgresStore {
    /// Connects to the database at `url` (`postgres://` or `postgresql://`), checks that it
    /// answers within [`StoreOptions::timeout`], and brings the schema up to date. Errors
    /// name the URL without its password.
    ///
    /// Must be called within a tokio runtime (the writer task is spawned on it).
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use ferry_store_sql::{PostgresStore, StoreOptions};
    ///
    /// let url = "postgres://ferry@127.0.0.1:5432/ferry?options=-csearch_path%3Dferry";
    /// let store = PostgresStore::open(url, &StoreOptions::default()).await?;
    /// # drop(store);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn open(url: &str, options: &StoreOptions) -> Result<PostgresStore, OpenError> {
        let parsed = url::Url::parse(url).map_err(|e| OpenError::InvalidUrl {
            // An unparsed URL cannot be redacted: show none of it.
            url: "postgres://…".to_owned(),
            reason: e.to_string(),
        })?;
        let redacted = Redacted::new(&parsed);
        let mut connect =
            PgConnectOptions::from_url(&parsed).map_err(|e| OpenError::InvalidUrl {
                url: redacted.url.clone(),
                reason: redacted.scrub(describe(&e, options.timeout)),
            })?;
        if connect.get_application_name().is_none() {
            connect = connect.application_name("ferry");
        }
        let limit = options.statement_timeout.as_millis().to_string();
        // Every statement is planned for its own arguments (`force_custom_plan`): a plan
        // cached while the tables were small (a new schema, before autovacuum analyzed it)
        // would scan them whole for as long as the connection lives, and a batch's arrays
        // are a different size every time.
        let connect = connect.options([
            ("statement_timeout", limit.as_str()),
            ("idle_in_transaction_session_timeout", limit.as_str()),
            ("plan_cache_mode", "force_custom_plan"),
        ]);
        let unreachable = |reason: String| OpenError::Connect {
            url: redacted.url.clone(),
            reason: redacted.scrub(reason),
        };

        // One connection first: a clear error if the server cannot be reached (the pool
        // would retry a refused connection until its timeout and then only say it timed out).
        let mut first = match tokio::time::timeout(options.timeout, connect.connect()).await {
            Ok(Ok(conn)) => conn,
            Ok(Err(e)) => return Err(unreachable(describe(&e, options.timeout))),
            Err(_) => {
                return Err(unreachable(format!(
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
        let schema = match failure {
            Some(_) => None,
            None => sqlx::query_scalar::<Postgres, Option<String>>("SELECT current_schema()")
                .fetch_one(&mut first)
                .await
                .map_err(|e| unreachable(describe(&e, options.timeout)))?,
        };
        let _ = first.close().await;
        if let Some(reason) = failure {
            return Err(OpenError::Migrate {
                store: redacted.url.clone(),
                reason: redacted.scrub(reason),
            });
        }

        let writes = PgPoolOptions::new()
            .max_connections(write_connections::<Postgres>())
            .acquire_timeout(options.timeout)
            .connect_lazy_with(connect.clone());
        let outbox = PgPoolOptions::new()
            .max_connections(OUTBOX_CONNECTIONS)
            .acquire_timeout(options.timeout)
            .connect_lazy_with(connect.clone().options([("synchronous_commit", "off")]));
        let reads = PgPoolOptions::new()
            .max_connections(options.read_connections.max(1))
            .acquire_timeout(options.timeout)
            .connect_lazy_with(connect.clone());
        // One connection, held by the listener for as long as it listens.
        let listens = PgPoolOptions::new()
            .max_connections(1)
            .acquire_timeout(options.timeout)
            .connect_lazy_with(connect);
        let announcer = Announcer {
            channel: notices::channel(schema.as_deref().unwrap_or_default()).into(),
            replica: uuid::Uuid::now_v7().simple().to_string().into(),
            fenced: Default::default(),
        };
        let (writes_queue, queue) = writer::channel(options.max_batch);
        tokio::spawn(
            Writer {
                pool: writes.clone(),
                max_batch: options.max_batch,
                statement_timeout: options.statement_timeout,
                acquire_timeout: options.timeout,
                turn: None,
                announce: Some(announcer.clone()),
                committed: None,
            }
            .run(queue),
        );
        Ok(PostgresStore {
            listens,
            announcer,
            inner: SqlStore {
                reads,
                writes,
                outbox,
                write_turn: None,
                writer: writes_queue,
                statement_timeout: options.statement_timeout,
                acquire_timeout: options.timeout,
            },
        })
    }
}

crate::store::delegate_task_store!(PostgresStore);
crate::profiles::delegate_profile_store!(PostgresStore);
crate::outbox::delegate_push_store!(PostgresStore);
crate::push::delegate_push_config_store!(PostgresStore);

impl crate::store::Shared for PostgresStore {
    fn replicas(&self) -> Option<&dyn ferry_store::replicas::ReplicaStore> {
        Some(self)
    }
}
