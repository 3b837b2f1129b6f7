//! `TaskManager`: applies events to tasks. It enforces the state machine (terminal tasks are
//! immutable, a direct message only as the only event of a new request) and the per-task
//! limits, stores each event with its new snapshot, and only then updates the live view,
//! fans the event out and wakes whoever waits.
//!
//! One writer per task: a task's writer lock is held across its store call, so events are
//! stored in the order they were emitted; readers never wait for it (they read the view, or
//! the store). No synchronous lock is held across store I/O. A writer that finds the store
//! moved on (a conflict: someone else wrote the task) reloads the snapshot and applies its
//! event again on top.

use crate::clock::Clock;
use crate::core::live::{LiveItem, LiveTask, LiveTasks, View};
use ferry_agent::{AgentEvent, EmitError};
use ferry_proto::{
    A2aError, Artifact, ErrorKind, Message, Part, Role, StreamResponse, Task,
    TaskArtifactUpdateEvent, TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use ferry_store::{
    Event, ListQuery, Page, StoreError, StoredEvent, StoredTask, TaskKey, TaskStore, visible_to,
};
use futures_util::StreamExt;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// The limits the manager keeps per task, and how long tasks are kept.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TaskLimits {
    /// How long a terminal task is kept after it ended.
    pub terminal_ttl: Duration,
    /// How long a task that is not terminal is kept without any event (INPUT_REQUIRED and
    /// AUTH_REQUIRED waiting for a reply, WORKING without progress).
    pub idle_ttl: Duration,
    /// Messages a task's history may hold.
    pub max_history_messages: usize,
    /// Approximate bytes a task's artifacts may hold together.
    pub max_artifact_bytes: usize,
    /// How long a replica's lease on a task holds without renewal (several replicas on one
    /// store): the longest a task whose replica died stays WORKING.
    pub lease_ttl: Duration,
}

/// What the status message of a task says whose replica stopped renewing its lease.
pub(crate) const LEASE_FAILURE: &str = "the server running this task stopped answering (it was stopped, restarted or frozen) and its lease on the task ran out, so another server process ended it; send the request again";

/// What the status message of a task failed at start-up says.
pub(crate) const RESTART_FAILURE: &str = "the server stopped while this task was working, and its turn did not survive the restart; send the request again";

/// Applies events to tasks over a [`TaskStore`].
#[derive(Debug)]
pub(crate) struct TaskManager {
    store: Arc<dyn TaskStore>,
    live: Arc<LiveTasks>,
    clock: Arc<dyn Clock>,
    /// Wall-clock milliseconds at `epoch_instant`: store times are wall-clock (they outlive the
    /// process), measured with the injected clock (so tests move them).
    epoch_ms: u64,
    epoch_instant: Instant,
    limits: TaskLimits,
    /// This process's replica id when other processes write the store too (replicas): a
    /// view of a task this process does not write may then be behind the store, and a task
    /// is written only under a lease.
    replica: Option<Arc<str>>,
    /// Counters of the replicas' work (leases, takeovers, refused writes, catch-ups).
    pub(crate) replica_counters: crate::core::replica_metrics::Counters,
}

impl TaskManager {
    /// A manager over `store`, measuring time with `clock`.
    pub(crate) fn new(
        store: Arc<dyn TaskStore>,
        clock: Arc<dyn Clock>,
        limits: TaskLimits,
    ) -> Self {
        let epoch_ms = u64::try_from(jiff::Timestamp::now().as_millisecond()).unwrap_or(0);
        let epoch_instant = clock.now();
        let replica = store.replicas().map(|r| Arc::from(r.replica_id()));
        Self {
            replica,
            replica_counters: Default::default(),
            store,
            live: LiveTasks::new(),
            clock,
            epoch_ms,
            epoch_instant,
            limits,
        }
    }

    /// The store.
    pub(crate) fn store(&self) -> &Arc<dyn TaskStore> {
        &self.store
    }

    /// Whether other processes (replicas) write the store too.
    pub(crate) fn shared(&self) -> bool {
        self.replica.is_some()
    }

    /// The lease a write of `live` leaving it in `state` carries (replicas only): renewed
    /// to a full term, or given back by a write that leaves the task ended or waiting for
    /// input (no turn runs after it).
    fn lease_of(&self, live: &LiveTask, state: TaskState) -> Option<ferry_store::Lease> {
        let replica = self.replica.as_ref()?;
        let epoch = live.view.lock().lease?;
        Some(ferry_store::Lease {
            replica: replica.clone(),
            epoch,
            until_ms: self.lease_until(),
            last: gives_lease_back(state),
        })
    }

    /// This process's replica id, when the store is shared.
    pub(crate) fn replica_id(&self) -> Option<&str> {
        self.replica.as_deref()
    }

    /// How long a lease holds without renewal, in ms: also how long a replica counts as
    /// alive after it last announced itself.
    pub(crate) fn lease_ms(&self) -> u64 {
        u64::try_from(self.limits.lease_ttl.as_millis()).unwrap_or(u64::MAX)
    }

    /// When a lease taken or renewed now runs out.
    pub(crate) fn lease_until(&self) -> u64 {
        self.now_ms()
            .saturating_add(u64::try_from(self.limits.lease_ttl.as_millis()).unwrap_or(u64::MAX))
    }

