//! Conversations → sessions: at most `max_contexts` at once, idle ones closed, dead ones
//! replaced.
//!
//! Each conversation — a contextId *of one caller in one tenant* ([`ConversationKey`]) —
//! owns one slot: two tenants, or two callers, that happen to use the same contextId never
//! share a page or a pending submit. A turn locks its slot for the whole turn (turns of one
//! conversation run one at a time, on the same page); different conversations never share
//! a lock, so there is no global lock on the turn path. The map of slots is touched only
//! to find or add a slot.

use crate::config::{FormsConfig, Isolation};
use crate::session::{Session, SessionError};
use crate::shown::ShownForm;
use ferry_browser::CdpEndpoint;
use ferry_browser::{Browser, LaunchOptions};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};
use tokio::sync::OwnedMutexGuard;

/// Whose conversation a session is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConversationKey {
    /// The tenant the request was routed to (empty when none).
    pub tenant: String,
    /// The authenticated caller, when the server names one.
    pub caller: Option<String>,
    /// The A2A contextId.
    pub context_id: String,
}

impl ConversationKey {
    /// The key of a turn: its tenant, caller and contextId.
    pub fn of(ctx: &ferry_agent::RequestContext) -> ConversationKey {
        ConversationKey {
            tenant: ctx.tenant.clone(),
            caller: ctx.caller.as_deref().map(str::to_owned),
            context_id: ctx.context_id.clone(),
        }
    }

    /// The key of `context_id` on a server without tenants and tokens: no tenant, and the
    /// server's one caller ([`ferry_agent::LOCAL_CALLER`]).
    pub fn context(context_id: &str) -> ConversationKey {
        ConversationKey {
            tenant: String::new(),
            caller: Some(ferry_agent::LOCAL_CALLER.to_owned()),
            context_id: context_id.to_owned(),
        }
    }
}

/// A submit a task asked for and that has not happened yet: waiting for the values still
/// missing (a follow-up that brings them continues toward the submit), or, once ferry has
/// shown the form ready, for `{"confirm": true}` (see the lifecycle in `turn`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PendingSubmit {
    /// The task that asked for it: only that task may confirm it, and canceling that task
    /// drops it.
    pub(crate) task_id: String,
    /// The form to submit (global index).
    pub(crate) form: usize,
    /// The form as ferry showed it ready, once only the confirmation is missing: a
    /// confirmation approves exactly this. `None` while something is still needed.
    pub(crate) shown_ready: Option<ShownForm>,
    /// The task's way through a multi-step form: steps passed, values for later steps.
    pub(crate) flow: crate::flow::Flow,
}

impl PendingSubmit {
    /// The task that asked for the submit.
    pub fn task_id(&self) -> &str {
        &self.task_id
    }

    /// The form to submit (its index among the page's forms, frames included).
    pub fn form(&self) -> usize {
        self.form
    }

    /// True when ferry has shown the form ready and only the confirmation is missing.
    pub fn is_ready(&self) -> bool {
        self.shown_ready.is_some()
    }
}

/// A new conversation was refused: every session is in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("all {max} browser sessions are in use; retry in {retry_after_secs} s")]
pub struct AtCapacity {
    /// The cap.
    pub max: usize,
    /// A hint for the caller.
    pub retry_after_secs: u64,
}

/// One conversation's slot.
#[derive(Debug, Default)]
pub struct Slot {
    /// The open session; `None` before the first turn and after a crash.
    pub session: Option<Session>,
    /// When the last turn ended.
    last_used: Option<Instant>,
}

/// A conversation's slot, held for one turn; when it is let go, the turn's end is noted
/// (idle time counts from there), whichever way the turn ended.
#[derive(Debug)]
pub struct SlotGuard(OwnedMutexGuard<Slot>);

impl std::ops::Deref for SlotGuard {
    type Target = Slot;
    fn deref(&self) -> &Slot {
        &self.0
    }
}

impl std::ops::DerefMut for SlotGuard {
    fn deref_mut(&mut self) -> &mut Slot {
        &mut self.0
    }
}

impl Drop for SlotGuard {
    fn drop(&mut self) {
        self.0.last_used = Some(Instant::now());
    }
}

/// The slots, the shared browser of context isolation, and the reaper.
#[derive(Debug)]
pub struct SessionPool {
    config: Arc<FormsConfig>,
    slots: Mutex<HashMap<ConversationKey, Arc<tokio::sync::Mutex<Slot>>>>,
    /// Pending submits by contextId, outside the slot lock so that a cancel never waits
    /// for a running turn.
    pending: Mutex<HashMap<ConversationKey, PendingSubmit>>,
    /// The browser process of each conversation's session (process isolation), readable
    /// while a turn holds the slot.
    pids: Mutex<HashMap<ConversationKey, u32>>,
    shared: tokio::sync::Mutex<Option<Arc<Browser>>>,
    /// How many conversations have a slot, for whoever waits for them to end.
    count: tokio::sync::watch::Sender<usize>,
}

