//! Push notifications: each task's configs (where the server sends the task's events when
//! nobody is connected, A2A's `TaskPushNotificationConfig`) and the delivery outbox.
//!
//! The store keeps each config as the server hands it over — its id and its text (the
//! config's JSON, credentials included, which only the deliveries read: the server never
//! echoes them) — and forgets the configs with their task. A task keeps at most as many
//! configs as the writer says ([`crate::StoreError::PushConfigLimit`] beyond), counted in the
//! same step as the insert, so writers at once, in one process or on several replicas, never
//! pass the limit.
//!
//! **The outbox.** Every event appended to a task that has configs gets one [`Delivery`] per
//! config, written in the same step as the event (a store never acknowledges an event whose
//! deliveries it could lose). Deliverers [`PushStore::claim_deliveries`] the rows that are
//! due, each under a lease, send them, and [`PushStore::finish_deliveries`]: delivered,
//! retried later, or dead. Only the oldest pending row of each (task, config) is ever
//! claimed, so a receiver gets a task's events in order; and a row leased to one deliverer is
//! not claimed by another until the lease runs out (several processes on one database never
//! send a row twice at once). Deliveries, like configs, go with their task.

use crate::StoreFuture;
use crate::types::TaskKey;
use bytes::Bytes;
use std::sync::Arc;

/// One push-notification config of a task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushConfig {
    /// Its id, unique per task.
    pub id: String,
    /// The config as ProtoJSON (`TaskPushNotificationConfig`), credentials and token included.
    pub config: Arc<str>,
    /// When it was first stored (ms since the Unix epoch); a replacement keeps it.
    pub created_ms: u64,
}

/// Where push-notification configs live, beside the tasks. Every method is a whole
/// operation.
pub trait PushConfigStore: Send + Sync + std::fmt::Debug {
    /// Keeps `config` for the task `key`, replacing the one with its id. A config with a new
    /// id is refused with [`crate::StoreError::PushConfigLimit`] while the task keeps `max_per_task`
    /// already; a task that does not exist is [`crate::StoreError::NotFound`].
    fn put_push_config(
        &self,
        key: &TaskKey,
        config: PushConfig,
        max_per_task: usize,
    ) -> StoreFuture<'_, ()>;

    /// The config `id` of the task `key`, if both exist.
    fn get_push_config(&self, key: &TaskKey, id: &str) -> StoreFuture<'_, Option<PushConfig>>;

    /// The configs of the task `key`, oldest first (ties by id); none for a task that does
    /// not exist.
    fn list_push_configs(&self, key: &TaskKey) -> StoreFuture<'_, Vec<PushConfig>>;

    /// Forgets the config `id` of the task `key`; true when there was one.
    fn delete_push_config(&self, key: &TaskKey, id: &str) -> StoreFuture<'_, bool>;
}

/// Orders configs as [`PushConfigStore::list_push_configs`] lists them.
pub fn sort_configs(configs: &mut [PushConfig]) {
    configs.sort_by(|a, b| (a.created_ms, &a.id).cmp(&(b.created_ms, &b.id)));
}

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeliveryStatus {
    /// Not delivered yet: due at its time (or leased to a deliverer now).
    Pending,
    /// The receiver took it (answered 2xx).
    Delivered,
    /// Given up on: the attempts or the age ran out, or the receiver refused it for good.
    /// Only a redelivery sends it again.
    Dead,
}

impl DeliveryStatus {
    /// Its name, as stores keep it and the CLI shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Pending => "pending",
            DeliveryStatus::Delivered => "delivered",
            DeliveryStatus::Dead => "dead",
        }
    }

    /// The status named `name` ([`DeliveryStatus::as_str`]).
    pub fn parse(name: &str) -> Option<DeliveryStatus> {
        match name {
            "pending" => Some(DeliveryStatus::Pending),
            "delivered" => Some(DeliveryStatus::Delivered),
            "dead" => Some(DeliveryStatus::Dead),
            _ => None,
        }
    }
}