    /// Takes the lease of `live` before a turn or a cancel writes it (replicas only; a lease
    /// held already is kept), then reads the task again: nobody else writes it from now on.
    /// Refused while another replica holds it.
    pub(crate) async fn lease(&self, live: &Arc<LiveTask>) -> Result<(), A2aError> {
        if self.try_lease(live).await? {
            return Ok(());
        }
        Err(A2aError::unsupported(format!(
            "task {} is still working on the previous message on another replica; wait for it or cancel it",
            live.key.id
        ))
        .with_meta("taskId", &*live.key.id))
    }

    /// [`TaskManager::lease`], answering `false` while another replica holds the lease.
    pub(crate) async fn try_lease(&self, live: &Arc<LiveTask>) -> Result<bool, A2aError> {
        let Some(replicas) = self.store.replicas() else {
            return Ok(true);
        };
        if live.view.lock().lease.is_some() {
            return Ok(true);
        }
        let taken = replicas
            .take_lease(&live.key, self.lease_until())
            .await
            .map_err(|e| match e {
                StoreError::NotFound(_) => A2aError::task_not_found(&live.key.id),
                e => store_error(e),
            })?;
        let Some(lease) = taken else {
            return Ok(false);
        };
        live.view.lock().lease = Some(lease.epoch);
        self.replica_counters.leased();
        self.refresh(live).await.map_err(store_error)?;
        Ok(true)
    }

    /// Gives back the lease of `live` once no turn of it runs here and nothing holds it
    /// (replicas only).
    pub(crate) async fn release(&self, live: &LiveTask) {
        let turn = {
            let view = live.view.lock();
            if view.turns_started > view.turns_finished {
                return;
            }
            view.turns_finished
        };
        self.release_after(live, turn).await;
    }

    /// Keeps the lease of `live` from being given back while the returned hold lives: a
    /// cancel may take the lease while a turn of the task is still ending here, and that
    /// turn's end must not give back the cancel's lease, or the cancel's write is fenced
    /// (refused as another replica's). Drop the hold, then [`TaskManager::release`].
    pub(crate) fn hold_lease(live: &Arc<LiveTask>) -> LeaseHold {
        live.view.lock().lease_holds += 1;
        LeaseHold(live.clone())
    }

    /// Gives back the lease of `live` as turn `turn` ends, unless a later turn started here
    /// meanwhile or a cancel holds the lease ([`TaskManager::hold_lease`]; replicas only).
    pub(crate) async fn release_after(&self, live: &LiveTask, turn: u64) {
        let Some(replicas) = self.store.replicas() else {
            return;
        };
        let epoch = {
            let mut view = live.view.lock();
            if view.turns_started > turn || view.lease_holds > 0 {
                return;
            }
            view.lease.take()
        };
        if let Some(epoch) = epoch
            && let Err(e) = replicas.release_lease(&live.key, epoch).await
        {
            tracing::warn!(task = %live.key.id, error = %e, "could not give back a task's lease; it runs out by itself");
        }
    }

    /// Ends task `key` whose replica stopped renewing its lease, which this replica took over
    /// (`lease`): a task still SUBMITTED or WORKING becomes FAILED, saying why; then the
    /// lease is given back. A turn of it still running here (this replica froze past its own
    /// lease) is aborted first.
    pub(crate) async fn take_over(&self, key: &TaskKey, lease: ferry_store::Lease) {
        let Ok(Some(live)) = self.open(key, None).await else {
            return;
        };
        let running = {
            let mut view = live.view.lock();
            view.lease = Some(lease.epoch);
            view.turns_finished = view.turns_started;
            view.running.take()
        };
        if let Some(running) = running {
            running.abort();
        }
        self.replica_counters.took_over();
        if let Err(e) = self.reload(&live).await {
            tracing::warn!(task = %key.id, error = %e, "could not read a task taken over");
        }
        let state = live.view.lock().task.status.state;
        if matches!(state, TaskState::Submitted | TaskState::Working) {
            let mut message = Message::agent(
                uuid::Uuid::new_v4().to_string(),
                vec![Part::text(LEASE_FAILURE)],
            );
            fill_ids(&live, &mut message);
            let event = AgentEvent::Status {
                state: TaskState::Failed,
                message: Some(message),
            };
            match self.apply(&live, event).await {
                Ok(()) => {
                    tracing::warn!(task = %key.id, "failed a task whose replica stopped answering")
                }
                Err(e) => {
                    tracing::warn!(task = %key.id, error = %e, "could not fail a task whose replica stopped answering")
                }
            }
        }
        live.changed.notify_waiters();
        self.release(&live).await;
    }

    /// Now, in wall-clock milliseconds, as the injected clock sees it.
    pub(crate) fn now_ms(&self) -> u64 {
        let since = self
            .clock
            .now()
            .saturating_duration_since(self.epoch_instant);
        self.epoch_ms
            .saturating_add(u64::try_from(since.as_millis()).unwrap_or(u64::MAX))
    }

