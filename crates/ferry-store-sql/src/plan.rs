//! What a write batch writes: the task rows as queued, and the plan a batch makes of them
//! (new tasks, changed tasks, events) for a dialect to write.

use ferry_proto::Task;
use ferry_store::StoreError;
use ferry_store::push::PushConfig;
use std::sync::Arc;

/// A task row as queued. The snapshot is serialized by the writer, and only for the row a
/// batch keeps: a batch holding several writes of one task (a turn's events, queued
/// together) writes its last snapshot only, so the earlier ones are never encoded.
#[derive(Debug)]
pub(crate) struct TaskRow {
    pub(crate) tenant: String,
    /// The task's id, shared with its snapshot (queuing a write copies no text; the writer
    /// tells two writes of one task apart from others by where this text is).
    pub(crate) id: Arc<str>,
    /// Who created the task: written by an insert only (an update never changes it).
    pub(crate) owner: Option<Arc<str>>,
    /// Its context id, shared with its snapshot too.
    pub(crate) context_id: Arc<str>,
    pub(crate) state: &'static str,
    pub(crate) seq: i64,
    pub(crate) status_ms: i64,
    pub(crate) expires_ms: Option<i64>,
    pub(crate) snapshot: Arc<Task>,
    /// The writer's lease (replicas): a create takes it, an append must hold its epoch.
    pub(crate) lease: Option<RowLease>,
}

/// A write's lease (see `ferry_store::Lease`).
#[derive(Debug, Clone)]
pub(crate) struct RowLease {
    pub(crate) replica: Arc<str>,
    pub(crate) epoch: i64,
    pub(crate) until_ms: i64,
    /// The write gives the lease back.
    pub(crate) last: bool,
}

/// What a write does to its task's lease, as the statements take it: keep it as it is (no
/// lease named), renew it, or give it back.
pub(crate) const LEASE_KEPT: i64 = 0;
pub(crate) const LEASE_RENEWED: i64 = 1;
pub(crate) const LEASE_GIVEN_BACK: i64 = 2;

impl RowLease {
    /// [`LEASE_RENEWED`] or [`LEASE_GIVEN_BACK`].
    pub(crate) fn action(&self) -> i64 {
        if self.last {
            LEASE_GIVEN_BACK
        } else {
            LEASE_RENEWED
        }
    }

    /// The epoch the task is at after this write.
    pub(crate) fn epoch_after(&self) -> i64 {
        if self.last {
            self.epoch.saturating_add(1)
        } else {
            self.epoch
        }
    }

    /// The holder the task has after this write (none once given back).
    pub(crate) fn holder_after(&self) -> Option<&str> {
        (!self.last).then_some(&*self.replica)
    }

    /// Until when the lease holds after this write (nothing once given back).
    pub(crate) fn until_after(&self) -> Option<i64> {
        (!self.last).then_some(self.until_ms)
    }
}

/// What a write of `lease` does to its task's lease (see [`LEASE_KEPT`]).
pub(crate) fn lease_action(lease: Option<&RowLease>) -> i64 {
    lease.map_or(LEASE_KEPT, RowLease::action)
}

impl TaskRow {
    /// The snapshot as stored (JSON text).
    pub(crate) fn snapshot_json(&self) -> Result<String, StoreError> {
        serde_json::to_string(&*self.snapshot).map_err(|e| {
            StoreError::Unavailable(format!(
                "cannot serialize the snapshot of task {}: {e}",
                self.id
            ))
        })
    }
}

/// A task row as a batch writes it: the caller's row at its final sequence number, with its
/// snapshot serialized.
#[derive(Debug, Clone)]
pub(crate) struct FinalRow<'a> {
    pub(crate) row: &'a TaskRow,
    pub(crate) seq: i64,
    pub(crate) snapshot: String,
    /// The owner an insert writes: the creation's.
    pub(crate) owner: Option<&'a str>,
}

/// An event as a batch writes it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NewEvent<'a> {
    pub(crate) tenant: &'a str,
    pub(crate) id: &'a str,
    pub(crate) seq: i64,
    pub(crate) event: &'a str,
    /// Whether its task may have push configs (then it gets a delivery per config).
    pub(crate) push: bool,
}

/// A push config a batch inserts with its new task.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NewPushConfig<'a> {
    pub(crate) tenant: &'a str,
    pub(crate) id: &'a str,
    pub(crate) config: &'a PushConfig,
}

/// What a batch writes once its writes are decided: new tasks (with the push configs they
/// arrive with), changed tasks (each once, with its last snapshot) and the events (with a
/// delivery per push config of their task), each list in key order.
#[derive(Debug, Default)]
pub(crate) struct Plan<'a> {
    pub(crate) inserts: Vec<FinalRow<'a>>,
    pub(crate) push_configs: Vec<NewPushConfig<'a>>,
    pub(crate) updates: Vec<FinalRow<'a>>,
    pub(crate) events: Vec<NewEvent<'a>>,
    /// The notices the batch sends when it commits (see [`crate::notices`]): the channel and
    /// a payload per task with new events. Empty on a store no replica listens to.
    pub(crate) notices: Vec<String>,
    pub(crate) channel: Option<&'a str>,
}
