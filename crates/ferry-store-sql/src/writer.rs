//! Group commit: every create and append of a store goes through one writer task, which
//! applies all the writes queued meanwhile in one transaction and commits once.
//!
//! A commit is the expensive part of a write (SQLite syncs its WAL, PostgreSQL its log), and
//! it costs about the same for one row as for a hundred. So callers put their write on a
//! channel with a oneshot for the answer; the writer takes every queued write (up to
//! `max_batch`), applies them in one transaction, commits, and only then answers each caller.
//! No write is acknowledged before the commit that holds it is durable.
//!
//! A batch is applied in a handful of statements whatever its size, because round trips (to
//! the server, or to SQLite's worker thread) are what a batch mostly waits for:
//!
//! 1. open the transaction and read the sequence numbers of every task the batch touches,
//!    locking them (PostgreSQL: `SELECT … FOR UPDATE`, in key order; SQLite: `BEGIN
//!    IMMEDIATE` holds the database's write lock);
//! 2. decide every write in the order it was queued, as if they ran one after the other: a
//!    create is refused if its task exists, an append if the task is missing or not at the
//!    sequence number it expects — so two appends to one task in one batch see each other;
//! 3. insert the new tasks, update each changed task once (with its last snapshot), insert
//!    the events, commit.
//!
//! A batch of new tasks only (each task's first write in it is its creation: the common
//! case, a turn that completes at once) needs no step 1: where the database can, it is
//! written by one statement that is its own transaction ([`Dialect::write_new_alone`]), and
//! only if that finds a task existing after all is the batch planned again from step 1.
//!
//! If step 3 finds the plan stale — on PostgreSQL another process may create a task this
//! batch also creates, between steps 1 and 3 — nothing of it is kept: the transaction is
//! rolled back and the batch applied again write by write (an append as `UPDATE … WHERE seq =
//! expected` then its event's `INSERT`, a create as `INSERT … ON CONFLICT DO NOTHING`).
//!
//! Rows are locked in key order, so PostgreSQL replicas sharing a database (and the writer's
//! own lanes, see [`Writer::run`]) never deadlock each other.
//!
//! A write that is refused (`Exists`, `Conflict`, `NotFound`) changes nothing and does not
//! fail its batch. When the transaction fails — a statement, the commit, the connection, or
//! the statement timeout — every write of the batch is answered `Unavailable`, the connection
//! is dropped, and the writer goes on with the next batch on a fresh one.

use crate::dialect::{Dialect, Locked};
use crate::error::{describe, seconds};
use crate::notices::Announcer;
use crate::plan::{FinalRow, NewEvent, NewPushConfig, Plan, RowLease, TaskRow, lease_action};
use crate::turn::WriteTurn;
use ferry_store::push::PushConfig;
use ferry_store::{Event, StoreError, text};
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use sqlx::pool::PoolConnection;
use sqlx::{Connection, Database, Encode, Executor, IntoArguments, Pool, Type};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot};

/// One queued write and where its answer goes.
#[derive(Debug)]
pub(crate) enum Write {
    /// Insert a new task, with the push configs it arrives with (a send's inline config).
    Create {
        row: TaskRow,
        push: Vec<PushConfig>,
        reply: oneshot::Sender<Result<(), StoreError>>,
    },
    /// Replace the snapshot of a task at `expected` and add event `expected + 1`.
    Append {
        row: TaskRow,
        expected: u64,
        /// The event, its ProtoJSON made (and shared with the server's streams).
        event: Arc<Event>,
        reply: oneshot::Sender<Result<u64, StoreError>>,
    },
}

impl Write {
    fn key(&self) -> (&str, &str) {
        match self {
            Write::Create { row, .. } | Write::Append { row, .. } => (&row.tenant, &*row.id),
        }
    }

    /// Sends `outcome` to the caller (who may have stopped waiting: then nobody hears it).
    fn answer(self, outcome: Result<u64, StoreError>) {
        match self {
            Write::Create { reply, .. } => {
                let _ = reply.send(outcome.map(|_| ()));
            }
            Write::Append { reply, .. } => {
                let _ = reply.send(outcome);
            }
        }
    }
}

/// The store's side of the writer: where writes are queued.
#[derive(Debug, Clone)]
pub(crate) struct Writes {
    queue: mpsc::Sender<Write>,
}

/// The writer's side: what it takes writes from.
#[derive(Debug)]
pub(crate) struct Queue(mpsc::Receiver<Write>);

