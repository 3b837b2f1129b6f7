//! The deliverer: one task per server that takes due deliveries from the store's outbox and
//! sends them, many at once (`max_in_flight`), in order per (task, config) — the store hands
//! out only the oldest pending row of each, and the next only once it is finished.
//!
//! It claims rows under a lease of its own (twice the attempt timeout and then some), so a
//! row it holds is no other process's until it finishes it or dies; a process that dies
//! mid-send leaves the row to be claimed again when the lease runs out (the claim counted
//! as an attempt). Finished attempts are written back together. It looks at the outbox when
//! woken (an event of a task with configs was committed here, a config was created or
//! redelivered), when an attempt finished (the next row of that task is due), and every
//! `poll_secs` (rows that came due, rows of other processes).

use crate::histogram::Histogram;
use crate::push::PushService;
use crate::push::retry;
use crate::push::send::Attempt;
use crate::push::stored::StoredConfig;
use ferry_store::TaskStore;
use ferry_store::push::{ClaimedDelivery, DeliveryOutcome, FinishedDelivery, PushStore};
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use std::fmt::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Wall-clock milliseconds as the server's injected clock sees them.
pub(crate) type NowMs = Arc<dyn Fn() -> u64 + Send + Sync>;

/// Sends the outbox's deliveries (see the module docs).
pub(crate) struct Deliverer {
    pub(crate) store: Arc<dyn TaskStore>,
    /// The settings, the sender, the wake-up and the counters the handlers share.
    pub(crate) service: Arc<PushService>,
    pub(crate) now_ms: NowMs,
    /// This deliverer's lease name (a new one per process).
    pub(crate) lease: String,
}

impl std::fmt::Debug for Deliverer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deliverer")
            .field("lease", &self.lease)
            .finish_non_exhaustive()
    }
}

impl Deliverer {
    /// Delivers until `closing` turns true (attempts in flight then are left to their lease).
    pub(crate) async fn run(self, mut closing: tokio::sync::watch::Receiver<bool>) {
        let Some(push) = self.store.push() else {
            return;
        };
        let most = self.service.settings.max_in_flight.max(1);
        let poll = Duration::from_secs(self.service.settings.poll_secs.max(1));
        let mut in_flight = FuturesUnordered::new();
        loop {
            // Every turn of the loop follows something that may have made rows due: the
            // start, a finished attempt, a wake-up, the poll.
            if in_flight.len() < most {
                let room = most - in_flight.len();
                let claimed = self.claim(push, room).await;
                for claim in claimed {
                    in_flight.push(self.attempt(claim));
                }
            }
            tokio::select! {
                Some(first) = in_flight.next(), if !in_flight.is_empty() => {
                    let finished = gather(first, &mut in_flight).await;
                    if let Err(e) = push.finish_deliveries(finished, (self.now_ms)()).await {
                        tracing::warn!(error = %e, "recording push deliveries failed; their leases will run out");
                    }
                }
                // A full deliverer does not listen: the wake-up stays pending (a permit,
                // not a thread switch per event) until a slot frees.
                () = self.service.wake.notified(), if in_flight.len() < most => {}
                () = tokio::time::sleep(poll) => {}
                _ = closing.changed() => return,
            }
        }
    }

    /// Up to `room` due deliveries, leased to this deliverer.
    async fn claim(&self, push: &dyn PushStore, room: usize) -> Vec<ClaimedDelivery> {
        let now = (self.now_ms)();
        let lease_ms = self.service.settings.timeout_secs.max(1) * 2_000 + 5_000;
        match push
            .claim_deliveries(now, &self.lease, now + lease_ms, room)
            .await
        {
            Ok(claimed) => claimed,
            Err(e) => {
                tracing::warn!(error = %e, "claiming push deliveries failed");
                Vec::new()
            }
        }
    }

    /// One attempt of `claim`, and what it comes to.
    async fn attempt(&self, claim: ClaimedDelivery) -> FinishedDelivery {
        let started = std::time::Instant::now();
        let attempt = match StoredConfig::parse(&claim.config) {
            Ok(stored) => {
                let now_secs = i64::try_from((self.now_ms)() / 1_000).unwrap_or(i64::MAX);
                self.service.sender.send(&claim, &stored, now_secs).await
            }
            Err(error) => Attempt::Failed {
                error,
                retry_after: None,
                permanent: true,
            },
        };
        let outcome = match attempt {
            Attempt::Delivered => {
                self.service.metrics.delivered(started.elapsed());
                DeliveryOutcome::Delivered
            }
            Attempt::Failed {
                error,
                retry_after,
                permanent,
            } => self.after_failure(&claim, error, retry_after, permanent),
        };
        FinishedDelivery {
            key: claim.key,
            id: claim.delivery.id,
            lease: self.lease.clone(),
            outcome,
        }
    }

