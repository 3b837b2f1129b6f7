//! Task leases on PostgreSQL (see `ferry_store::replicas`): the statements that take, give
//! back, renew and take over a replica's hold on a task. Writes check and renew a lease in
//! the write batch itself (see the writer).
//!
//! Each statement is one `UPDATE`, so two replicas racing for a lease are ordered by the
//! row lock: one gets it, the other finds it held. The statements that touch several rows
//! (renewing, taking over) lock them in key order, the order write batches lock them in, and
//! skip rows locked by someone else (`SKIP LOCKED`): a write batch renews its task's lease
//! itself, and an expired lease skipped now is taken at the next heartbeat. Locking in another
//! order deadlocked with the write batches under load.

use crate::notices::Announcer;
use crate::store::{SqlStore, keys, stored};
use ferry_store::{Lease, StoreError, TaskKey};
use sqlx::{Postgres, Row};
use std::sync::Arc;

/// Loaded from a row's `BIGINT` (never negative in practice).
fn loaded(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

impl SqlStore<Postgres> {
    /// See `ReplicaStore::take_lease`.
    pub(crate) async fn take_lease(
        &self,
        replica: &Arc<str>,
        key: &TaskKey,
        until_ms: u64,
    ) -> Result<Option<Lease>, StoreError> {
        self.on_reads(async |conn| {
            let taken = sqlx::query::<Postgres>(
                "UPDATE tasks SET lease_replica = $3, lease_epoch = lease_epoch + 1, \
                     lease_until_ms = $4, cancel_requested = false \
                     WHERE tenant = $1 AND id = $2 \
                       AND (lease_replica IS NULL OR lease_replica = $3) \
                     RETURNING lease_epoch",
            )
            .bind(key.tenant.as_str())
            .bind(&*key.id)
            .bind(&**replica)
            .bind(stored(until_ms))
            .fetch_optional(&mut *conn)
            .await?;
            if let Some(row) = taken {
                return Ok(Ok(Some(Lease {
                    replica: replica.clone(),
                    epoch: loaded(row.try_get(0)?),
                    until_ms,
                    last: false,
                })));
            }
            let exists =
                sqlx::query::<Postgres>("SELECT 1 FROM tasks WHERE tenant = $1 AND id = $2")
                    .bind(key.tenant.as_str())
                    .bind(&*key.id)
                    .fetch_optional(&mut *conn)
                    .await?;
            Ok(match exists {
                Some(_) => Ok(None),
                None => Err(StoreError::NotFound(key.id.to_string())),
            })
        })
        .await?
    }

    /// See `ReplicaStore::release_lease`.
    pub(crate) async fn release_lease(&self, key: &TaskKey, epoch: u64) -> Result<(), StoreError> {
        self.on_reads(async |conn| {
            sqlx::query::<Postgres>(
                "UPDATE tasks SET lease_replica = NULL, lease_until_ms = NULL, \
                     lease_epoch = lease_epoch + 1 \
                     WHERE tenant = $1 AND id = $2 AND lease_epoch = $3",
            )
            .bind(key.tenant.as_str())
            .bind(&*key.id)
            .bind(stored(epoch))
            .execute(&mut *conn)
            .await?;
            Ok(())
        })
        .await
    }

    /// See `ReplicaStore::renew_leases`.
    pub(crate) async fn renew_leases(
        &self,
        replica: &str,
        now_ms: u64,
        until_ms: u64,
    ) -> Result<u64, StoreError> {
        self.on_reads(async |conn| {
            let done = sqlx::query::<Postgres>(
                "UPDATE tasks t SET lease_until_ms = $3 \
                 FROM (SELECT tenant, id FROM tasks \
                       WHERE lease_replica = $1 AND lease_until_ms >= $2 \
                       ORDER BY tenant, id FOR UPDATE SKIP LOCKED) r \
                 WHERE t.tenant = r.tenant AND t.id = r.id",
            )
            .bind(replica)
            .bind(stored(now_ms))
            .bind(stored(until_ms))
            .execute(&mut *conn)
            .await?;
            Ok(done.rows_affected())
        })
        .await
    }

    /// See `ReplicaStore::request_cancel`: the mark and the notice in one statement (the
    /// notice goes out when it commits).
    pub(crate) async fn request_cancel(
        &self,
        announce: &Announcer,
        key: &TaskKey,
    ) -> Result<Option<String>, StoreError> {
        let payload = announce.cancel_payload(&key.tenant, &key.id);
        self.on_reads(async |conn| {
            let marked = sqlx::query::<Postgres>(concat!(
                "WITH marked AS ( \
                   UPDATE tasks SET cancel_requested = true \
                   WHERE tenant = $1 AND id = $2 AND lease_replica IS NOT NULL \
                   RETURNING lease_replica \
                 ) \
                 SELECT lease_replica, pg_notify($3, ",
                crate::notices::sent_at!(),
                "$4) FROM marked"
            ))
            .bind(key.tenant.as_str())
            .bind(&*key.id)
            .bind(&*announce.channel)
            .bind(&payload)
            .fetch_optional(&mut *conn)
            .await?;
            marked.map(|row| row.try_get::<String, _>(0)).transpose()
        })
        .await
    }

    /// See `ReplicaStore::cancels_requested`.
    pub(crate) async fn cancels_requested(
        &self,
        replica: &str,
    ) -> Result<Vec<TaskKey>, StoreError> {
        self.on_reads(async |conn| {
            let rows = sqlx::query::<Postgres>(
                "SELECT tenant, id FROM tasks WHERE lease_replica = $1 AND cancel_requested",
            )
            .bind(replica)
            .fetch_all(&mut *conn)
            .await?;
            keys(&rows)
        })
        .await
    }

    /// See `ReplicaStore::take_expired`.
    pub(crate) async fn take_expired(
        &self,
        replica: &Arc<str>,
        now_ms: u64,
        until_ms: u64,
        limit: usize,
    ) -> Result<Vec<(TaskKey, Lease)>, StoreError> {
        self.on_reads(async |conn| {
            let rows = sqlx::query::<Postgres>(
                "UPDATE tasks t SET lease_replica = $1, lease_epoch = t.lease_epoch + 1, \
                     lease_until_ms = $3, cancel_requested = false \
                     FROM (SELECT tenant, id FROM tasks \
                           WHERE lease_replica IS NOT NULL AND lease_until_ms < $2 \
                           ORDER BY tenant, id LIMIT $4 FOR UPDATE SKIP LOCKED) e \
                     WHERE t.tenant = e.tenant AND t.id = e.id \
                     RETURNING t.tenant, t.id, t.lease_epoch",
            )
            .bind(&**replica)
            .bind(stored(now_ms))
            .bind(stored(until_ms))
            .bind(i64::try_from(limit).unwrap_or(i64::MAX))
            .fetch_all(&mut *conn)
            .await?;
            rows.iter()
                .map(|row| {
                    let tenant: String = row.try_get(0)?;
                    let id: String = row.try_get(1)?;
                    Ok((
                        TaskKey::new(tenant, id),
                        Lease {
                            replica: replica.clone(),
                            epoch: loaded(row.try_get(2)?),
                            until_ms,
                            last: false,
                        },
                    ))
                })
                .collect::<Result<Vec<_>, sqlx::Error>>()
        })
        .await
    }
}