/// Writes waiting per writer, in batches: beyond it callers wait to queue (backpressure).
const QUEUED_BATCHES: usize = 8;

/// A writer's channel for batches of at most `max_batch` writes.
pub(crate) fn channel(max_batch: usize) -> (Writes, Queue) {
    let (queue, receiver) = mpsc::channel(max_batch.max(1) * QUEUED_BATCHES);
    (Writes { queue }, Queue(receiver))
}

fn stopped() -> StoreError {
    StoreError::Unavailable("the store's writer has stopped".to_owned())
}

impl Writes {
    /// Queues the creation of `row` and waits until it is committed (or refused).
    pub(crate) async fn create(&self, row: TaskRow) -> Result<(), StoreError> {
        self.queue_create(row, Vec::new()).await?.await
    }

    /// Queues the creation of `row` with its push configs `push`; the returned future
    /// resolves once it is committed.
    pub(crate) async fn queue_create(
        &self,
        row: TaskRow,
        push: Vec<PushConfig>,
    ) -> Result<ferry_store::Queued<()>, StoreError> {
        let (reply, answer) = oneshot::channel();
        self.queue
            .send(Write::Create { row, push, reply })
            .await
            .map_err(|_| stopped())?;
        Ok(Box::pin(
            async move { answer.await.map_err(|_| stopped())? },
        ))
    }

    /// Queues an append; the returned future resolves once it is committed (or refused).
    /// Appends queued in order are decided in that order (see the module docs).
    pub(crate) async fn queue_append(
        &self,
        row: TaskRow,
        expected: u64,
        event: Arc<Event>,
    ) -> Result<ferry_store::Queued<u64>, StoreError> {
        let (reply, answer) = oneshot::channel();
        self.queue
            .send(Write::Append {
                row,
                expected,
                event,
                reply,
            })
            .await
            .map_err(|_| stopped())?;
        Ok(Box::pin(
            async move { answer.await.map_err(|_| stopped())? },
        ))
    }
}

/// How the writer works: its pool (the store's write pool), the most writes per transaction,
/// and how long a batch may take.
#[derive(Debug)]
pub(crate) struct Writer<DB: Database> {
    pub(crate) pool: Pool<DB>,
    pub(crate) max_batch: usize,
    pub(crate) statement_timeout: Duration,
    pub(crate) acquire_timeout: Duration,
    /// The turn it shares with the outbox's writes, on a database with one write lock.
    pub(crate) turn: Option<WriteTurn>,
    /// How its batches tell other replicas of the events they store (PostgreSQL).
    pub(crate) announce: Option<Announcer>,
    /// Bumped after each batch that committed a write, for the checkpointer (SQLite).
    pub(crate) committed: Option<tokio::sync::watch::Sender<u64>>,
}

