//! The memory store's delivery outbox (see [`crate::push`]): the rows of every task that has
//! push configs, in process memory, lost on restart like the tasks themselves.
//!
//! The outbox has one lock of its own. Only appends to tasks that have configs take it (an
//! append to any other task never does), and it is always taken after a shard's lock, never
//! before one, so the two never wait for each other in a circle.

use crate::push::{Delivery, DeliveryCounts, DeliveryOutcome, DeliveryStatus, FinishedDelivery};
use crate::push::{PushConfig, sort_deliveries};
use crate::types::{TaskKey, TaskKeyHasher};
use bytes::Bytes;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;

/// One delivery with what sending it takes.
#[derive(Debug)]
struct Row {
    delivery: Delivery,
    /// The body (shared with the event's other readers).
    event: Bytes,
    /// The lease that holds it now, and until when.
    lease: Option<(String, u64)>,
}

/// The rows of one task, in the order they were written (sequence order per config).
#[derive(Debug, Default)]
struct TaskRows {
    rows: Vec<Row>,
    /// The rows before this one are all delivered or dead: claims and finishes look only
    /// from here on, so a long-lived task's history costs them nothing.
    settled: usize,
}

impl TaskRows {
    fn unsettled(&self) -> &[Row] {
        self.rows.get(self.settled..).unwrap_or_default()
    }

    fn pending(&self) -> usize {
        self.unsettled()
            .iter()
            .filter(|r| r.delivery.status == DeliveryStatus::Pending)
            .count()
    }

    /// Moves `settled` past the rows that are done.
    fn settle(&mut self) {
        while self
            .rows
            .get(self.settled)
            .is_some_and(|r| r.delivery.status != DeliveryStatus::Pending)
        {
            self.settled += 1;
        }
    }
}

/// A claim as the outbox makes it; the store adds the config's text.
#[derive(Debug)]
pub(crate) struct Claim {
    pub(crate) key: TaskKey,
    pub(crate) delivery: Delivery,
    pub(crate) event: Bytes,
}

/// Every task's deliveries.
#[derive(Debug)]
pub(crate) struct Outbox {
    tasks: HashMap<TaskKey, TaskRows, TaskKeyHasher>,
    /// The tasks that have pending rows: what a claim visits.
    waiting: HashSet<TaskKey, TaskKeyHasher>,
    /// Delivery ids: a random prefix per store, then a counter.
    id_prefix: u64,
    next_id: u64,
}

impl Default for Outbox {
    fn default() -> Self {
        Outbox {
            tasks: HashMap::default(),
            waiting: HashSet::default(),
            id_prefix: TaskKeyHasher::default().hash_one(0u8),
            next_id: 0,
        }
    }
}

impl Outbox {
    /// One pending delivery of event `seq` (its ProtoJSON `event`) to each of `configs`.
    pub(crate) fn add(&mut self, key: &TaskKey, configs: &[PushConfig], seq: u64, event: &Bytes) {
        let mut rows = Vec::with_capacity(configs.len());
        for config in configs {
            self.next_id += 1;
            rows.push(Row {
                delivery: Delivery {
                    id: format!("{:016x}{:016x}", self.id_prefix, self.next_id),
                    config_id: config.id.clone(),
                    seq,
                    status: DeliveryStatus::Pending,
                    attempts: 0,
                    due_ms: 0,
                    first_attempt_ms: None,
                    done_ms: None,
                    last_error: None,
                },
                event: event.clone(),
                lease: None,
            });
        }
        self.tasks.entry(key.clone()).or_default().rows.extend(rows);
        self.waiting.insert(key.clone());
    }

    /// Whether a task has deliveries not yet delivered nor dead.
    pub(crate) fn has_pending(&self, key: &TaskKey) -> bool {
        self.tasks.get(key).is_some_and(|task| task.pending() > 0)
    }

    /// Forgets a task's deliveries (the task went).
    pub(crate) fn forget_task(&mut self, key: &TaskKey) {
        if self.tasks.remove(key).is_some() {
            self.waiting.remove(key);
        }
    }

    /// Forgets the deliveries to one config (it was deleted).
    pub(crate) fn forget_config(&mut self, key: &TaskKey, config_id: &str) {
        if let Some(task) = self.tasks.get_mut(key) {
            task.rows.retain(|r| r.delivery.config_id != config_id);
            task.settled = 0;
            task.settle();
            if task.pending() == 0 {
                self.waiting.remove(key);
            }
        }
    }