/// One row of the outbox: event `seq` of a task, to its config `config_id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// Its id, made by the store when the event was written; the same on every attempt (the
    /// receiver's key for dropping duplicates).
    pub id: String,
    /// The config it goes to.
    pub config_id: String,
    /// The event's sequence number in its task.
    pub seq: u64,
    /// Where it stands.
    pub status: DeliveryStatus,
    /// Attempts so far (a claim counts as one: a deliverer that dies while sending used it).
    pub attempts: u32,
    /// When it may be attempted next (ms since the epoch; 0: at once).
    pub due_ms: u64,
    /// When it was first attempted (its age counts from then).
    pub first_attempt_ms: Option<u64>,
    /// When it was delivered or given up on.
    pub done_ms: Option<u64>,
    /// Why the last attempt failed.
    pub last_error: Option<String>,
}

/// A delivery claimed to be sent now.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimedDelivery {
    /// Its task.
    pub key: TaskKey,
    /// The row as claimed (the claim counted in `attempts`).
    pub delivery: Delivery,
    /// Its config's text as stored (the current one, when it was replaced since).
    pub config: Arc<str>,
    /// The event's ProtoJSON, as stored.
    pub event: Bytes,
}

/// How an attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeliveryOutcome {
    /// The receiver took it.
    Delivered,
    /// It failed; attempt it again at `due_ms`.
    Retry {
        /// When.
        due_ms: u64,
        /// Why it failed.
        error: String,
    },
    /// It failed for good.
    Dead {
        /// Why.
        error: String,
    },
}

/// A finished attempt: which delivery, under which lease, and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinishedDelivery {
    /// Its task.
    pub key: TaskKey,
    /// The delivery.
    pub id: String,
    /// The lease it was claimed under: a lease that ran out (and another deliverer's claim
    /// since) leaves the row to that other deliverer.
    pub lease: String,
    /// How it ended.
    pub outcome: DeliveryOutcome,
}

/// How many deliveries of every task are pending and dead now (what the metrics show).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DeliveryCounts {
    /// Not delivered yet.
    pub pending: u64,
    /// Given up on.
    pub dead: u64,
}

/// A store that keeps push configs and their outbox (see the module docs).
pub trait PushStore: PushConfigStore {
    /// Claims up to `limit` due deliveries under `lease` until `lease_until_ms`: the oldest
    /// pending row of each (task, config) whose `due_ms` is at or before `now_ms` and that
    /// no unexpired lease holds. Each claim counts as an attempt.
    fn claim_deliveries(
        &self,
        now_ms: u64,
        lease: &str,
        lease_until_ms: u64,
        limit: usize,
    ) -> StoreFuture<'_, Vec<ClaimedDelivery>>;

    /// Records how attempts ended (at `now_ms`); a row no longer under the named lease is
    /// left alone.
    fn finish_deliveries(
        &self,
        finished: Vec<FinishedDelivery>,
        now_ms: u64,
    ) -> StoreFuture<'_, ()>;

    /// The deliveries of the task `key`, by sequence number then config (oldest first).
    fn list_deliveries(&self, key: &TaskKey) -> StoreFuture<'_, Vec<Delivery>>;

    /// Sends the delivery `id` of the task `key` again: pending, due at once, its attempts
    /// and age counted afresh. False when the task has no such delivery.
    fn redeliver(&self, key: &TaskKey, id: &str) -> StoreFuture<'_, bool>;

    /// Pending and dead deliveries now, of every task.
    fn count_deliveries(&self) -> StoreFuture<'_, DeliveryCounts>;
}

/// Orders deliveries as [`PushStore::list_deliveries`] lists them.
pub fn sort_deliveries(deliveries: &mut [Delivery]) {
    deliveries.sort_by(|a, b| (a.seq, &a.config_id).cmp(&(b.seq, &b.config_id)));
}
