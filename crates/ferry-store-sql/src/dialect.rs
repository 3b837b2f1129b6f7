//! What differs between the databases: the statements of a write batch and their few
//! constants, implemented by SQLite and PostgreSQL.

use crate::plan::Plan;
use sqlx::Database;

/// What differs between the databases.
pub(crate) trait Dialect: Database + sqlx::database::HasStatementCache {
    /// The name messages give ("sqlite", "postgresql").
    const ENGINE: &'static str;
    /// Write batches in flight at once (see the writer).
    const LANES: usize;
    /// The statement that opens a write batch's transaction.
    const BEGIN_WRITE: &'static str;
    /// Deletes the tasks due at or before `$1`, with their events, and returns
    /// their `tenant, id`.
    const EXPIRE: &'static str;
    /// Run in the transaction that creates a profile, before the owner's profiles are
    /// counted: makes the creations of one owner (`$1` tenant, `$2` caller) wait for each
    /// other, so that no two count the same profiles. `None` when [`Dialect::BEGIN_WRITE`]
    /// serializes writers already.
    const LOCK_PROFILE_OWNER: Option<&'static str>;

    /// Reads the task `$1` tenant, `$2` id in a write transaction and holds it there until
    /// the transaction ends, so that the writers of one task's push configs wait for each
    /// other (no two count the same configs).
    const LOCK_TASK: &'static str;

    /// What a claim's select of outbox rows ends with: PostgreSQL locks the rows it picks and
    /// passes over rows another claim holds; SQLite's statement holds the write lock anyway.
    const SKIP_LOCKED: &'static str;

    /// Adds a pending delivery of the event `$3` of the task `$1` tenant, `$2` id to each of
    /// the task's push configs (a new id each).
    const ADD_DELIVERIES: &'static str;

    /// Run on each connection the writer takes, before its first batch: the session settings
    /// of a connection that only the writer uses.
    const WRITER_SESSION: Option<&'static str> = None;

    /// How many rows a statement changed.
    fn rows_affected(result: &Self::QueryResult) -> u64;

    /// Opens a write batch's transaction and reads those of the tasks `keys` (sorted,
    /// distinct) that exist, which stay locked until the transaction ends (PostgreSQL: row
    /// locks, taken in key order; SQLite: the database's write lock).
    fn begin_and_lock<'c>(
        conn: &'c mut Self::Connection,
        keys: &'c [(&'c str, &'c str)],
    ) -> Batched<'c, Vec<Locked>>;

    /// Writes `plan` in the transaction `begin_and_lock` opened and commits it; `false`, after
    /// rolling back, when the rows no longer match the plan (another process created one of
    /// its tasks meanwhile).
    fn write_and_commit<'c>(
        conn: &'c mut Self::Connection,
        plan: &'c Plan<'c>,
    ) -> Batched<'c, bool>;

    /// Writes `plan`, whose tasks are all new (every write is a creation, or follows one in
    /// the batch), as one statement that is its own transaction: no lock to take first, no
    /// commit to send after. `false` when it found the rows other than planned (another
    /// process created one of the tasks): then nothing of it was written. `None` when the
    /// database has no such statement (the batch is then written as any other).
    fn write_new_alone<'c>(
        _conn: &'c mut Self::Connection,
        _plan: &'c Plan<'c>,
    ) -> Option<Batched<'c, bool>> {
        None
    }

    /// Sends `payloads` on `channel` when the open transaction commits (see
    /// [`crate::notices`]). Only a database replicas share announces writes; the default
    /// sends nothing.
    fn notify<'c>(
        _conn: &'c mut Self::Connection,
        _channel: &'c str,
        _payloads: &'c [String],
    ) -> Batched<'c, ()> {
        Box::pin(async { Ok(()) })
    }
}

/// A statement of a write batch in progress (boxed: the trait's methods are implemented per
/// database).
pub(crate) type Batched<'c, T> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<T, sqlx::Error>> + Send + 'c>>;

/// A task a write batch found and locked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Locked {
    pub(crate) tenant: String,
    pub(crate) id: String,
    pub(crate) seq: i64,
    /// Its lease epoch (see `ferry_store::Lease`).
    pub(crate) lease_epoch: i64,
    /// Whether its events may go to push configs. SQLite knows: it holds the database's
    /// write lock, so no config can be added before the batch commits. PostgreSQL says true
    /// and lets the batch's write find the configs itself, in a statement that starts after
    /// the row locks are held (a config added meanwhile, holding the task's row, is seen).
    pub(crate) may_push: bool,
}