    /// Claims up to `limit` due rows (see [`crate::push::PushStore::claim_deliveries`]).
    pub(crate) fn claim(
        &mut self,
        now_ms: u64,
        lease: &str,
        lease_until_ms: u64,
        limit: usize,
    ) -> Vec<Claim> {
        let mut claims = Vec::new();
        let mut idle = Vec::new();
        for key in &self.waiting {
            if claims.len() >= limit {
                break;
            }
            let Some(task) = self.tasks.get_mut(key) else {
                idle.push(key.clone());
                continue;
            };
            let mut seen: Vec<&str> = Vec::new();
            let mut heads = Vec::new();
            let from = task.settled;
            for (i, row) in task.unsettled().iter().enumerate() {
                let d = &row.delivery;
                if d.status != DeliveryStatus::Pending || seen.contains(&d.config_id.as_str()) {
                    continue;
                }
                seen.push(&d.config_id);
                let leased = row.lease.as_ref().is_some_and(|(_, until)| *until > now_ms);
                if d.due_ms <= now_ms && !leased {
                    heads.push(from + i);
                }
            }
            if seen.is_empty() {
                idle.push(key.clone());
            }
            for i in heads {
                if claims.len() >= limit {
                    break;
                }
                let row = &mut task.rows[i];
                let event = row.event.clone();
                row.lease = Some((lease.to_owned(), lease_until_ms));
                row.delivery.attempts = row.delivery.attempts.saturating_add(1);
                row.delivery.first_attempt_ms.get_or_insert(now_ms);
                claims.push(Claim {
                    key: key.clone(),
                    delivery: row.delivery.clone(),
                    event,
                });
            }
        }
        for key in idle {
            self.waiting.remove(&key);
        }
        claims
    }

    /// Records finished attempts (rows no longer under the named lease are left alone).
    pub(crate) fn finish(&mut self, finished: Vec<FinishedDelivery>, now_ms: u64) {
        for done in finished {
            let Some(task) = self.tasks.get_mut(&done.key) else {
                continue;
            };
            let from = task.settled;
            let row =
                task.rows.iter_mut().skip(from).find(|r| {
                    r.delivery.id == done.id && r.delivery.status == DeliveryStatus::Pending
                });
            let Some(row) = row else {
                continue;
            };
            if row
                .lease
                .as_ref()
                .is_none_or(|(lease, _)| *lease != done.lease)
            {
                continue;
            }
            row.lease = None;
            let d = &mut row.delivery;
            match done.outcome {
                DeliveryOutcome::Delivered => {
                    d.status = DeliveryStatus::Delivered;
                    d.done_ms = Some(now_ms);
                    d.last_error = None;
                }
                DeliveryOutcome::Retry { due_ms, error } => {
                    d.due_ms = due_ms;
                    d.last_error = Some(error);
                }
                DeliveryOutcome::Dead { error } => {
                    d.status = DeliveryStatus::Dead;
                    d.done_ms = Some(now_ms);
                    d.last_error = Some(error);
                }
            }
            task.settle();
        }
    }

    /// The deliveries of a task, oldest first.
    pub(crate) fn list(&self, key: &TaskKey) -> Vec<Delivery> {
        let mut all: Vec<Delivery> = self
            .tasks
            .get(key)
            .map(|t| t.rows.iter().map(|r| r.delivery.clone()).collect())
            .unwrap_or_default();
        sort_deliveries(&mut all);
        all
    }

    /// Makes the delivery `id` pending again (see [`crate::push::PushStore::redeliver`]).
    pub(crate) fn redeliver(&mut self, key: &TaskKey, id: &str) -> bool {
        let Some(task) = self.tasks.get_mut(key) else {
            return false;
        };
        let Some(at) = task.rows.iter().position(|r| r.delivery.id == id) else {
            return false;
        };
        task.settled = task.settled.min(at);
        let row = &mut task.rows[at];
        row.lease = None;
        let d = &mut row.delivery;
        d.status = DeliveryStatus::Pending;
        d.attempts = 0;
        d.due_ms = 0;
        d.first_attempt_ms = None;
        d.done_ms = None;
        self.waiting.insert(key.clone());
        true
    }

    /// Pending and dead rows now.
    pub(crate) fn counts(&self) -> DeliveryCounts {
        let mut counts = DeliveryCounts::default();
        for row in self.tasks.values().flat_map(|t| &t.rows) {
            match row.delivery.status {
                DeliveryStatus::Pending => counts.pending += 1,
                DeliveryStatus::Dead => counts.dead += 1,
                DeliveryStatus::Delivered => {}
            }
        }
        counts
    }
}
