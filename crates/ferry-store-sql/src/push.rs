//! Push-notification configs in the `push_configs` table: [`ferry_store::push::PushConfigStore`]
//! for both databases, written once (the same SQL text; `$1` placeholders).
//!
//! Like profiles, config writes are rare and single-row: each runs on the read pool by
//! itself. A put reads its task with [`Dialect::LOCK_TASK`] in a write transaction, so the
//! writers of one task's configs (in this process or another replica) wait for each other,
//! and the count against the limit and the insert are one step.

use crate::dialect::Dialect;
use crate::store::{SqlStore, stored};
use ferry_store::StoreError;
use ferry_store::TaskKey;
use ferry_store::push::PushConfig;
use sqlx::Connection;
use sqlx::{ColumnIndex, Decode, Encode, Executor, IntoArguments, Row, Type};

/// The columns a config is read from, in this order.
const COLUMNS: &str = "id, config, created_ms";

/// What a put came to.
enum Put {
    Done,
    NoTask,
    OverLimit,
}

impl<DB> SqlStore<DB>
where
    DB: Dialect,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB>,
    for<'q> i64: Encode<'q, DB> + Type<DB>,
    for<'q> Option<i64>: Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'q> bool: Encode<'q, DB> + Type<DB>,
    for<'r> i64: Decode<'r, DB>,
    for<'r> Option<i64>: Decode<'r, DB>,
    for<'r> &'r str: Decode<'r, DB>,
    for<'r> bool: Decode<'r, DB>,
    usize: ColumnIndex<DB::Row>,
{
    fn push_config_of(&self, row: &DB::Row) -> Result<PushConfig, StoreError> {
        let decode = |e: sqlx::Error| self.failed(&e);
        let id: &str = row.try_get(0).map_err(decode)?;
        let config: &str = row.try_get(1).map_err(decode)?;
        let created_ms: i64 = row.try_get(2).map_err(decode)?;
        Ok(PushConfig {
            id: id.to_owned(),
            config: config.into(),
            created_ms: u64::try_from(created_ms).unwrap_or(0),
        })
    }

    pub(crate) async fn put_push_config(
        &self,
        key: &TaskKey,
        config: &PushConfig,
        max_per_task: usize,
    ) -> Result<(), StoreError> {
        let put = self
            .on_reads_writing(async |conn| {
                put_within_limit::<DB>(conn, key, config, max_per_task).await
            })
            .await?;
        match put {
            Put::Done => Ok(()),
            Put::NoTask => Err(StoreError::NotFound(key.id.to_string())),
            Put::OverLimit => Err(StoreError::PushConfigLimit {
                limit: max_per_task,
            }),
        }
    }

    pub(crate) async fn get_push_config(
        &self,
        key: &TaskKey,
        id: &str,
    ) -> Result<Option<PushConfig>, StoreError> {
        Ok(self.select_push_configs(key, Some(id)).await?.pop())
    }

    pub(crate) async fn list_push_configs(
        &self,
        key: &TaskKey,
    ) -> Result<Vec<PushConfig>, StoreError> {
        self.select_push_configs(key, None).await
    }

    /// The configs of the task `key` (only `id`, when given), oldest first.
    async fn select_push_configs(
        &self,
        key: &TaskKey,
        id: Option<&str>,
    ) -> Result<Vec<PushConfig>, StoreError> {
        let only = if id.is_some() { " AND id = $3" } else { "" };
        let sql = format!(
            "SELECT {COLUMNS} FROM push_configs WHERE tenant = $1 AND task_id = $2{only} \
             ORDER BY created_ms, id"
        );
        let mut query = sqlx::query::<DB>(&sql)
            .bind(key.tenant.as_str())
            .bind(&*key.id);
        if let Some(id) = id {
            query = query.bind(id);
        }
        let rows = self
            .on_reads(async |conn| query.fetch_all(conn).await)
            .await?;
        rows.iter().map(|row| self.push_config_of(row)).collect()
    }

    pub(crate) async fn delete_push_config(
        &self,
        key: &TaskKey,
        id: &str,
    ) -> Result<bool, StoreError> {
        self.on_reads_writing(async |conn| delete_with_deliveries::<DB>(conn, key, id).await)
            .await
    }
}