impl<DB> Writer<DB>
where
    DB: Dialect,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB>,
    for<'q> i64: Encode<'q, DB> + Type<DB>,
    for<'q> Option<i64>: Encode<'q, DB> + Type<DB>,
    for<'q> Option<&'q str>: Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'r> i64: sqlx::Decode<'r, DB>,
    usize: sqlx::ColumnIndex<DB::Row>,
{
    /// Applies batches until every `Writes` handle is gone (the store was dropped), then
    /// returns; writes queued before that are still applied and answered.
    ///
    /// Up to [`Dialect::LANES`] batches are in flight at once, each on a connection of its
    /// own (row locks, taken in key order, keep them from stepping on each other). Both
    /// databases use one lane: a second would let a batch decide a task's write before the
    /// batch ahead of it, still holding that task's previous write, had locked the row.
    pub(crate) async fn run(self, mut queue: Queue) {
        let max_batch = self.max_batch.max(1);
        let mut batch = Vec::with_capacity(max_batch);
        let mut free: Vec<Option<Held<DB>>> = (0..DB::LANES.max(1)).map(|_| None).collect();
        let mut running = FuturesUnordered::new();
        let mut open = true;
        while open || !running.is_empty() {
            tokio::select! {
                taken = queue.0.recv_many(&mut batch, max_batch), if open && !free.is_empty() => {
                    if taken == 0 {
                        open = false;
                        continue;
                    }
                    let held = free.pop().flatten();
                    let writes = std::mem::replace(&mut batch, Vec::with_capacity(max_batch));
                    running.push(self.lane(held, writes));
                }
                Some(held) = running.next(), if !running.is_empty() => free.push(held),
            }
        }
    }

    /// Applies `batch` on the lane's connection, answers its writers, and gives the
    /// connection back for the lane's next batch.
    async fn lane(&self, mut held: Option<Held<DB>>, batch: Vec<Write>) -> Option<Held<DB>> {
        let outcomes = self.commit(&mut held, &batch).await;
        if let Some(committed) = &self.committed
            && outcomes.iter().any(Result::is_ok)
        {
            committed.send_modify(|n| *n += 1);
        }
        if let Some(announce) = &self.announce {
            let fenced = outcomes
                .iter()
                .filter(|o| matches!(o, Err(StoreError::Fenced { .. })))
                .count();
            announce
                .fenced
                .fetch_add(fenced as u64, std::sync::atomic::Ordering::Relaxed);
        }
        for (write, outcome) in batch.into_iter().zip(outcomes) {
            write.answer(outcome);
        }
        held
    }

    /// The connection for the next batch: the one kept from the last (checked first if it
    /// sat idle a while, as a restart or an idle cut may have ended it), else a fresh one.
    async fn connection<'h>(
        &self,
        held: &'h mut Option<Held<DB>>,
    ) -> Result<&'h mut Held<DB>, sqlx::Error> {
        if let Some(h) = held.as_mut().filter(|h| h.used.elapsed() >= IDLE_CHECK) {
            let alive = tokio::time::timeout(self.acquire_timeout, h.conn.ping()).await;
            if !matches!(alive, Ok(Ok(())))
                && let Some(dead) = held.take()
            {
                drop(dead.conn.detach());
            }
        }
        if held.is_none() {
            let mut conn = self.pool.acquire().await?;
            if let Some(session) = DB::WRITER_SESSION {
                conn.execute(session).await?;
            }
            *held = Some(Held {
                conn,
                used: Instant::now(),
            });
        }
        held.as_mut().ok_or(sqlx::Error::PoolClosed)
    }

    /// The outcome of each write of `batch`, in its order, once the batch is committed (or
    /// `Unavailable` for all when it could not be).
    async fn commit(
        &self,
        held: &mut Option<Held<DB>>,
        batch: &[Write],
    ) -> Vec<Result<u64, StoreError>> {
        let failed = |reason: String| {
            tracing::warn!(store = DB::ENGINE, writes = batch.len(), %reason, "write batch failed");
            vec![Err(StoreError::Unavailable(format!("{}: {reason}", DB::ENGINE))); batch.len()]
        };
        let _turn = match &self.turn {
            Some(turn) => match turn.take(self.acquire_timeout).await {
                Ok(guard) => Some(guard),
                Err(reason) => return failed(reason),
            },
            None => None,
        };
        // A kept connection the database closed since (a restart, `pg_terminate_backend`)
        // fails the batch's first statement, and a batch the database chose to roll back (a
        // deadlock) failed whole: either way nothing was written, so the batch goes again
        // once, on a fresh connection.
        let mut tries = 2;
        let reason = loop {
            tries -= 1;
            let h = match self.connection(held).await {
                Ok(h) => h,
                Err(e) => return failed(describe(&e, self.acquire_timeout)),
            };
            let result = tokio::time::timeout(
                self.statement_timeout,
                apply(&mut h.conn, batch, self.announce.as_ref()),
            )
            .await;
            h.used = Instant::now();
            let reason = match result {
                Ok(Ok(outcomes)) => return outcomes,
                Ok(Err(Failure::Unstarted(e))) if tries > 0 && connection_lost(&e) => {
                    tracing::info!(store = DB::ENGINE, error = %e, "the write connection was closed; writing the batch on a new one");
                    None
                }
                Ok(Err(Failure::Unstarted(e) | Failure::Failed(e)))
                    if tries > 0 && rolled_back(&e) =>
                {
                    tracing::info!(store = DB::ENGINE, error = %e, "the database rolled the batch back; writing it again");
                    None
                }
                Ok(Err(Failure::Unstarted(e) | Failure::Failed(e))) => {
                    Some(describe(&e, self.acquire_timeout))
                }
                Err(_) => Some(format!(
                    "the write did not finish within {}",
                    seconds(self.statement_timeout)
                )),
            };
            // The connection may be broken or mid-statement: never use it again.
            if let Some(broken) = held.take() {
                drop(broken.conn.detach());
            }
            if let Some(reason) = reason {
                break reason;
            }
        };
        failed(reason)
    }
}