impl SessionPool {
    /// A pool with an idle reaper running on the current tokio runtime (when there is one).
    pub fn new(config: Arc<FormsConfig>) -> Arc<SessionPool> {
        let pool = Arc::new(SessionPool {
            config,
            slots: Mutex::new(HashMap::new()),
            pending: Mutex::new(HashMap::new()),
            pids: Mutex::new(HashMap::new()),
            shared: tokio::sync::Mutex::new(None),
            count: tokio::sync::watch::Sender::new(0),
        });
        if tokio::runtime::Handle::try_current().is_ok() {
            tokio::spawn(reap(Arc::downgrade(&pool)));
        }
        pool
    }

    fn slots(&self) -> MutexGuard<'_, HashMap<ConversationKey, Arc<tokio::sync::Mutex<Slot>>>> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn pending_map(&self) -> MutexGuard<'_, HashMap<ConversationKey, PendingSubmit>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Conversations with a slot now.
    pub fn len(&self) -> usize {
        self.slots().len()
    }

    /// True when no conversation has a slot.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether conversation `key` has a slot (it has had a turn, and has not ended or idled
    /// out since).
    pub fn has_slot(&self, key: &ConversationKey) -> bool {
        self.slots().contains_key(key)
    }

    /// Returns once no conversation has a slot (every session closed: idle, ended by its
    /// face, or shut down).
    pub async fn wait_empty(&self) {
        let mut count = self.count.subscribe();
        let _ = count.wait_for(|n| *n == 0).await;
    }

    /// The slot of conversation `key`, locked for this turn. A new conversation beyond the
    /// cap is refused at once.
    pub async fn acquire(&self, key: &ConversationKey) -> Result<SlotGuard, AtCapacity> {
        let slot = {
            let mut slots = self.slots();
            match slots.get(key) {
                Some(slot) => slot.clone(),
                None => {
                    if slots.len() >= self.config.max_contexts {
                        return Err(AtCapacity {
                            max: self.config.max_contexts,
                            retry_after_secs: self.config.idle.as_secs().clamp(1, 30),
                        });
                    }
                    let slot = Arc::new(tokio::sync::Mutex::new(Slot::default()));
                    slots.insert(key.clone(), slot.clone());
                    self.count.send_replace(slots.len());
                    slot
                }
            }
        };
        Ok(SlotGuard(slot.lock_owned().await))
    }

    /// Makes sure the slot has a live session, opening (or replacing) one if needed.
    /// Returns true when a new session was opened.
    pub async fn ensure_session(
        &self,
        key: &ConversationKey,
        slot: &mut Slot,
        endpoint: Option<&CdpEndpoint>,
    ) -> Result<bool, SessionError> {
        if slot.session.as_ref().is_some_and(Session::is_alive) {
            return Ok(false);
        }
        if let Some(dead) = slot.session.take() {
            tracing::warn!("browser session died; opening a new one");
            dead.close().await;
        }
        let shared = match (self.config.isolation, endpoint) {
            (Isolation::Context, None) => Some(self.shared_browser().await?),
            _ => None,
        };
        let session = Session::open(&self.config, shared, endpoint).await?;
        let mut pids = self.pids.lock().unwrap_or_else(|p| p.into_inner());
        match session.browser_pid() {
            Some(pid) => pids.insert(key.clone(), pid),
            None => pids.remove(key),
        };
        drop(pids);
        tracing::debug!(context = %key.context_id, cold_start_ms = session.cold_start.as_millis() as u64, "browser session opened");
        slot.session = Some(session);
        Ok(true)
    }

    /// The shared browser of context isolation, (re)launched when absent or dead.
    async fn shared_browser(&self) -> Result<Arc<Browser>, SessionError> {
        let mut shared = self.shared.lock().await;
        if let Some(browser) = shared.as_ref().filter(|b| b.is_connected()) {
            return Ok(browser.clone());
        }
        let browser = Arc::new(
            Browser::launch(LaunchOptions {
                chrome_path: self.config.chrome_path.clone(),
                extra_args: self.config.chrome_args.clone(),
                resolver_belt: true,
                ..LaunchOptions::default()
            })
            .await?,
        );
        *shared = Some(browser.clone());
        Ok(browser)
    }

    /// The process id of the browser serving conversation `key` (its process group id), if
    /// it has its own.
    pub fn browser_pid(&self, key: &ConversationKey) -> Option<u32> {
        self.pids
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
            .copied()
    }

