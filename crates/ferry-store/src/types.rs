//! The data a store keeps.

use ferry_proto::{StreamResponse, Task, TaskState};
use std::sync::Arc;

/// Which task: tasks of different tenants never meet, even with equal ids.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskKey {
    /// The tenant (empty when none).
    pub tenant: String,
    /// The task id.
    pub id: String,
}

impl TaskKey {
    /// The key of task `id` in `tenant`.
    pub fn new(tenant: impl Into<String>, id: impl Into<String>) -> TaskKey {
        TaskKey {
            tenant: tenant.into(),
            id: id.into(),
        }
    }
}

/// A task as stored: its latest snapshot and the sequence number of the last event applied.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredTask {
    /// The tenant it belongs to.
    pub tenant: String,
    /// The snapshot (history and artifacts included). Shared, because a snapshot never
    /// changes once written: the next event makes a new one.
    pub task: Arc<Task>,
    /// The sequence number of the last event in it (0: just created, no event yet).
    pub seq: u64,
    /// When its status last changed (ms since the epoch, the status timestamp): ListTasks
    /// sorts and filters by it.
    pub status_ms: u64,
    /// When it may be forgotten (ms since the epoch); `None` while it must be kept.
    pub expires_ms: Option<u64>,
}

impl StoredTask {
    /// The task's key.
    pub fn key(&self) -> TaskKey {
        TaskKey::new(self.tenant.clone(), self.task.id.clone())
    }

    /// The task's current state.
    pub fn state(&self) -> TaskState {
        self.task.status.state
    }
}

/// One event of a task with its sequence number (1, 2, 3, … per task): the SSE `id`, and the
/// resume point of `Last-Event-ID`.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEvent {
    /// Its sequence number within the task.
    pub seq: u64,
    /// The event as streamed (shared: the server fans the same value out to subscribers).
    pub event: Arc<StreamResponse>,
}

/// What ListTasks asks a store for: filters, and a page of them, latest status first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListQuery {
    /// Only this tenant's tasks.
    pub tenant: String,
    /// Only tasks of this context.
    pub context_id: Option<String>,
    /// Only tasks in this state.
    pub state: Option<TaskState>,
    /// Only tasks whose status changed at or after this time (ms since the epoch).
    pub status_since_ms: Option<u64>,
    /// At most this many tasks (1 or more).
    pub page_size: usize,
    /// Where the previous page ended (`Page::next_page_token`).
    pub page_token: Option<String>,
}

impl ListQuery {
    /// Every task of `tenant`, `page_size` at a time.
    pub fn all(tenant: impl Into<String>, page_size: usize) -> ListQuery {
        ListQuery {
            tenant: tenant.into(),
            context_id: None,
            state: None,
            status_since_ms: None,
            page_size,
            page_token: None,
        }
    }
}

/// One page of a listing.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// The tasks, latest status first (ties: by id).
    pub tasks: Vec<StoredTask>,
    /// The token of the next page; `None` on the last one.
    pub next_page_token: Option<String>,
    /// How many tasks match the filters, over all pages.
    pub total: usize,
}