/// Why a batch was not applied.
#[derive(Debug)]
enum Failure {
    /// Its first statement failed: nothing of it reached the database.
    Unstarted(sqlx::Error),
    /// A later statement, or the commit, failed.
    Failed(sqlx::Error),
}

impl From<sqlx::Error> for Failure {
    fn from(e: sqlx::Error) -> Self {
        Failure::Failed(e)
    }
}

/// Whether `e` says the connection is gone (closed, reset, or ended by the server:
/// SQLSTATE classes 08 and 57P), as opposed to a statement that failed on a live one.
fn connection_lost(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_) => true,
        sqlx::Error::Database(db) => db
            .code()
            .is_some_and(|code| code.starts_with("08") || code.starts_with("57P")),
        _ => false,
    }
}

/// Whether `e` says the database rolled the transaction back by itself (a deadlock, a
/// serialization failure: SQLSTATE 40P01, 40001): nothing of the batch was written, and it
/// may go again.
fn rolled_back(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Database(db) => db
            .code()
            .is_some_and(|code| code == "40P01" || code == "40001"),
        _ => false,
    }
}

/// The writer's connection, kept from batch to batch (no pool round trip per batch), and
/// when it last finished one.
#[derive(Debug)]
struct Held<DB: Database> {
    conn: PoolConnection<DB>,
    used: Instant,
}

/// A kept connection idle this long is pinged before the next batch trusts it.
const IDLE_CHECK: Duration = Duration::from_secs(1);

/// Applies `batch` in one transaction on `conn` and commits; the outcome of each write.
///
/// The batch is planned, then written with a few statements whatever its size (see
/// [`planned`]); if the plan turns out stale (another process created one of its tasks
/// meanwhile), it is rolled back and the batch applied again write by write.
async fn apply<DB>(
    conn: &mut DB::Connection,
    batch: &[Write],
    announce: Option<&Announcer>,
) -> Result<Vec<Result<u64, StoreError>>, Failure>
where
    DB: Dialect,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB>,
    for<'q> i64: Encode<'q, DB> + Type<DB>,
    for<'q> Option<i64>: Encode<'q, DB> + Type<DB>,
    for<'q> Option<&'q str>: Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'r> i64: sqlx::Decode<'r, DB>,
    usize: sqlx::ColumnIndex<DB::Row>,
{
    if let Some(outcomes) = planned::<DB>(conn, batch, announce).await? {
        return Ok(outcomes);
    }
    let mut tx = conn.begin_with(DB::BEGIN_WRITE).await?;
    let outcomes = one_by_one::<DB>(&mut tx, batch).await?;
    if let Some(announce) = announce {
        let notices = notices(announce, batch, &outcomes);
        DB::notify(&mut tx, &announce.channel, &notices).await?;
    }
    tx.commit().await?;
    Ok(outcomes)
}

/// The state of one task while a batch is planned.
#[derive(Debug)]
struct Slot<'a> {
    /// Its sequence number so far (`None`: no such task).
    seq: Option<i64>,
    /// Whether it was stored before the batch (then it is updated, else inserted).
    stored: bool,
    /// The row to write, when the batch changes the task.
    row: Option<&'a TaskRow>,
    /// The owner its creation in this batch names (an insert writes it, whichever write's
    /// row the batch keeps).
    owner: Option<&'a str>,
    /// Whether its events may go to push configs (see [`crate::dialect::Locked::may_push`]).
    push: bool,
    /// Its lease epoch so far.
    lease_epoch: i64,
}

/// The batch in a few statements: open the transaction and read (and lock) the sequence
/// numbers of every task it touches, decide every write in queue order as if they ran one
/// after the other — so that two appends to one task see each other — then write the plan
/// and commit. `None` when the plan went stale (rolled back: nothing was written).
///
/// A batch of new tasks only (the common case: turns that complete at once, each a
/// creation and its events) is written first without the locks, by one statement that is
/// its own transaction where the database has one ([`Dialect::write_new_alone`]): one round
/// trip instead of four. Should another process have created one of its tasks, nothing of
/// that statement is kept and the batch is planned again under the locks.
///
/// Writes to different tasks do not depend on each other, so the batch is decided task by
/// task ([`ByTask`]), in key order, which is also the order rows are locked and written in.
async fn planned<DB: Dialect>(
    conn: &mut DB::Connection,
    batch: &[Write],
    announce: Option<&Announcer>,
) -> Result<Option<Vec<Result<u64, StoreError>>>, Failure> {
    let tasks = ByTask::of(batch);
    if tasks.only_new(batch) {
        let (plan, outcomes) = plan(batch, &tasks, &[], announce);
        if let Some(write) = DB::write_new_alone(conn, &plan) {
            match write.await {
                Ok(true) => return Ok(Some(outcomes)),
                Ok(false) => {}
                // A statement the database refused was rolled back whole, as if never
                // sent; any other failure (the connection lost on the way) leaves it unknown
                // whether it committed, like a lost COMMIT.
                Err(e @ sqlx::Error::Database(_)) => return Err(Failure::Unstarted(e)),
                Err(e) => return Err(Failure::Failed(e)),
            }
        }
    }
    let keys: Vec<(&str, &str)> = tasks
        .groups()
        .map(|writes| batch[writes[0]].key())
        .collect();
    let found = DB::begin_and_lock(conn, &keys)
        .await
        .map_err(Failure::Unstarted)?;
    let (plan, outcomes) = plan(batch, &tasks, &found, announce);
    Ok(DB::write_and_commit(conn, &plan).await?.then_some(outcomes))
}