    /// The process id of the shared browser (context isolation), once it runs.
    pub fn shared_browser_pid(&self) -> Option<u32> {
        let shared = self.shared.try_lock().ok()?;
        shared.as_ref()?.process().map(|p| p.pid())
    }

    /// The pending submit of a conversation.
    pub fn pending(&self, key: &ConversationKey) -> Option<PendingSubmit> {
        self.pending_map().get(key).cloned()
    }

    /// Sets or clears the pending submit of a conversation.
    pub fn set_pending(&self, key: &ConversationKey, pending: Option<PendingSubmit>) {
        let mut map = self.pending_map();
        match pending {
            Some(p) => {
                map.insert(key.clone(), p);
            }
            None => {
                map.remove(key);
            }
        }
    }

    /// Drops the pending submit of conversation `key` if task `task_id` asked for it.
    pub fn cancel_pending(&self, key: &ConversationKey, task_id: &str) -> bool {
        let mut map = self.pending_map();
        if map.get(key).is_some_and(|p| p.task_id == task_id) {
            map.remove(key);
            return true;
        }
        false
    }

    /// Closes sessions idle for longer than the configured idle time; returns how many.
    pub async fn close_idle(&self) -> usize {
        self.close_idle_for(self.config.idle).await
    }

    /// Closes sessions idle for at least `idle` (the reaper passes the configured idle time;
    /// a test passes zero instead of waiting for it); returns how many. Sessions of turns in
    /// progress are never closed. Returns once their browsers have exited.
    pub async fn close_idle_for(&self, idle: Duration) -> usize {
        let candidates: Vec<(ConversationKey, Arc<tokio::sync::Mutex<Slot>>)> = self
            .slots()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut closed = 0;
        for (key, slot) in candidates {
            // A slot in use is not idle.
            let Ok(mut guard) = slot.try_lock() else {
                continue;
            };
            // A slot whose session never opened (or died) goes at once.
            let expired = guard
                .last_used
                .is_some_and(|t| guard.session.is_none() || t.elapsed() >= idle);
            if !expired {
                continue;
            }
            let session = guard.session.take();
            {
                let mut slots = self.slots();
                if slots.get(&key).is_some_and(|s| Arc::ptr_eq(s, &slot)) {
                    slots.remove(&key);
                }
            }
            self.set_pending(&key, None);
            self.pids
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&key);
            drop(guard);
            if let Some(session) = session {
                session.close().await;
            }
            // Counted once the browser is gone: a waiter sees the session ended.
            self.count.send_replace(self.len());
            tracing::debug!(context = %key.context_id, "idle browser session closed");
            closed += 1;
        }
        if closed > 0 && self.is_empty() {
            self.close_shared_browser().await;
        }
        closed
    }

    /// Stops the shared browser (context isolation) once no conversation uses it; the next
    /// conversation starts a new one.
    async fn close_shared_browser(&self) {
        let browser = self.shared.lock().await.take();
        if let Some(browser) = browser {
            match Arc::try_unwrap(browser) {
                Ok(browser) => {
                    browser.shutdown().await;
                    tracing::debug!("idle shared browser closed");
                }
                // Still held by a session being opened right now: keep it.
                Err(browser) => *self.shared.lock().await = Some(browser),
            }
        }
    }

    /// Ends conversation `key`: closes its session (waiting for a turn in progress to end)
    /// and forgets its slot and pending submit.
    pub async fn close(&self, key: &ConversationKey) {
        let slot = self.slots().remove(key);
        self.set_pending(key, None);
        self.pids
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(key);
        if let Some(slot) = slot {
            let session = slot.lock().await.session.take();
            if let Some(session) = session {
                session.close().await;
            }
        }
        if self.is_empty() {
            self.close_shared_browser().await;
        }
        // Counted once the browser is gone: a waiter sees the session ended.
        self.count.send_replace(self.len());
    }

    /// Closes every session and the shared browser.
    pub async fn shutdown(&self) {
        let slots: Vec<_> = self.slots().drain().map(|(_, v)| v).collect();
        for slot in slots {
            let session = slot.lock().await.session.take();
            if let Some(session) = session {
                session.close().await;
            }
        }
        self.close_shared_browser().await;
        self.count.send_replace(self.len());
    }
}

/// Closes idle sessions until the pool is dropped.
async fn reap(pool: Weak<SessionPool>) {
    let period = match pool.upgrade() {
        Some(pool) => {
            (pool.config.idle / 4).clamp(Duration::from_millis(200), Duration::from_secs(10))
        }
        None => return,
    };
    loop {
        tokio::time::sleep(period).await;
        let Some(pool) = pool.upgrade() else {
            return;
        };
        pool.close_idle().await;
    }
}