    /// A failed attempt: dead when it cannot succeed or its attempts or age ran out, else
    /// retried after the backoff (or the receiver's `Retry-After`).
    fn after_failure(
        &self,
        claim: &ClaimedDelivery,
        error: String,
        retry_after: Option<Duration>,
        permanent: bool,
    ) -> DeliveryOutcome {
        let delivery = &claim.delivery;
        let now = (self.now_ms)();
        let max_age_ms = self.service.settings.max_age_secs.saturating_mul(1_000);
        let age = now.saturating_sub(delivery.first_attempt_ms.unwrap_or(now));
        let given_up = if permanent {
            Some(error.clone())
        } else if delivery.attempts >= self.service.settings.max_attempts {
            Some(format!(
                "{error} (attempt {} of {})",
                delivery.attempts, self.service.settings.max_attempts
            ))
        } else if max_age_ms > 0 && age >= max_age_ms {
            Some(format!(
                "{error} (failing for {} s, the most is {})",
                age / 1_000,
                self.service.settings.max_age_secs
            ))
        } else {
            None
        };
        if let Some(error) = given_up {
            self.service.metrics.dead.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(task = %claim.key.id, delivery = %delivery.id, config = %delivery.config_id, %error, "push delivery is dead");
            return DeliveryOutcome::Dead { error };
        }
        self.service.metrics.retried.fetch_add(1, Ordering::Relaxed);
        let wait = retry::next_wait(
            delivery.attempts,
            Duration::from_secs(self.service.settings.max_backoff_secs.max(1)),
            retry::jitter(),
            retry_after,
        );
        let due_ms = now.saturating_add(u64::try_from(wait.as_millis()).unwrap_or(u64::MAX));
        tracing::debug!(task = %claim.key.id, delivery = %delivery.id, %error, wait_ms = wait.as_millis() as u64, "push delivery failed; retrying");
        DeliveryOutcome::Retry { due_ms, error }
    }
}

/// How long finished attempts are gathered, at most, so that one write records them all.
const FINISH_LINGER: Duration = Duration::from_millis(2);
/// The most finished attempts one write records.
const FINISH_BATCH: usize = 64;

/// `first` and the attempts of `in_flight` that finish within [`FINISH_LINGER`] (at most
/// [`FINISH_BATCH`]): under load the store records many at once, when idle `first` goes at
/// once.
async fn gather<F>(
    first: FinishedDelivery,
    in_flight: &mut FuturesUnordered<F>,
) -> Vec<FinishedDelivery>
where
    F: std::future::Future<Output = FinishedDelivery>,
{
    let mut finished = vec![first];
    let linger = tokio::time::sleep(FINISH_LINGER);
    tokio::pin!(linger);
    while finished.len() < FINISH_BATCH && !in_flight.is_empty() {
        tokio::select! {
            Some(more) = in_flight.next() => finished.push(more),
            () = &mut linger => break,
        }
    }
    finished
}

/// What the deliverer counts (the outbox's pending and dead rows are counted when scraped).
#[derive(Debug, Default)]
pub(crate) struct PushMetrics {
    delivered: AtomicU64,
    retried: AtomicU64,
    dead: AtomicU64,
    latency: Histogram,
}

impl PushMetrics {
    fn delivered(&self, took: Duration) {
        self.delivered.fetch_add(1, Ordering::Relaxed);
        self.latency.observe(took);
    }

    /// The Prometheus text of these counters and of the outbox's `pending` and `dead` rows.
    pub(crate) fn render(&self, out: &mut String, pending: u64, dead_rows: u64) {
        let delivered = self.delivered.load(Ordering::Relaxed);
        let _ = writeln!(
            out,
            "# HELP ferry_push_deliveries_pending Push deliveries not delivered yet."
        );
        let _ = writeln!(out, "# TYPE ferry_push_deliveries_pending gauge");
        let _ = writeln!(out, "ferry_push_deliveries_pending {pending}");
        let _ = writeln!(
            out,
            "# HELP ferry_push_deliveries_dead Push deliveries given up on (redeliver with ferry push-config redeliver)."
        );
        let _ = writeln!(out, "# TYPE ferry_push_deliveries_dead gauge");
        let _ = writeln!(out, "ferry_push_deliveries_dead {dead_rows}");
        for (name, help, value) in [
            (
                "delivered",
                "Push deliveries the receiver took (2xx).",
                delivered,
            ),
            (
                "retried",
                "Failed push attempts that will be tried again.",
                self.retried.load(Ordering::Relaxed),
            ),
            (
                "died",
                "Push deliveries given up on by this process.",
                self.dead.load(Ordering::Relaxed),
            ),
        ] {
            let _ = writeln!(out, "# HELP ferry_push_{name}_total {help}");
            let _ = writeln!(out, "# TYPE ferry_push_{name}_total counter");
            let _ = writeln!(out, "ferry_push_{name}_total {value}");
        }
        let _ = writeln!(
            out,
            "# HELP ferry_push_delivery_seconds Time of the attempts that delivered."
        );
        let _ = writeln!(out, "# TYPE ferry_push_delivery_seconds histogram");
        self.latency.render(out, "ferry_push_delivery_seconds", "");
    }
}
