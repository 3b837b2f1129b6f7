//! Following the writes of other replicas of the server (processes that share the store).
//!
//! A turn runs on the replica that received its message, so the others learn of its events
//! only through the store. Each notice the store gives ([`Notice`]) is a wake-up: the task it
//! names, if followed here (by a subscriber, a blocked caller), is read again from the store
//! and its subscribers get the events they have not seen ([`TaskManager::refresh`]). Notices
//! can be lost, so every followed task is also read again when the store says some were
//! missed, and at a bounded interval (the safety poll).

use crate::core::manager::TaskManager;
use ferry_store::replicas::{Notice, Notices};
use futures_util::StreamExt;
use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Follows `notices` until the stream ends, reading every followed task again at least
/// every `safety_poll`.
pub(crate) async fn follow(manager: Arc<TaskManager>, mut notices: Notices, safety_poll: Duration) {
    let mut poll = tokio::time::interval(safety_poll.max(Duration::from_millis(100)));
    poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            notice = notices.next() => match notice {
                Some(Notice::Wrote { key, seq }) => {
                    let Some(live) = manager.live(&key) else { continue };
                    if live.view.lock().seq >= seq {
                        continue;
                    }
                    if let Err(e) = manager.refresh(&live).await {
                        tracing::warn!(task = %key.id, error = %e, "could not follow another replica's write; the safety poll will");
                    }
                }
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

/// What the replicas' work came to, for `/metrics`.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    leases: AtomicU64,
    takeovers: AtomicU64,
    catch_ups: AtomicU64,
}

impl Counters {
    /// A lease was taken for a follow-up or a cancel.
    pub(crate) fn leased(&self) {
        self.leases.fetch_add(1, Ordering::Relaxed);
    }

    /// A lease that ran out was taken over.
    pub(crate) fn took_over(&self) {
        self.takeovers.fetch_add(1, Ordering::Relaxed);
    }

    /// A followed task was read again after another replica's write.
    pub(crate) fn caught_up(&self) {
        self.catch_ups.fetch_add(1, Ordering::Relaxed);
    }

    /// The counters as Prometheus text; `fenced`: writes the store refused because their
    /// lease was over.
    pub(crate) fn render(&self, out: &mut String, fenced: u64) {
        let rows = [
            (
                "ferry_replica_leases_taken_total",
                "Leases this replica took on tasks other replicas had written (follow-ups, cancels).",
                self.leases.load(Ordering::Relaxed),
            ),
            (
                "ferry_replica_takeovers_total",
                "Leases of other replicas (or this one) that ran out and were taken over, ending their tasks.",
                self.takeovers.load(Ordering::Relaxed),
            ),
            (
                "ferry_replica_fenced_writes_total",
                "Writes of this replica refused because another replica had taken their task over.",
                fenced,
            ),
            (
                "ferry_replica_catch_ups_total",
                "Followed tasks read again after another replica wrote them.",
                self.catch_ups.load(Ordering::Relaxed),
            ),
        ];
        for (name, help, value) in rows {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}"
            );
        }
    }
}