    /// When a task in `state`, changed now, may be forgotten.
    fn expiry(&self, state: TaskState) -> Option<u64> {
        let ttl = if state.is_terminal() {
            self.limits.terminal_ttl
        } else {
            self.limits.idle_ttl
        };
        Some(
            self.now_ms()
                .saturating_add(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX)),
        )
    }

    /// The stored form of `live`'s snapshot `task` at `seq`.
    fn stored(&self, live: &LiveTask, task: Arc<Task>, seq: u64) -> StoredTask {
        let status_ms = task
            .status
            .timestamp
            .map_or(0, |t| u64::try_from(t.as_millis()).unwrap_or(0));
        let expires_ms = self.expiry(task.status.state);
        let lease = self.lease_of(live, task.status.state);
        StoredTask {
            tenant: live.key.tenant.clone(),
            owner: live.owner.clone(),
            task,
            seq,
            status_ms,
            expires_ms,
            lease,
        }
    }

    /// A new task of `owner`, not stored until its first event: SUBMITTED, `message` its
    /// history.
    pub(crate) fn begin(&self, tenant: &str, task: Task, owner: Arc<str>) -> Arc<LiveTask> {
        let live = self
            .live
            .follow(tenant, Arc::new(task), 0, false, Some(owner));
        if self.shared() {
            // Its creation takes the first lease.
            live.view.lock().lease = Some(1);
        }
        live
    }

    /// The task `key` if `viewer` sees it ([`visible_to`]), followed from now on: the live
    /// one, or loaded from the store. `None` when there is no such (published) task, or it is
    /// another caller's: the same answer, and another's task is not followed.
    pub(crate) async fn open(
        &self,
        key: &TaskKey,
        viewer: Option<&str>,
    ) -> Result<Option<Arc<LiveTask>>, A2aError> {
        if let Some(live) = self.live.get(key) {
            let published = live.view.lock().published;
            let shown = published && visible_to(viewer, live.owner.as_deref());
            if shown && self.shared() {
                self.refresh(&live).await.map_err(store_error)?;
            }
            return Ok(shown.then_some(live));
        }
        let Some(stored) = self.store.get(key).await.map_err(store_error)? else {
            return Ok(None);
        };
        if !visible_to(viewer, stored.owner.as_deref()) {
            return Ok(None);
        }
        Ok(Some(self.live.follow(
            &key.tenant,
            stored.task,
            stored.seq,
            true,
            stored.owner,
        )))
    }

    /// The latest snapshot of `key` if `viewer` sees it, without following it.
    pub(crate) async fn snapshot(
        &self,
        key: &TaskKey,
        viewer: Option<&str>,
    ) -> Result<Option<Arc<Task>>, A2aError> {
        if let Some(live) = self
            .live
            .get(key)
            .filter(|live| !self.shared() || writes_here(live))
        {
            let view = live.view.lock();
            let shown = view.published && visible_to(viewer, live.owner.as_deref());
            return Ok(shown.then(|| view.task.clone()));
        }
        Ok(self
            .store
            .get(key)
            .await
            .map_err(store_error)?
            .filter(|t| visible_to(viewer, t.owner.as_deref()))
            .map(|t| t.task))
    }

    /// A page of tasks (ListTasks).
    pub(crate) async fn list(&self, query: &ListQuery) -> Result<Page, StoreError> {
        self.store.list(query).await
    }

    /// Stored events of `key` after `seq` (at most `limit`).
    pub(crate) async fn events_after(
        &self,
        key: &TaskKey,
        seq: u64,
        limit: usize,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        self.store.events_after(key, seq, limit).await
    }

    /// Tasks in the store, by state.
    pub(crate) async fn count_by_state(&self) -> Result<Vec<(TaskState, u64)>, StoreError> {
        self.store.count_by_state().await
    }

    /// The live task `key`, if something follows it now.
    pub(crate) fn live(&self, key: &TaskKey) -> Option<Arc<LiveTask>> {
        self.live.get(key)
    }

    /// Tasks followed in this process now.
    pub(crate) fn live_count(&self) -> usize {
        self.live.len()
    }

    /// Brings the view of `live` up to the store, when another process wrote the task
    /// (replicas): the events it has not seen go to its subscribers, in order, then the
    /// view moves to the stored snapshot and waiters wake. Nothing to do for a task this
    /// process writes (its view is the store's), or one that is up to date. A task the store
    /// no longer holds is forgotten (its subscribers end).
    pub(crate) async fn refresh(&self, live: &Arc<LiveTask>) -> Result<(), StoreError> {
        if writes_here(live) {
            return Ok(());
        }
        // One refresh of a task at a time; a writer of it here makes refreshing moot.
        let Ok(_writer) = live.writer.try_lock() else {
            return Ok(());
        };
        let Some(stored) = self.store.get(&live.key).await? else {
            forget(live);
            return Ok(());
        };
        let from = live.view.lock().seq;
        if stored.seq <= from {
            return Ok(());
        }
        let mut missed = Vec::new();
        let mut after = from;
        while after < stored.seq {
            let chunk = self
                .store
                .events_after(&live.key, after, REFRESH_CHUNK)
                .await?;
            let Some(last) = chunk.last() else { break };
            after = last.seq;
            missed.extend(chunk.into_iter().filter(|e| e.seq <= stored.seq));
        }
        let mut view = live.view.lock();
        if view.seq != from {
            return Ok(());
        }
        for e in missed {
            if changes_status(e.event.value()) {
                view.status_seq = e.seq;
            }
            view.broadcast_event(e.seq, e.event);
        }
        view.task = stored.task;
        view.seq = stored.seq;
        drop(view);
        live.changed.notify_waiters();
        self.replica_counters.caught_up();
        Ok(())
    }

    /// Tasks this replica holds the lease of now.
    pub(crate) fn leases_held(&self) -> usize {
        self.live
            .all()
            .iter()
            .filter(|live| live.view.lock().lease.is_some())
            .count()
    }

    /// [`TaskManager::refresh`] of every task followed here (another process's writes may
    /// have gone unannounced); returns how many could not be read.
    pub(crate) async fn refresh_all(&self) -> usize {
        let failed = std::sync::atomic::AtomicUsize::new(0);
        futures_util::stream::iter(self.live.all())
            .for_each_concurrent(REFRESH_ALL_AT_ONCE, |live| {
                let failed = &failed;
                async move {
                    if let Err(e) = self.refresh(&live).await {
                        tracing::debug!(task = %live.key.id, error = %e, "could not read a followed task again");
                        failed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                }
            })
            .await;
        failed.into_inner()
    }

    /// Applies one of the agent's events to `live`.
    ///
    /// With a store that commits several writes together ([`TaskStore::pipelines`]), an event
    /// that does not end the task returns once it is queued, in order, and becomes visible
    /// (to readers and subscribers) once it is committed; a terminal event returns once it is
    /// committed, and with it everything before it; the end of a turn waits for all of its
    /// events. A queued event that then fails is reported by the next emit. With any other
    /// store, every emit returns once its event is stored.
    pub(crate) async fn apply(
        &self,
        live: &Arc<LiveTask>,
        event: AgentEvent,
    ) -> Result<(), EmitError> {
        validate(&event)?;
        let ends = matches!(&event, AgentEvent::Status { state, .. } if state.is_terminal());
        // Uncontended (the usual case: one turn emits in order) without the wait queue.
        let writer = match live.writer.try_lock() {
            Ok(writer) => writer,
            Err(_) => live.writer.lock().await,
        };
        // The task's creation, when this event is the one that publishes it on a store that
        // commits writes together: settled before this event is.
        let mut creation: Option<tokio::task::JoinHandle<()>> = None;
        loop {
            let head = head(live, self.shared())?;
            if let AgentEvent::Message(message) = &event {
                if head.published {
                    return Err(EmitError::MessageAfterTask);
                }
                reply(live, message.clone());
                return Ok(());
            }
            if !head.published {
                if self.store.pipelines() {
                    creation = Some(self.queue_publish(live, head.task).await?);
                } else {
                    self.publish(live, head.task).await?;
                }
                continue;
            }
            let change = self.change(live, &head.task, &event)?;
            if !self.store.pipelines() {
                match self.write_now(live, head.seq, change).await {
                    Some(result) => return result,
                    None => continue,
                }
            }
            let queued = match self.enqueue(live, head.seq, &change).await {
                Enqueued::Queued(queued) => queued,
                Enqueued::Conflict => continue,
                Enqueued::Failed(e) => return settle(live, Err(e), change, None),
                Enqueued::Stopped(e) => return Err(e),
            };
            {
                let mut view = live.view.lock();
                view.pending = Some((change.task.clone(), head.seq + 1));
                view.in_flight += 1;
            }
            drop(writer);
            let committed = Committed {
                creation,
                queued,
                change,
                epoch: head.epoch,
            };
            return committed.settle_in(live.clone(), ends).await;
        }
    }

    /// The stored change `event` makes to `current`.
    fn change(
        &self,
        live: &LiveTask,
        current: &Task,
        event: &AgentEvent,
    ) -> Result<Stored, EmitError> {
        let (next, stream_event, changes_status) = self.next_snapshot(live, current, event)?;
        Ok(Stored {
            task: Arc::new(next),
            event: Arc::new(Event::new(Arc::new(stream_event))),
            changes_status,
            creates: false,
        })
    }

    /// Writes `change` on top of event `seq` and waits for it (a store that does not
    /// pipeline); `None` when another write got there first (the view is reloaded: go again).
    async fn write_now(
        &self,
        live: &LiveTask,
        seq: u64,
        change: Stored,
    ) -> Option<Result<(), EmitError>> {
        let stored = self.stored(live, change.task.clone(), seq);
        let outcome = self
            .store
            .append(&live.key, seq, change.event.clone(), stored)
            .await;
        match outcome {
            Err(StoreError::Conflict { .. }) => match self.reload(live).await {
                Ok(()) => None,
                Err(e) => Some(Err(e)),
            },
            Err(StoreError::Fenced { .. }) => Some(Err(self.fenced(live).await)),
            outcome => Some(settle(live, outcome, change, None)),
        }
    }

    /// Queues `change` on top of event `seq` (a store that commits writes together).
    async fn enqueue(&self, live: &LiveTask, seq: u64, change: &Stored) -> Enqueued {
        let stored = self.stored(live, change.task.clone(), seq);
        let queued = self
            .store
            .queue_append(&live.key, seq, change.event.clone(), stored)
            .await;
        match queued {
            Ok(queued) => Enqueued::Queued(queued),
            Err(StoreError::Conflict { .. }) => match self.reload(live).await {
                Ok(()) => Enqueued::Conflict,
                Err(e) => Enqueued::Stopped(e),
            },
            Err(StoreError::Fenced { .. }) => Enqueued::Stopped(self.fenced(live).await),
            Err(e) => Enqueued::Failed(e),
        }
    }

    /// Stores a new task and its first event (the task itself), waiting for each. A failure
    /// is the request's answer (`early_error`).
    async fn publish(&self, live: &LiveTask, task: Arc<Task>) -> Result<(), EmitError> {
        let creation = Stored::creation(task);
        let stored = self.stored(live, creation.task.clone(), 0);
        let outcome = self.create_then_append(live, &creation.event, stored).await;
        settle(live, outcome, creation, None)
    }

    /// Queues a new task and its first event (the task itself) on a store that commits
    /// writes together, without waiting for the commit: the event that published it goes
    /// on top, and the request that started it waits for both (so an answer is only ever
    /// given from what is stored). The returned task settles the creation once committed;
    /// a failure then is the request's answer (`early_error`) and voids what was queued on
    /// top.
    async fn queue_publish(
        &self,
        live: &Arc<LiveTask>,
        task: Arc<Task>,
    ) -> Result<tokio::task::JoinHandle<()>, EmitError> {
        let creation = Stored::creation(task);
        let stored = self.stored(live, creation.task.clone(), 0);
        let push = std::mem::take(&mut live.view.lock().initial_push);
        let queued = async {
            let created = self
                .store
                .queue_create_with_push(stored.clone(), push)
                .await?;
            let appended = self
                .store
                .queue_append(&live.key, 0, creation.event.clone(), stored)
                .await?;
            Ok::<_, StoreError>((created, appended))
        };
        let (created, appended) = match queued.await {
            Ok(queued) => queued,
            Err(e) => return Err(publish_failed(live, &e)),
        };
        let epoch = {
            let mut view = live.view.lock();
            view.publish_queued = true;
            view.pending = Some((creation.task.clone(), 1));
            view.in_flight += 1;
            view.epoch
        };
        let owner = live.clone();
        Ok(tokio::spawn(async move {
            let outcome = match created.await {
                Ok(()) => appended.await,
                Err(e) => {
                    let _ = appended.await;
                    Err(e)
                }
            };
            // Its failure is the request's answer (`early_error`), not the agent's.
            let _ = settle(&owner, outcome, creation, Some(epoch));
        }))
    }

    /// The task, then its first event; a full store expires what is due and is asked again.
    async fn create_then_append(
        &self,
        live: &LiveTask,
        event: &Arc<Event>,
        stored: StoredTask,
    ) -> Result<u64, StoreError> {
        let push = std::mem::take(&mut live.view.lock().initial_push);
        let create = |push: Vec<ferry_store::push::PushConfig>| async {
            if push.is_empty() {
                self.store.create(stored.clone()).await
            } else {
                self.store
                    .queue_create_with_push(stored.clone(), push)
                    .await?
                    .await
            }
        };
        let mut created = create(push.clone()).await;
        if matches!(created, Err(StoreError::Full { .. })) {
            if let Err(e) = self.sweep().await {
                tracing::warn!(error = %e, "expiring tasks to make room failed");
            }
            created = create(push).await;
        }
        created?;
        self.store.append(&live.key, 0, event.clone(), stored).await
    }

    /// A write of `live` was refused because another replica took the task over: this
    /// replica no longer holds it, and its view moves to what the store holds.
    async fn fenced(&self, live: &LiveTask) -> EmitError {
        live.view.lock().lease = None;
        let _ = self.reload(live).await;
        EmitError::Unavailable(format!(
            "this replica no longer holds task {}: another replica took it over",
            live.key.id
        ))
    }

    /// Reloads the view from the store after a conflict.
    async fn reload(&self, live: &LiveTask) -> Result<(), EmitError> {
        match self.store.get(&live.key).await {
            Ok(Some(stored)) => {
                let mut view = live.view.lock();
                view.task = stored.task;
                view.seq = stored.seq;
                Ok(())
            }
            Ok(None) => {
                forget(live);
                Err(EmitError::Closed)
            }
            Err(e) => Err(EmitError::Unavailable(e.to_string())),
        }
    }

    /// The snapshot after `event`, the event as streamed, and whether it changed the status.
    fn next_snapshot(
        &self,
        live: &LiveTask,
        current: &Task,
        event: &AgentEvent,
    ) -> Result<(Task, StreamResponse, bool), EmitError> {
        let mut next = current.clone();
        match event {
            AgentEvent::Status { state, message } => {
                // One copy, shared by the status, the history and the event.
                let message = message.clone().map(|mut m| {
                    fill_ids(live, &mut m);
                    Arc::new(m)
                });
                if let Some(m) = &message {
                    // The message that ends a task always fits: a task ends once, and a
                    // failure must be able to say why.
                    if !state.is_terminal() {
                        self.check_history(live, next.history.len() + 1)?;
                    }
                    next.history.push(m.clone());
                }
                next.status = TaskStatus::now(*state, message);
                let update = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                    task_id: live.key.id.clone(),
                    context_id: live.context_id.clone(),
                    status: next.status.clone(),
                    metadata: None,
                });
                Ok((next, update, true))
            }
            AgentEvent::Artifact {
                artifact,
                append,
                last_chunk,
            } => {
                merge_artifact(&mut next.artifacts, artifact, *append);
                let bytes: usize = next
                    .artifacts
                    .iter()
                    .map(|a| ferry_store::size::artifact_bytes(a))
                    .sum();
                if bytes > self.limits.max_artifact_bytes {
                    return Err(EmitError::Limit(format!(
                        "task {} would hold {bytes} bytes of artifacts, over the limit of {}",
                        live.key.id, self.limits.max_artifact_bytes
                    )));
                }
                let update = StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                    task_id: live.key.id.clone(),
                    context_id: live.context_id.clone(),
                    artifact: artifact.clone(),
                    append: *append,
                    last_chunk: *last_chunk,
                    metadata: None,
                });
                Ok((next, update, false))
            }
            AgentEvent::Message(_) => Err(EmitError::MessageAfterTask),
        }
    }

    /// Refuses a history of `len` messages over the limit.
    pub(crate) fn check_history(&self, live: &LiveTask, len: usize) -> Result<(), EmitError> {
        if len > self.limits.max_history_messages {
            return Err(EmitError::Limit(format!(
                "task {} would hold {len} history messages, over the limit of {}",
                live.key.id, self.limits.max_history_messages
            )));
        }
        Ok(())
    }

    /// Forgets the tasks whose time is up; what still follows them ends ("expired"), and a
    /// turn still running for one is aborted. Returns how many went.
    pub(crate) async fn sweep(&self) -> Result<usize, StoreError> {
        let gone = self.store.expire(self.now_ms()).await?;
        for key in &gone {
            if let Some(live) = self.live.get(key) {
                forget(&live);
            }
        }
        Ok(gone.len())
    }

    /// After a restart: the tasks left SUBMITTED or WORKING have no turn any more; they
    /// become FAILED, saying so. Returns how many.
    pub(crate) async fn recover(&self) -> Result<usize, StoreError> {
        let keys = self.store.unfinished().await?;
        let mut failed = 0;
        for key in keys {
            // The server's own work on every caller's tasks: no viewer.
            let Ok(Some(live)) = self.open(&key, None).await else {
                continue;
            };
            // Replicas: a task another replica leases is working there (or is ended by the
            // replicas' reaper once that replica stops renewing); only one nobody holds was
            // orphaned.
            if self.lease(&live).await.is_err() {
                continue;
            }
            let mut message = Message::agent(
                uuid::Uuid::new_v4().to_string(),
                vec![Part::text(RESTART_FAILURE)],
            );
            fill_ids(&live, &mut message);
            let event = AgentEvent::Status {
                state: TaskState::Failed,
                message: Some(message),
            };
            match self.apply(&live, event).await {
                Ok(()) => failed += 1,
                Err(e) => {
                    tracing::warn!(task = %key.id, error = %e, "could not fail a task the restart orphaned")
                }
            }
            self.release(&live).await;
        }
        Ok(failed)
    }

    /// Aborts every turn still running (after the drain timeout).
    pub(crate) fn abort_running(&self) {
        for live in self.live.all() {
            if let Some(running) = live.view.lock().running.take() {
                running.abort();
            }
        }
    }
}