/// The writes of a batch grouped by task: the tasks in key order, each task's writes in the
/// order they were queued.
///
/// Grouped by hashing each key once, then only the tasks are sorted: sorting the writes
/// themselves compared their keys several times each, and a batch holds several writes per
/// task (a turn's events) whose ids, time-ordered, share long prefixes. That was 4 % of the
/// process's time on SQLite.
#[derive(Debug)]
struct ByTask {
    /// Indexes into the batch, task after task.
    order: Vec<usize>,
    /// Where each task's writes end in `order`.
    ends: Vec<usize>,
}

impl ByTask {
    fn of(batch: &[Write]) -> ByTask {
        let keys: Vec<(&str, &str)> = batch.iter().map(Write::key).collect();
        ByTask::keyed(&keys)
    }

    /// The grouping of writes to the tasks `keys` (one key per write, in queue order).
    fn keyed(keys: &[(&str, &str)]) -> ByTask {
        let mut task_of: HashMap<SameText<'_>, usize> = HashMap::with_capacity(keys.len());
        let mut firsts: Vec<(&str, &str)> = Vec::new();
        let written_to: Vec<usize> = keys
            .iter()
            .map(|&key| {
                *task_of.entry(SameText(key)).or_insert_with(|| {
                    firsts.push(key);
                    firsts.len() - 1
                })
            })
            .collect();
        let mut tasks: Vec<usize> = (0..firsts.len()).collect();
        tasks.sort_unstable_by(|&a, &b| text::order_key(firsts[a], firsts[b]));
        let mut counts = vec![0; firsts.len()];
        for &t in &written_to {
            counts[t] += 1;
        }
        // Where each task's writes start in `order`, in key order.
        let mut next = vec![0; firsts.len()];
        let mut ends = Vec::with_capacity(tasks.len());
        let mut end = 0;
        for &t in &tasks {
            next[t] = end;
            end += counts[t];
            ends.push(end);
        }
        let mut order = vec![0; keys.len()];
        for (i, &t) in written_to.iter().enumerate() {
            order[next[t]] = i;
            next[t] += 1;
        }
        ByTask { order, ends }
    }

    /// Each task's writes (indexes into the batch), the tasks in key order.
    fn groups(&self) -> impl Iterator<Item = &[usize]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(&self.ends)
            .map(|(start, &end)| &self.order[start..end])
    }

    /// Whether every task `batch` writes is created by it: the first of each task's writes
    /// is its creation.
    fn only_new(&self, batch: &[Write]) -> bool {
        self.groups()
            .all(|writes| matches!(batch[writes[0]], Write::Create { .. }))
    }
}

/// A task's key (tenant, id), compared through [`ferry_store::text`]: equal at once when both
/// are the same text in memory (a task's writes share its id's text, see [`TaskRow::id`]),
/// and an empty tenant never reaches `memcmp`. Hashed by the text, as equal keys must be.
#[derive(Debug, Clone, Copy, Hash)]
struct SameText<'a>((&'a str, &'a str));

impl PartialEq for SameText<'_> {
    fn eq(&self, other: &Self) -> bool {
        text::same_key(self.0, other.0)
    }
}

impl Eq for SameText<'_> {}

