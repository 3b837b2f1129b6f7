//! Following the writes of other replicas of the server (processes that share the store).
//!
//! A turn runs on the replica that received its message, so the others learn of its events
//! only through the store. Each notice the store gives ([`Notice`]) is a wake-up: the task it
//! names, if followed here (by a subscriber, a blocked caller), is read again from the store
//! and its subscribers get the events they have not seen ([`TaskManager::refresh`]). Notices
//! can be lost, so every followed task is also read again when the store says some were
//! missed, and at a bounded interval (the safety poll).

use crate::core::manager::TaskManager;
use crate::core::turn::cancel_turn;
use ferry_store::replicas::{Notice, Notices};
use futures_util::{FutureExt, StreamExt};
use std::sync::Arc;
use std::time::Duration;

/// Follows `notices` until the stream ends, reading every followed task again at least
/// every `safety_poll`.
///
/// Notices come in bursts (a busy replica writes many tasks per batch), so each round takes
/// every notice already queued, keeps the last of each task, and reads the tasks it names
/// again side by side ([`REFRESHES_AT_ONCE`]): one slow read does not hold up the rest, and a
/// task written ten times since the last round is read once.
pub(crate) async fn follow(manager: Arc<TaskManager>, mut notices: Notices, safety_poll: Duration) {
    let mut poll = tokio::time::interval(safety_poll.max(Duration::from_millis(100)));
    poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let first = tokio::select! {
            notice = notices.next() => match notice {
                Some(notice) => notice,
                None => return,
            },
            _ = poll.tick() => {
                manager.refresh_all().await;
                continue;
            }
        };
        let mut round = Round::default();
        round.add(&manager, first);
        while round.notices < ROUND_NOTICES {
            match notices.next().now_or_never() {
                Some(Some(notice)) => round.add(&manager, notice),
                Some(None) => return,
                None => break,
            }
        }
        round.run(&manager).await;
    }
}

/// Notices taken into one round at most.
const ROUND_NOTICES: usize = 1024;

/// Followed tasks read again at once.
const REFRESHES_AT_ONCE: usize = 16;

/// What one round of notices asks for.
#[derive(Default)]
struct Round {
    notices: usize,
    /// Followed tasks written elsewhere, each at the last event a notice named.
    written: std::collections::HashMap<ferry_store::TaskKey, u64>,
    cancels: Vec<ferry_store::TaskKey>,
    missed: bool,
}

impl Round {
    fn add(&mut self, manager: &TaskManager, notice: Notice) {
        self.notices += 1;
        match notice {
            Notice::Wrote { key, seq, sent_ms } => {
                let late = manager.now_ms().saturating_sub(sent_ms);
                manager.replica_counters.heard(Duration::from_millis(late));
                let at = self.written.entry(key).or_default();
                *at = (*at).max(seq);
            }
            Notice::CancelRequested { key } => self.cancels.push(key),
            Notice::Missed => self.missed = true,
        }
    }

    async fn run(self, manager: &TaskManager) {
        for key in &self.cancels {
            cancel_here(manager, key).await;
        }
        if self.missed {
            manager.refresh_all().await;
            return;
        }
        let behind = self.written.into_iter().filter_map(|(key, seq)| {
            let live = manager.live(&key)?;
            let seen = live.view.lock().seq;
            (seen < seq).then_some(live)
        });
        futures_util::stream::iter(behind)
            .for_each_concurrent(REFRESHES_AT_ONCE, |live| async move {
                if let Err(e) = manager.refresh(&live).await {
                    tracing::warn!(task = %live.key.id, error = %e, "could not follow another replica's write; the safety poll will");
                }
            })
            .await;
    }
}

/// Keeps this replica's leases (see `ferry_store::replicas`): every `heartbeat`, announces
/// this replica (reached at `url`), renews the leases of the turns running here, and takes
/// over the leases other replicas stopped renewing, ending their tasks
/// ([`TaskManager::take_over`]).
pub(crate) async fn keep_leases(manager: Arc<TaskManager>, heartbeat: Duration, url: String) {
    let mut tick = tokio::time::interval(heartbeat.max(Duration::from_millis(100)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(replicas) = manager.store().replicas() else {
            return;
        };
        let now = manager.now_ms();
        let until = manager.lease_until();
        if let Err(e) = replicas.announce(&url, now).await {
            tracing::warn!(error = %e, "could not announce this replica");
        }
        if let Err(e) = replicas.renew_leases(now, until).await {
            tracing::warn!(error = %e, "could not renew this replica's leases");
        }
        match replicas.cancels_requested().await {
            Ok(keys) => {
                for key in keys {
                    cancel_here(&manager, &key).await;
                }
            }
            Err(e) => tracing::warn!(error = %e, "could not look for cancels asked elsewhere"),
        }
        match replicas.take_expired(now, until, TAKEOVERS_PER_BEAT).await {
            Ok(expired) => {
                for (key, lease) in expired {
                    manager.take_over(&key, lease).await;
                }
            }
            Err(e) => tracing::warn!(error = %e, "could not look for leases that ran out"),
        }
    }
}

/// Leases taken over at most per heartbeat (the rest wait for the next).
const TAKEOVERS_PER_BEAT: usize = 64;

/// Cancels the turn of task `key` that runs here, as another replica asked: the turn is
/// aborted and the task ends CANCELED (the replica that asked answers with it).
async fn cancel_here(manager: &TaskManager, key: &ferry_store::TaskKey) {
    let Some(live) = manager.live(key) else {
        return;
    };
    if live.view.lock().lease.is_none() {
        return;
    }
    match cancel_turn(manager, &live).await {
        Ok(()) => tracing::info!(task = %key.id, "canceled a turn as another replica asked"),
        Err(e) => {
            tracing::warn!(task = %key.id, error = %e, "could not cancel a turn another replica asked to cancel")
        }
    }
    manager.release(&live).await;
}