/// Followed tasks read again at once by [`TaskManager::refresh_all`].
const REFRESH_ALL_AT_ONCE: usize = 16;

/// Events read at once when a view catches up with another process's writes.
const REFRESH_CHUNK: usize = 256;

/// Whether a write leaving a task in `state` gives its lease back: the task ended, or waits
/// for input, so no turn runs after it and any replica may take the task on.
pub(crate) fn gives_lease_back(state: TaskState) -> bool {
    state.is_terminal() || state.is_interrupted()
}

/// Whether this process writes `live` now: a turn of it runs here, or writes of it are on
/// their way to the store. Its view is then the store's (other writers are fenced off).
fn writes_here(live: &LiveTask) -> bool {
    let view = live.view.lock();
    view.turns_started > view.turns_finished || view.in_flight > 0 || view.running.is_some()
}

/// Whether `event` changes its task's status (not an artifact).
fn changes_status(event: &StreamResponse) -> bool {
    matches!(
        event,
        StreamResponse::StatusUpdate(_) | StreamResponse::Task(_)
    )
}

/// The task as a writer starts from: its latest snapshot (committed or queued) and sequence
/// number, whether it is stored (or its creation queued), and the write epoch.
struct Head {
    task: Arc<Task>,
    seq: u64,
    published: bool,
    epoch: u64,
}

