//! Several server processes (replicas) on one shared store.
//!
//! A turn runs on the replica that received its message and writes its task there; the
//! other replicas learn of those writes from [`ReplicaStore::notices`], so that their
//! subscribers, blocked callers and cached views follow the task. A notice is only a wake-up
//! ("task `key` is at event `seq` now"), never the data: the replica that gets one reads the
//! task and the events it has not seen from the store, which is the truth. Notices can be
//! lost (a listener's connection drops, a notice names no task); the stream then says
//! [`Notice::Missed`] and the replica reads every task it follows again.
//!
//! **Leases.** While a turn of a task runs, the replica running it holds the task's
//! [`Lease`]: its creation takes one, a follow-up takes one with
//! [`ReplicaStore::take_lease`], and every write carries it (a write whose lease is over is
//! refused, [`crate::StoreError::Fenced`]) and renews it; a heartbeat renews every lease of
//! the replica ([`ReplicaStore::renew_leases`]); the turn's end gives it back. A replica that
//! dies or freezes stops renewing: any replica then takes the lease over
//! ([`ReplicaStore::take_expired`]), which makes a new epoch (the old holder's writes are
//! refused from then on), and ends the task. Times are the replicas' clocks, passed in: they
//! must agree to well within a lease.

use crate::StoreFuture;
use crate::types::{Lease, TaskKey};
use futures_util::stream::BoxStream;

/// What a replica hears of the other replicas' writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// Another replica stored events of task `key`, up to event `seq`.
    Wrote {
        /// The task.
        key: TaskKey,
        /// Its last event now.
        seq: u64,
        /// When the write was sent (ms since the Unix epoch, the store's clock): how late the
        /// notice is heard.
        sent_ms: u64,
    },
    /// Another replica asks the holder of task `key`'s lease to cancel its turn
    /// ([`ReplicaStore::request_cancel`]).
    CancelRequested {
        /// The task.
        key: TaskKey,
    },
    /// Notices may have been lost (the listener connected again, or one could not be read):
    /// every task followed here must be read again. Also the first notice of every stream,
    /// once it listens, so that what was written before is caught up.
    Missed,
}

/// What a store remembers of a request sent again under the same `messageId` by the same
/// caller (idempotent retries, [`ReplicaStore::remember_request`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Remembered {
    /// The first such request: answer it, then [`ReplicaStore::answer_request`] (or
    /// [`ReplicaStore::forget_request`] when it failed, so that a retry runs again).
    First,
    /// A repeat of a request answered already: its answer (`SendMessageResponse` JSON).
    Answered(String),
    /// A repeat of a request still being answered (on this replica or another).
    Pending,
    /// The `messageId` was used with other content: answer it normally, without remembering.
    Different,
}

/// Which replica holds a conversation whose state lives in one process (a forms agent's
/// browser, an MCP session): the answer of [`ReplicaStore::claim`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// This replica holds it now: it was nobody's, or already this replica's
    /// (`moved_from: None`), or it was held by a replica that stopped announcing itself
    /// (`moved_from: Some(id)`): whatever that replica kept of it is gone.
    Here {
        /// The replica that held it before and is gone, if any.
        moved_from: Option<String>,
    },
    /// Another replica, alive, holds it: requests about it go there.
    Elsewhere {
        /// That replica's id.
        replica: String,
        /// Its internal URL, as it announced it ([`ReplicaStore::announce`]).
        url: String,
    },
}

/// The notices of a store, for as long as the stream is held.
pub type Notices = BoxStream<'static, Notice>;

/// A store that several replicas share ([`crate::TaskStore::replicas`]).
pub trait ReplicaStore: Send + Sync + std::fmt::Debug {
    /// This process's id among the replicas of the store: made when the store opened,
    /// unique per process (a restart is a new replica).
    fn replica_id(&self) -> &str;

    /// The other replicas' writes from now on, as wake-ups. The first item is
    /// [`Notice::Missed`], once listening, so that nothing written before is missed.
    fn notices(&self) -> Notices;

    /// Takes the lease of task `key` for this replica until `until_ms`, when no replica
    /// holds it: the new lease. `None` while another replica holds it (expired or not: an
    /// expired lease is taken over by [`ReplicaStore::take_expired`], which ends the task's
    /// turn first). A task that does not exist is [`crate::StoreError::NotFound`].
    fn take_lease(&self, key: &TaskKey, until_ms: u64) -> StoreFuture<'_, Option<Lease>>;

    /// Gives back this replica's lease of task `key` of `epoch` (nothing when it moved on);
    /// writes carrying it are refused from then on.
    fn release_lease(&self, key: &TaskKey, epoch: u64) -> StoreFuture<'_, ()>;

    /// Renews, until `until_ms`, every lease this replica holds that has not run out at
    /// `now_ms` (one that ran out stays out: another replica may be taking it over); returns
    /// how many.
    fn renew_leases(&self, now_ms: u64, until_ms: u64) -> StoreFuture<'_, u64>;

    /// Takes over at most `limit` leases of any replica that ran out at `now_ms`: each
    /// becomes this replica's until `until_ms`, with a new epoch. Returns the tasks and their
    /// new leases; several replicas at once never take the same one.
    fn take_expired(
        &self,
        now_ms: u64,
        until_ms: u64,
        limit: usize,
    ) -> StoreFuture<'_, Vec<(TaskKey, Lease)>>;

    /// Asks the replica that holds task `key`'s lease to cancel its turn (a mark on the task,
    /// and a [`Notice::CancelRequested`]): the holder's id, or `None` when no replica holds
    /// it (the caller may lease the task and cancel it itself).
    fn request_cancel(&self, key: &TaskKey) -> StoreFuture<'_, Option<String>>;

    /// The tasks whose lease this replica holds and whose cancel another replica asked for
    /// (the backstop of a lost notice).
    fn cancels_requested(&self) -> StoreFuture<'_, Vec<TaskKey>>;

    /// Remembers the request (`caller`, `message_id`) with `content` (a digest) until
    /// `expires_ms`, unless it is remembered already (and not expired at `now_ms`): what to
    /// do with it. Expired requests are forgotten with the expired tasks.
    fn remember_request(
        &self,
        caller: &str,
        message_id: &str,
        content: &str,
        now_ms: u64,
        expires_ms: u64,
    ) -> StoreFuture<'_, Remembered>;

    /// Keeps `answer` for the request remembered as [`Remembered::First`].
    fn answer_request(&self, caller: &str, message_id: &str, answer: &str) -> StoreFuture<'_, ()>;

    /// Forgets a remembered request (its first answer was an error: a retry runs again).
    fn forget_request(&self, caller: &str, message_id: &str) -> StoreFuture<'_, ()>;

    /// Says that this replica is alive now (`now_ms`) and reached at `url` by the other
    /// replicas (its internal URL): the registry [`ReplicaStore::claim`] reads. Called at
    /// every heartbeat; entries not renewed for a day are forgotten, with what they held.
    fn announce(&self, url: &str, now_ms: u64) -> StoreFuture<'_, ()>;

    /// Claims the conversation `key` for this replica, unless another replica holds it that
    /// announced itself since `live_since_ms`: see [`Claim`]. Of replicas claiming one
    /// new key at once, exactly one gets it.
    fn claim(&self, key: &str, now_ms: u64, live_since_ms: u64) -> StoreFuture<'_, Claim>;

    /// How many writes of this process were refused so far because their lease was over
    /// ([`crate::StoreError::Fenced`]).
    fn fenced_writes(&self) -> u64;
}
