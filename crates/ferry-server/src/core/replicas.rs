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
use futures_util::StreamExt;
use std::sync::Arc;
use std::time::Duration;

/// Follows `notices` until the stream ends, reading every followed task again at least
/// every `safety_poll`.
pub(crate) async fn follow(manager: Arc<TaskManager>, mut notices: Notices, safety_poll: Duration) {
    let mut poll = tokio::time::interval(safety_poll.max(Duration::from_millis(100)));
    poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            notice = notices.next() => match notice {
                Some(Notice::Wrote { key, seq, sent_ms }) => {
                    let late = manager.now_ms().saturating_sub(sent_ms);
                    manager.replica_counters.heard(Duration::from_millis(late));
                    let Some(live) = manager.live(&key) else { continue };
                    if live.view.lock().seq >= seq {
                        continue;
                    }
                    if let Err(e) = manager.refresh(&live).await {
                        tracing::warn!(task = %key.id, error = %e, "could not follow another replica's write; the safety poll will");
                    }
                }
                Some(Notice::CancelRequested { key }) => cancel_here(&manager, &key).await,
                Some(Notice::Missed) => {
                    manager.refresh_all().await;
                }
                None => return,
            },
            _ = poll.tick() => {
                manager.refresh_all().await;
            }
        }
    }
}

/// Keeps this replica's leases (see `ferry_store::replicas`): every `heartbeat`, renews the
/// leases of the turns running here, and takes over the leases other replicas stopped
/// renewing, ending their tasks ([`TaskManager::take_over`]).
pub(crate) async fn keep_leases(manager: Arc<TaskManager>, heartbeat: Duration) {
    let mut tick = tokio::time::interval(heartbeat.max(Duration::from_millis(100)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(replicas) = manager.store().replicas() else {
            return;
        };
        let now = manager.now_ms();
        let until = manager.lease_until();
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