/// Reads where a new event of `live` goes, or why none may: the task is gone or ended, a
/// queued write failed (reported once, here), or it was answered with a direct reply.
fn head(live: &LiveTask, leased_only: bool) -> Result<Head, EmitError> {
    let mut view = live.view.lock();
    if view.gone {
        return Err(EmitError::Closed);
    }
    if leased_only && view.lease.is_none() {
        return Err(EmitError::Unavailable(format!(
            "this replica no longer holds task {}: another replica took it over",
            live.key.id
        )));
    }
    if let Some(failure) = view.write_failure.take() {
        return Err(failure);
    }
    let (task, seq) = view.head();
    let state = task.status.state;
    if state.is_terminal() {
        return Err(EmitError::TaskTerminal {
            task_id: live.key.id.to_string(),
            state: state.as_str(),
        });
    }
    if view.reply.is_some() {
        return Err(EmitError::MessageAfterTask);
    }
    Ok(Head {
        task,
        seq,
        published: view.published || view.publish_queued,
        epoch: view.epoch,
    })
}

/// What queueing a write came to.
enum Enqueued {
    /// Queued: resolves once committed.
    Queued(ferry_store::Queued<u64>),
    /// Another write got there first; the view is reloaded.
    Conflict,
    /// Refused by the store.
    Failed(StoreError),
    /// The task cannot take the write any more (it is gone, or the store is unreachable).
    Stopped(EmitError),
}

