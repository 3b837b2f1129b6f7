//! The push-config operations (A2A §4.13, §9) and a send's inline config: checked, kept with
//! the task in the store, visible only to callers who see the task, shown without their
//! secrets.

use super::RequestHandler;
use crate::core::call::CallContext;
use crate::core::live::LiveTask;
use crate::core::manager::store_error;
use crate::push::PushService;
use crate::push::stored::{StoredConfig, Wire};
use crate::push::validate::validate;
use ferry_proto::{
    A2aError, ErrorKind, ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse, TaskPushNotificationConfig,
    TaskPushNotificationConfigRef,
};
use ferry_store::push::{PushConfig, PushStore};
use ferry_store::{StoreError, TaskKey};
use std::sync::Arc;

/// The most configs one page of ListTaskPushNotificationConfigs holds (and its default).
const MAX_PAGE: usize = 100;

impl RequestHandler {
    /// The push service and this agent's card URL, or PushNotificationNotSupported.
    fn push_service(&self) -> Result<(&Arc<PushService>, &str), A2aError> {
        self.push
            .as_ref()
            .map(|(service, issuer)| (service, issuer.as_str()))
            .ok_or_else(|| self.push_config_unsupported())
    }

    /// The store's configs and outbox.
    fn push_store(&self) -> Result<&dyn PushStore, A2aError> {
        self.manager
            .store()
            .push()
            .ok_or_else(|| self.push_config_unsupported())
    }

    /// Checks a config a caller sent (before anything is created for it).
    pub(super) fn check_push_config(
        &self,
        config: &TaskPushNotificationConfig,
    ) -> Result<(), A2aError> {
        let (service, _) = self.push_service()?;
        validate(config, &service.settings, service.sender.client())
    }

    /// The key of the task `id` if the caller sees it, else TaskNotFound.
    async fn visible_task(&self, call: &CallContext, id: &str) -> Result<TaskKey, A2aError> {
        self.check_tenant(call)?;
        let key = TaskKey::new(self.store_tenant(call), id);
        self.manager
            .snapshot(&key, self.viewer(call))
            .await?
            .map(|_| key)
            .ok_or_else(|| A2aError::task_not_found(id))
    }

    /// The stored form of `config` for the task `key`: an id given if it had none, the task
    /// named, the protocol of the call and this agent as the issuer.
    fn stored_config(
        &self,
        call: &CallContext,
        key: &TaskKey,
        mut config: TaskPushNotificationConfig,
    ) -> Result<(PushConfig, StoredConfig), A2aError> {
        let (_, issuer) = self.push_service()?;
        if config.id.is_empty() {
            config.id = crate::ids::time_ordered().to_string();
        }
        config.task_id = key.id.to_string();
        let stored = StoredConfig {
            config,
            wire: if call.v03 { Wire::V03 } else { Wire::V1 },
            issuer: issuer.to_owned(),
        };
        let kept = PushConfig {
            id: stored.config.id.clone(),
            config: stored.to_text(),
            created_ms: self.manager.now_ms(),
        };
        Ok((kept, stored))
    }

    /// Keeps `config` for the task `key`, within the per-task limit.
    async fn put(&self, key: &TaskKey, config: PushConfig) -> Result<(), A2aError> {
        let (service, _) = self.push_service()?;
        let limit = service.settings.max_configs_per_task;
        self.push_store()?
            .put_push_config(key, config, limit)
            .await
            .map_err(|e| match e {
                StoreError::NotFound(id) => A2aError::task_not_found(&id),
                StoreError::PushConfigLimit { limit } => A2aError::invalid_params(format!(
                    "task {} keeps {limit} push notification configs already, the most it may; \
                     delete one first",
                    key.id
                ))
                .with_violation("id", "over the limit of configs per task")
                .with_meta("limit", "max_configs_per_task"),
                other => store_error(other),
            })
    }

    /// A send's inline config: stored with a new task's creation, or at once for a task that
    /// exists.
    pub(super) async fn register_inline(
        &self,
        call: &CallContext,
        live: &Arc<LiveTask>,
        is_new: bool,
        config: TaskPushNotificationConfig,
    ) -> Result<(), A2aError> {
        let (service, _) = self.push_service()?;
        let (kept, _) = self.stored_config(call, &live.key, config)?;
        if is_new {
            live.view.lock().initial_push.push(kept);
        } else {
            self.put(&live.key, kept).await?;
        }
        let _ = live.push_wake.set(service.wake.clone());
        Ok(())
    }

