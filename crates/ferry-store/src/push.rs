//! Push-notification configs, kept with their task: where the server sends the task's events
//! when nobody is connected (A2A's `TaskPushNotificationConfig`).
//!
//! The store keeps each config as the server hands it over — its id and its ProtoJSON,
//! credentials included, which only the deliveries read (the server never echoes them) — and
//! forgets the configs with their task. A task keeps at most as many configs as the writer
//! says ([`crate::StoreError::PushConfigLimit`] beyond), counted in the same step as the insert, so
//! writers at once, in one process or on several replicas, never pass the limit.

use crate::store::StoreFuture;
use crate::types::TaskKey;
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