/// A queued write on its way to the store: the task's creation it waits for, if any.
struct Committed {
    creation: Option<tokio::task::JoinHandle<()>>,
    queued: ferry_store::Queued<u64>,
    change: Stored,
    epoch: u64,
}

impl Committed {
    /// Settles the write once it is committed. An event that ends the task is waited for
    /// (and with it everything before it); any other returns once it is queued, settling
    /// where it was polled if it is done already, else in a task of its own.
    async fn settle_in(self, owner: Arc<LiveTask>, ends: bool) -> Result<(), EmitError> {
        let Committed {
            creation,
            queued,
            change,
            epoch,
        } = self;
        let mut done = Box::pin(async move {
            if let Some(creation) = creation {
                // Settles the creation first (it fails the task's early request, and voids
                // this write, if it failed).
                let _ = creation.await;
            }
            let outcome = queued.await;
            settle(&owner, outcome, change, Some(epoch))
        });
        if ends {
            return done.await;
        }
        match futures_util::FutureExt::now_or_never(&mut done) {
            Some(result) => result,
            None => {
                tokio::spawn(done);
                Ok(())
            }
        }
    }
}

/// A change to a task, as it goes to the store.
struct Stored {
    task: Arc<Task>,
    event: Arc<Event>,
    changes_status: bool,
    /// The task's creation (its first event, the task itself): it publishes the task, and
    /// its failure is the answer of the request that started it.
    creates: bool,
}