    /// `CreateTaskPushNotificationConfig`: the config as stored, without its secrets.
    pub(super) async fn create_push_config(
        &self,
        call: &CallContext,
        config: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, A2aError> {
        self.check_push_config(&config)?;
        if config.task_id.is_empty() {
            return Err(
                A2aError::invalid_params("taskId is required").with_violation("taskId", "required")
            );
        }
        let key = self.visible_task(call, &config.task_id).await?;
        let (kept, stored) = self.stored_config(call, &key, config)?;
        self.put(&key, kept).await?;
        if let Ok((service, _)) = self.push_service()
            && let Some(live) = self.manager.live(&key)
        {
            let _ = live.push_wake.set(service.wake.clone());
        }
        Ok(stored.shown())
    }

    /// `GetTaskPushNotificationConfig`: TaskNotFound for an unknown config too (spec).
    pub(super) async fn get_push_config(
        &self,
        call: &CallContext,
        req: &TaskPushNotificationConfigRef,
    ) -> Result<TaskPushNotificationConfig, A2aError> {
        self.push_service()?;
        let key = self.visible_task(call, &req.task_id).await?;
        let found = self
            .push_store()?
            .get_push_config(&key, &req.id)
            .await
            .map_err(store_error)?
            .ok_or_else(|| {
                A2aError::new(
                    ErrorKind::TaskNotFound,
                    format!(
                        "task {:?} has no push notification config {:?}",
                        req.task_id, req.id
                    ),
                )
                .with_meta("taskId", &req.task_id)
            })?;
        shown(&found)
    }

    /// `ListTaskPushNotificationConfigs`: oldest first, a page at a time.
    pub(super) async fn list_push_configs(
        &self,
        call: &CallContext,
        req: &ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, A2aError> {
        self.push_service()?;
        let size = match req.page_size {
            0 => MAX_PAGE,
            n if (1..=MAX_PAGE as i32).contains(&n) => n as usize,
            n => {
                return Err(A2aError::invalid_params(format!(
                    "pageSize must be between 1 and {MAX_PAGE}, got {n}"
                ))
                .with_violation("pageSize", "out of range"));
            }
        };
        let start = match req.page_token.as_str() {
            "" => 0,
            token => page_start(token).ok_or_else(|| {
                A2aError::invalid_params("pageToken is not a token this server issued")
                    .with_violation("pageToken", "invalid")
            })?,
        };
        let key = self.visible_task(call, &req.task_id).await?;
        let all = self
            .push_store()?
            .list_push_configs(&key)
            .await
            .map_err(store_error)?;
        let configs = all
            .iter()
            .skip(start)
            .take(size)
            .map(shown)
            .collect::<Result<Vec<_>, _>>()?;
        let next = start + configs.len();
        Ok(ListTaskPushNotificationConfigsResponse {
            configs,
            next_page_token: if next < all.len() {
                page_token(next)
            } else {
                String::new()
            },
        })
    }

    /// `DeleteTaskPushNotificationConfig`: idempotent (a config gone already is no error).
    pub(super) async fn delete_push_config(
        &self,
        call: &CallContext,
        req: &TaskPushNotificationConfigRef,
    ) -> Result<(), A2aError> {
        self.push_service()?;
        let key = self.visible_task(call, &req.task_id).await?;
        self.push_store()?
            .delete_push_config(&key, &req.id)
            .await
            .map_err(store_error)?;
        Ok(())
    }
}

/// A stored config as the operations show it (no token, no credentials).
fn shown(kept: &PushConfig) -> Result<TaskPushNotificationConfig, A2aError> {
    StoredConfig::parse(&kept.config)
        .map(|stored| stored.shown())
        .map_err(A2aError::internal)
}

/// ListTaskPushNotificationConfigs page tokens: where the next page starts, opaque.
fn page_token(start: usize) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("push:{start}"))
}

fn page_start(token: &str) -> Option<usize> {
    use base64::Engine;
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .ok()?;
    String::from_utf8(raw)
        .ok()?
        .strip_prefix("push:")?
        .parse()
        .ok()
}

/// ferry's own reads and writes of a task's push deliveries (beside the A2A operations).
impl RequestHandler {
    /// The deliveries of the task `task_id` (the caller must see the task), oldest first.
    pub(crate) async fn push_deliveries(
        &self,
        call: &CallContext,
        task_id: &str,
    ) -> Result<Vec<ferry_store::push::Delivery>, A2aError> {
        call.access
            .authorize(ferry_proto::Operation::ListTaskPushNotificationConfigs)?;
        self.push_service()?;
        let key = self.visible_task(call, task_id).await?;
        self.push_store()?
            .list_deliveries(&key)
            .await
            .map_err(store_error)
    }

    /// Sends the delivery `id` of the task `task_id` again (pending at once).
    pub(crate) async fn redeliver_push(
        &self,
        call: &CallContext,
        task_id: &str,
        id: &str,
    ) -> Result<(), A2aError> {
        call.access
            .authorize(ferry_proto::Operation::CreateTaskPushNotificationConfig)?;
        let (service, _) = self.push_service()?;
        let key = self.visible_task(call, task_id).await?;
        let found = self
            .push_store()?
            .redeliver(&key, id)
            .await
            .map_err(store_error)?;
        if !found {
            return Err(A2aError::new(
                ErrorKind::TaskNotFound,
                format!("task {task_id:?} has no push delivery {id:?}"),
            )
            .with_meta("taskId", task_id));
        }
        service.wake.notify_one();
        Ok(())
    }
}