/// What `batch` writes, decided task by task against the tasks `found` stored before it,
/// and the outcome of each of its writes if that plan is written.
fn plan<'a>(
    batch: &'a [Write],
    tasks: &ByTask,
    found: &[Locked],
    announce: Option<&'a Announcer>,
) -> (Plan<'a>, Vec<Result<u64, StoreError>>) {
    let stored: HashMap<SameText<'_>, &Locked> = found
        .iter()
        .map(|t| (SameText((t.tenant.as_str(), t.id.as_str())), t))
        .collect();
    let mut plan = Plan::default();
    let mut outcomes = vec![Ok(0); batch.len()];
    for writes in tasks.groups() {
        let found = stored.get(&SameText(batch[writes[0]].key()));
        let mut slot = Slot {
            seq: found.map(|t| t.seq),
            stored: found.is_some(),
            row: None,
            owner: None,
            push: found.is_some_and(|t| t.may_push),
            lease_epoch: found.map_or(0, |t| t.lease_epoch),
        };
        let events_before = plan.events.len();
        let configs_before = plan.push_configs.len();
        for &i in writes {
            outcomes[i] = decide(&batch[i], &mut slot, &mut plan);
        }
        let (Some(row), Some(seq)) = (slot.row, slot.seq) else {
            continue;
        };
        match row.snapshot_json() {
            Ok(snapshot) => {
                let rows = if slot.stored {
                    &mut plan.updates
                } else {
                    &mut plan.inserts
                };
                rows.push(FinalRow {
                    row,
                    seq,
                    snapshot,
                    owner: slot.owner,
                });
            }
            Err(e) => {
                // Nothing of this task is written; the rest of the batch is.
                plan.events.truncate(events_before);
                plan.push_configs.truncate(configs_before);
                for &i in writes {
                    if outcomes[i].is_ok() {
                        outcomes[i] = Err(e.clone());
                    }
                }
            }
        }
    }
    if let Some(announce) = announce {
        plan.notices = notices(announce, batch, &outcomes);
        plan.channel = Some(&announce.channel);
    }
    (plan, outcomes)
}

/// What a batch whose writes came to `outcomes` announces: each task it appended to, at its
/// last event.
fn notices(
    announce: &Announcer,
    batch: &[Write],
    outcomes: &[Result<u64, StoreError>],
) -> Vec<String> {
    let mut last: HashMap<(&str, &str), u64> = HashMap::new();
    for (write, outcome) in batch.iter().zip(outcomes) {
        if let (Write::Append { .. }, Ok(seq)) = (write, outcome) {
            let at = last.entry(write.key()).or_default();
            *at = (*at).max(*seq);
        }
    }
    last.into_iter()
        .map(|((tenant, id), seq)| {
            announce.payload(tenant, id, i64::try_from(seq).unwrap_or(i64::MAX))
        })
        .collect()
}

/// An event's ProtoJSON as the text a row keeps: the bytes the server's streams send too.
fn event_text(event: &Event) -> Result<&str, StoreError> {
    std::str::from_utf8(event.json())
        .map_err(|e| StoreError::Unavailable(format!("an event's JSON is not UTF-8: {e}")))
}

/// The outcome of `write` on the task in `slot`, which it updates (and what it adds to the
/// plan: an event, a creation's push configs).
fn decide<'a>(
    write: &'a Write,
    slot: &mut Slot<'a>,
    plan: &mut Plan<'a>,
) -> Result<u64, StoreError> {
    match write {
        Write::Create { row, push, .. } => match slot.seq {
            Some(_) => Err(StoreError::Exists(row.id.to_string())),
            None => {
                slot.seq = Some(row.seq);
                slot.row = Some(row);
                slot.owner = row.owner.as_deref();
                slot.push = !push.is_empty();
                slot.lease_epoch = row.lease.as_ref().map_or(0, RowLease::epoch_after);
                plan.push_configs
                    .extend(push.iter().map(|config| NewPushConfig {
                        tenant: &row.tenant,
                        id: &row.id,
                        config,
                    }));
                Ok(0)
            }
        },
        Write::Append {
            row,
            expected,
            event,
            ..
        } => {
            let actual = slot
                .seq
                .ok_or_else(|| StoreError::NotFound(row.id.to_string()))?;
            fence(row, slot.lease_epoch)?;
            if let Some(lease) = &row.lease {
                slot.lease_epoch = lease.epoch_after();
            }
            let next = i64::try_from(*expected)
                .ok()
                .filter(|&e| e == actual)
                .and_then(|e| e.checked_add(1))
                .ok_or_else(|| StoreError::Conflict {
                    task: row.id.to_string(),
                    expected: *expected,
                    actual: u64::try_from(actual).unwrap_or(0),
                })?;
            let event = event_text(event)?;
            slot.seq = Some(next);
            slot.row = Some(row);
            plan.events.push(NewEvent {
                tenant: &row.tenant,
                id: &row.id,
                seq: next,
                event,
                push: slot.push,
            });
            // `next` came from a u64 plus one, and is positive.
            Ok(next.unsigned_abs())
        }
    }
}