impl Stored {
    /// The creation of `task`.
    fn creation(task: Arc<Task>) -> Stored {
        let event = Arc::new(Event::new(Arc::new(StreamResponse::Task(task.clone()))));
        Stored {
            task,
            event,
            changes_status: true,
            creates: true,
        }
    }
}

/// Applies the store's answer to a write of `change`: on success the view moves to it (if no
/// later write got there first), the event goes out to subscribers and waiters wake; on
/// failure the writes queued after it are void (they fail too) and the failure is kept for
/// the next emit and the turn's sender. A task's creation publishes it on success; its
/// failure is the answer of the request that started it. `queued_in` is the epoch of a
/// queued write (`None`: the write was awaited, nothing was pending).
fn settle(
    live: &LiveTask,
    outcome: Result<u64, StoreError>,
    change: Stored,
    queued_in: Option<u64>,
) -> Result<(), EmitError> {
    let mut view = live.view.lock();
    if queued_in.is_some() {
        view.in_flight = view.in_flight.saturating_sub(1);
    }
    if change.creates {
        view.publish_queued = false;
    }
    if outcome.is_ok()
        && let Some(wake) = live.push_wake.get()
    {
        wake.notify_one();
    }
    let result = match outcome {
        Ok(seq) => {
            if change.creates {
                view.published = true;
                view.created = Some(change.event.value().clone());
            }
            if gives_lease_back(change.task.status.state) {
                // The write gave the lease back with it (replicas).
                view.lease = None;
            }
            if seq > view.seq {
                view.task = change.task;
                view.seq = seq;
                if change.changes_status {
                    view.status_seq = seq;
                }
            }
            if view.pending.as_ref().is_some_and(|(_, s)| *s <= seq) {
                view.pending = None;
            }
            view.broadcast_event(seq, change.event);
            Ok(())
        }
        Err(e) if queued_in.is_some_and(|epoch| epoch != view.epoch) => {
            // Queued after a write that failed: void, and already reported. Writes settle
            // in the order their commits are answered, not queued, so a write queued after
            // the creation may have failed first: the creation that then fails leaves the
            // task unpublished, and its request must still learn why.
            if change.creates && view.early_error.is_none() {
                view.early_error = Some(refusal(&e));
            }
            Err(EmitError::Unavailable(
                "an earlier event of this task could not be stored".to_owned(),
            ))
        }
        Err(e) => Err(failed(&mut view, &e, change.creates, queued_in)),
    };
    // Only a queued write changes what is in flight.
    let flushed = queued_in.is_some() && view.in_flight == 0;
    let gone = matches!(result, Err(EmitError::Closed));
    drop(view);
    if gone {
        forget(live);
    }
    live.changed.notify_waiters();
    if flushed {
        live.flushed.notify_waiters();
    }
    result
}

/// The store refused a write: who learns it, and what the writes queued after it become.
/// Until the task is stored, the failure is the answer of the request that started it (the
/// creation's own failure, or one queued on top of it and answered first); after, the turn's
/// sender learns it (503) instead of a task that stopped changing, and the agent from its
/// emit. A failed queued write voids what was queued after it: writing goes on from what is
/// stored.
fn failed(view: &mut View, e: &StoreError, creates: bool, queued_in: Option<u64>) -> EmitError {
    let error = match e {
        _ if creates || !view.published => {
            view.early_error = Some(refusal(e));
            EmitError::Unavailable(e.to_string())
        }
        StoreError::NotFound(_) => EmitError::Closed,
        StoreError::Fenced { .. } => {
            // Taken over by another replica: nothing more of this turn is written.
            view.lease = None;
            view.store_error = Some(refusal(e));
            EmitError::Unavailable(e.to_string())
        }
        _ => {
            view.store_error = Some(refusal(e));
            EmitError::Unavailable(e.to_string())
        }
    };
    if let Some(epoch) = queued_in
        && view.epoch == epoch
    {
        view.epoch += 1;
        view.pending = None;
        view.write_failure = Some(error.clone());
    }
    error
}

/// A new task the store refused: the request that started it fails with the refusal.
fn publish_failed(live: &LiveTask, error: &StoreError) -> EmitError {
    live.view.lock().early_error = Some(refusal(error));
    live.changed.notify_waiters();
    EmitError::Unavailable(error.to_string())
}

/// Marks a task gone (expired, or no longer in the store): its turn is aborted, its
/// subscribers end, its waiters wake.
fn forget(live: &LiveTask) {
    let running = {
        let mut view = live.view.lock();
        view.gone = true;
        view.broadcast(LiveItem::Gone);
        view.running.take()
    };
    if let Some(running) = running {
        running.abort();
    }
    live.changed.notify_waiters();
}