/// Deletes the config `id` of the task `key` and its deliveries, in one transaction; true
/// when there was one.
async fn delete_with_deliveries<DB>(
    conn: &mut DB::Connection,
    key: &TaskKey,
    id: &str,
) -> Result<bool, sqlx::Error>
where
    DB: Dialect,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
{
    let mut tx = conn.begin_with(DB::BEGIN_WRITE).await?;
    let done = sqlx::query::<DB>(
        "DELETE FROM push_configs WHERE tenant = $1 AND task_id = $2 AND id = $3",
    )
    .bind(key.tenant.as_str())
    .bind(&*key.id)
    .bind(id)
    .execute(&mut *tx)
    .await?;
    sqlx::query::<DB>(
        "DELETE FROM push_deliveries WHERE tenant = $1 AND task_id = $2 AND config_id = $3",
    )
    .bind(key.tenant.as_str())
    .bind(&*key.id)
    .bind(id)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(DB::rows_affected(&done) > 0)
}

/// Replaces the config of its id, or adds it while the task keeps fewer than `max_per_task`:
/// one transaction that holds the task first.
async fn put_within_limit<DB>(
    conn: &mut DB::Connection,
    key: &TaskKey,
    config: &PushConfig,
    max_per_task: usize,
) -> Result<Put, sqlx::Error>
where
    DB: Dialect,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB>,
    for<'q> i64: Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
{
    let (tenant, task) = (key.tenant.as_str(), &*key.id);
    let mut tx = conn.begin_with(DB::BEGIN_WRITE).await?;
    let held = sqlx::query::<DB>(DB::LOCK_TASK)
        .bind(tenant)
        .bind(task)
        .fetch_optional(&mut *tx)
        .await?;
    if held.is_none() {
        tx.rollback().await?;
        return Ok(Put::NoTask);
    }
    let replaced = sqlx::query::<DB>(
        "UPDATE push_configs SET config = $4 WHERE tenant = $1 AND task_id = $2 AND id = $3",
    )
    .bind(tenant)
    .bind(task)
    .bind(config.id.as_str())
    .bind(&*config.config)
    .execute(&mut *tx)
    .await?;
    if DB::rows_affected(&replaced) == 0 {
        let added = sqlx::query::<DB>(
            "INSERT INTO push_configs (tenant, task_id, id, config, created_ms) \
             SELECT $1, $2, $3, $4, $5 \
             WHERE (SELECT count(*) FROM push_configs WHERE tenant = $1 AND task_id = $2) < $6",
        )
        .bind(tenant)
        .bind(task)
        .bind(config.id.as_str())
        .bind(&*config.config)
        .bind(stored(config.created_ms))
        .bind(i64::try_from(max_per_task).unwrap_or(i64::MAX))
        .execute(&mut *tx)
        .await?;
        if DB::rows_affected(&added) == 0 {
            tx.rollback().await?;
            return Ok(Put::OverLimit);
        }
    }
    tx.commit().await?;
    Ok(Put::Done)
}

/// The `PushConfigStore` of a database's store type, delegating to its `inner: SqlStore<DB>`.
macro_rules! delegate_push_config_store {
    ($store:ty) => {
        impl ferry_store::push::PushConfigStore for $store {
            fn put_push_config(
                &self,
                key: &ferry_store::TaskKey,
                config: ferry_store::push::PushConfig,
                max_per_task: usize,
            ) -> ferry_store::StoreFuture<'_, ()> {
                let key = key.clone();
                Box::pin(async move {
                    self.inner
                        .put_push_config(&key, &config, max_per_task)
                        .await
                })
            }

            fn get_push_config(
                &self,
                key: &ferry_store::TaskKey,
                id: &str,
            ) -> ferry_store::StoreFuture<'_, Option<ferry_store::push::PushConfig>> {
                let (key, id) = (key.clone(), id.to_owned());
                Box::pin(async move { self.inner.get_push_config(&key, &id).await })
            }

            fn list_push_configs(
                &self,
                key: &ferry_store::TaskKey,
            ) -> ferry_store::StoreFuture<'_, Vec<ferry_store::push::PushConfig>> {
                let key = key.clone();
                Box::pin(async move { self.inner.list_push_configs(&key).await })
            }

            fn delete_push_config(
                &self,
                key: &ferry_store::TaskKey,
                id: &str,
            ) -> ferry_store::StoreFuture<'_, bool> {
                let (key, id) = (key.clone(), id.to_owned());
                Box::pin(async move { self.inner.delete_push_config(&key, &id).await })
            }
        }
    };
}
pub(crate) use delegate_push_config_store;