/// Refuses a write of `row` whose lease is not the task's (`current`): another replica took
/// the task over.
fn fence(row: &TaskRow, current: i64) -> Result<(), StoreError> {
    match &row.lease {
        Some(lease) if lease.epoch != current => Err(StoreError::Fenced {
            task: row.id.to_string(),
            held: u64::try_from(lease.epoch).unwrap_or(0),
            current: u64::try_from(current).unwrap_or(0),
        }),
        _ => Ok(()),
    }
}

/// The batch one write at a time (rarely: a plan gone stale): an append is an `UPDATE …
/// WHERE seq = expected` (no row: the task moved on or does not exist) then its event's
/// `INSERT`; a create an `INSERT … ON CONFLICT DO NOTHING`. In key order ([`ByTask`]), as
/// [`planned`] locks rows. The statements that read tasks are planned per call, as every
/// statement on the writer's connection that reads a table must be (see
/// `Dialect::WRITER_SESSION`).
async fn one_by_one<DB>(
    conn: &mut DB::Connection,
    batch: &[Write],
) -> Result<Vec<Result<u64, StoreError>>, sqlx::Error>
where
    DB: Dialect,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB>,
    for<'q> i64: Encode<'q, DB> + Type<DB>,
    for<'q> Option<i64>: Encode<'q, DB> + Type<DB>,
    for<'q> Option<&'q str>: Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'r> i64: sqlx::Decode<'r, DB>,
    usize: sqlx::ColumnIndex<DB::Row>,
{
    let mut outcomes = vec![Ok(0); batch.len()];
    for &i in &ByTask::of(batch).order {
        outcomes[i] = match &batch[i] {
            Write::Create { row, push, .. } => create::<DB>(conn, row, push).await?,
            Write::Append {
                row,
                expected,
                event,
                ..
            } => match event_text(event) {
                Ok(event) => append::<DB>(conn, row, *expected, event).await?,
                Err(e) => Err(e),
            },
        };
    }
    Ok(outcomes)
}