/// Records a direct reply to a new request: the only event such a request gets.
fn reply(live: &LiveTask, mut message: Message) {
    message.context_id = live.context_id.to_string();
    message.task_id.clear();
    if message.role == Role::Unspecified {
        message.role = Role::Agent;
    }
    let mut view = live.view.lock();
    view.reply = Some(message.clone());
    view.broadcast(LiveItem::Reply(Arc::new(message)));
    drop(view);
    live.changed.notify_waiters();
}

fn fill_ids(live: &LiveTask, message: &mut Message) {
    message.context_id = live.context_id.to_string();
    message.task_id = live.key.id.to_string();
    if message.role == Role::Unspecified {
        message.role = Role::Agent;
    }
}

/// Adds, replaces or extends the artifact with `artifact`'s id. A new or replacing artifact
/// is shared with its event, not copied.
fn merge_artifact(artifacts: &mut Vec<Arc<Artifact>>, artifact: &Arc<Artifact>, append: bool) {
    match artifacts
        .iter_mut()
        .find(|a| a.artifact_id == artifact.artifact_id)
    {
        Some(existing) if append => Arc::make_mut(existing)
            .parts
            .extend(artifact.parts.iter().cloned()),
        Some(existing) => *existing = artifact.clone(),
        None => artifacts.push(artifact.clone()),
    }
}

/// The checks an event passes before anything is published.
fn validate(event: &AgentEvent) -> Result<(), EmitError> {
    let invalid = |why: &str| Err(EmitError::Invalid(why.into()));
    match event {
        AgentEvent::Message(m) if m.parts.is_empty() => {
            invalid("a message needs at least one part")
        }
        AgentEvent::Status {
            state: TaskState::Unspecified,
            ..
        } => invalid("TASK_STATE_UNSPECIFIED is not a state to report"),
        AgentEvent::Artifact { artifact, .. } if artifact.artifact_id.is_empty() => {
            invalid("an artifact needs an artifactId")
        }
        AgentEvent::Artifact { artifact, .. } if artifact.parts.is_empty() => {
            invalid("an artifact needs at least one part")
        }
        _ => Ok(()),
    }
}

/// A hold on a task's lease ([`TaskManager::hold_lease`]), let go when dropped.
#[derive(Debug)]
pub(crate) struct LeaseHold(Arc<LiveTask>);

impl Drop for LeaseHold {
    fn drop(&mut self) {
        let mut view = self.0.view.lock();
        view.lease_holds = view.lease_holds.saturating_sub(1);
    }
}

/// A store failure as the caller's answer: 503 with a retry hint.
pub(crate) fn refusal(error: &StoreError) -> A2aError {
    match error {
        StoreError::Full {
            retry_after_secs, ..
        } => A2aError::new(ErrorKind::Unavailable, error.to_string())
            .with_reason("TASK_STORE_FULL")
            .with_meta("retryAfterSeconds", retry_after_secs.to_string()),
        _ => A2aError::new(ErrorKind::Unavailable, error.to_string())
            .with_reason("TASK_STORE_UNAVAILABLE")
            .with_meta("retryAfterSeconds", "1"),
    }
}

/// A store failure while reading.
pub(crate) fn store_error(error: StoreError) -> A2aError {
    refusal(&error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::turn::finish_turn;

    /// A task whose creation and one event on top of it are queued (in epoch 0), as
    /// `apply` leaves it on a store that commits writes together.
    fn queued_task(map: &Arc<LiveTasks>) -> (Arc<LiveTask>, Stored, Stored) {
        let task = Arc::new(Task::new(
            "t",
            "c",
            TaskStatus::now(TaskState::Submitted, None),
        ));
        let live = map.follow("", task.clone(), 0, false, None);
        {
            let mut view = live.view.lock();
            view.publish_queued = true;
            view.in_flight = 2;
            view.turns_started = 1;
        }
        let mut working = (*task).clone();
        working.status = TaskStatus::now(TaskState::Working, None);
        let on_top = Stored {
            event: Arc::new(Event::new(Arc::new(StreamResponse::Task(Arc::new(
                working.clone(),
            ))))),
            task: Arc::new(working),
            changes_status: true,
            creates: false,
        };
        (live, Stored::creation(task), on_top)
    }

    fn down() -> Result<u64, StoreError> {
        Err(StoreError::Unavailable(
            "the task store is unavailable".into(),
        ))
    }

    /// Whichever of the two failures is answered first, the request that started the task
    /// learns that the store refused it, not that the agent produced nothing.
    #[test]
    fn a_refused_creation_is_the_requests_answer_in_either_order() {
        let map = LiveTasks::new();
        for creation_first in [true, false] {
            let (live, creation, on_top) = queued_task(&map);
            if creation_first {
                let _ = settle(&live, down(), creation, Some(0));
                let _ = settle(&live, down(), on_top, Some(0));
            } else {
                let _ = settle(&live, down(), on_top, Some(0));
                let _ = settle(&live, down(), creation, Some(0));
            }
            finish_turn(&live, 1);
            let view = live.view.lock();
            assert!(!view.published);
            let early = view.early_error.as_ref().expect("an answer");
            assert_eq!(
                early.reason,
                Some("TASK_STORE_UNAVAILABLE"),
                "creation first: {creation_first}: {early:?}"
            );
        }
    }
}