async fn create<DB>(
    conn: &mut DB::Connection,
    row: &TaskRow,
    push: &[PushConfig],
) -> Result<Result<u64, StoreError>, sqlx::Error>
where
    DB: Dialect,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB>,
    for<'q> i64: Encode<'q, DB> + Type<DB>,
    for<'q> Option<i64>: Encode<'q, DB> + Type<DB>,
    for<'q> Option<&'q str>: Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
{
    let snapshot = match row.snapshot_json() {
        Ok(snapshot) => snapshot,
        Err(e) => return Ok(Err(e)),
    };
    let done = sqlx::query::<DB>(
        "INSERT INTO tasks (tenant, id, context_id, state, seq, status_ms, expires_ms, snapshot, \
         owner, lease_replica, lease_epoch, lease_until_ms) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) \
         ON CONFLICT (tenant, id) DO NOTHING",
    )
    .bind(row.tenant.as_str())
    .bind(&*row.id)
    .bind(&*row.context_id)
    .bind(row.state)
    .bind(row.seq)
    .bind(row.status_ms)
    .bind(row.expires_ms)
    .bind(snapshot.as_str())
    .bind(row.owner.as_deref())
    .bind(row.lease.as_ref().and_then(RowLease::holder_after))
    .bind(row.lease.as_ref().map_or(0, RowLease::epoch_after))
    .bind(row.lease.as_ref().and_then(RowLease::until_after))
    .execute(&mut *conn)
    .await?;
    if DB::rows_affected(&done) == 0 {
        return Ok(Err(StoreError::Exists(row.id.to_string())));
    }
    for config in push {
        sqlx::query::<DB>(
            "INSERT INTO push_configs (tenant, task_id, id, config, created_ms) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(row.tenant.as_str())
        .bind(&*row.id)
        .bind(config.id.as_str())
        .bind(&*config.config)
        .bind(i64::try_from(config.created_ms).unwrap_or(i64::MAX))
        .execute(&mut *conn)
        .await?;
    }
    Ok(Ok(0))
}

async fn append<DB>(
    conn: &mut DB::Connection,
    row: &TaskRow,
    expected: u64,
    event: &str,
) -> Result<Result<u64, StoreError>, sqlx::Error>
where
    DB: Dialect,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB>,
    for<'q> i64: Encode<'q, DB> + Type<DB>,
    for<'q> Option<i64>: Encode<'q, DB> + Type<DB>,
    for<'q> Option<&'q str>: Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'r> i64: sqlx::Decode<'r, DB>,
    usize: sqlx::ColumnIndex<DB::Row>,
{
    // A sequence number past i64 cannot be stored, so no stored task is at it: the update
    // is skipped and the answer is the task's actual number (or NotFound).
    let numbers = i64::try_from(expected)
        .ok()
        .and_then(|e| Some((e, e.checked_add(1)?)));
    if let Some((expected_i, next)) = numbers {
        let snapshot = match row.snapshot_json() {
            Ok(snapshot) => snapshot,
            Err(e) => return Ok(Err(e)),
        };
        let done = sqlx::query::<DB>(
            "UPDATE tasks SET context_id = $1, state = $2, seq = $3, status_ms = $4, \
             expires_ms = $5, snapshot = $6, \
             lease_replica = CASE $12 WHEN 2 THEN NULL ELSE lease_replica END, \
             lease_epoch = CASE $12 WHEN 2 THEN lease_epoch + 1 ELSE lease_epoch END, \
             lease_until_ms = CASE $12 WHEN 2 THEN NULL WHEN 1 THEN $10 ELSE lease_until_ms END \
             WHERE tenant = $7 AND id = $8 AND seq = $9 AND ($11 IS NULL OR lease_epoch = $11)",
        )
        .persistent(false)
        .bind(&*row.context_id)
        .bind(row.state)
        .bind(next)
        .bind(row.status_ms)
        .bind(row.expires_ms)
        .bind(snapshot.as_str())
        .bind(row.tenant.as_str())
        .bind(&*row.id)
        .bind(expected_i)
        .bind(row.lease.as_ref().map(|l| l.until_ms))
        .bind(row.lease.as_ref().map(|l| l.epoch))
        .bind(lease_action(row.lease.as_ref()))
        .execute(&mut *conn)
        .await?;
        if DB::rows_affected(&done) == 1 {
            sqlx::query::<DB>(
                "INSERT INTO events (tenant, task_id, seq, event) VALUES ($1, $2, $3, $4)",
            )
            .bind(row.tenant.as_str())
            .bind(&*row.id)
            .bind(next)
            .bind(event)
            .execute(&mut *conn)
            .await?;
            sqlx::query::<DB>(DB::ADD_DELIVERIES)
                .persistent(false)
                .bind(row.tenant.as_str())
                .bind(&*row.id)
                .bind(next)
                .execute(&mut *conn)
                .await?;
            // `next` came from a u64 plus one, and is positive.
            return Ok(Ok(next.unsigned_abs()));
        }
    }
    let actual =
        sqlx::query::<DB>("SELECT seq, lease_epoch FROM tasks WHERE tenant = $1 AND id = $2")
            .persistent(false)
            .bind(row.tenant.as_str())
            .bind(&*row.id)
            .fetch_optional(&mut *conn)
            .await?;
    Ok(Err(match actual {
        None => StoreError::NotFound(row.id.to_string()),
        Some(found) => {
            let actual: i64 = sqlx::Row::try_get(&found, 0)?;
            let epoch: i64 = sqlx::Row::try_get(&found, 1)?;
            match fence(row, epoch) {
                Err(fenced) => fenced,
                Ok(()) => StoreError::Conflict {
                    task: row.id.to_string(),
                    expected,
                    actual: u64::try_from(actual).unwrap_or(0),
                },
            }
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::ByTask;

    #[test]
    fn writes_group_by_task_in_key_order_each_in_queue_order() {
        let (a, b, c) = (("", "01b"), ("", "01a"), ("t", "01a"));
        // Equal keys from different strings are one task.
        let a_again = (String::new(), "01b".to_owned());
        let keys = [a, b, c, (a_again.0.as_str(), a_again.1.as_str()), b, a];
        let tasks = ByTask::keyed(&keys);
        let groups: Vec<&[usize]> = tasks.groups().collect();
        assert_eq!(groups, [&[1, 4][..], &[0, 3, 5], &[2]]);
    }

    #[test]
    fn an_empty_batch_has_no_tasks() {
        assert_eq!(ByTask::keyed(&[]).groups().count(), 0);
    }
}
