//! The push-delivery outbox in the `push_deliveries` table: [`ferry_store::push::PushStore`]
//! for both databases (the rows themselves are written by the writer, with their events).
//!
//! A claim is one statement: it picks the oldest pending row of each (task, config) that is
//! due and not leased, and leases it, atomically (SQLite: the statement holds the write
//! lock; PostgreSQL: the rows are taken `FOR UPDATE SKIP LOCKED`, so claims of several
//! processes pass each other by instead of waiting, and a row one holds is not another's).
//! A second read fetches each claimed row's config and event.

use crate::dialect::Dialect;
use crate::store::{SqlStore, stored};
use ferry_store::push::{
    ClaimedDelivery, Delivery, DeliveryCounts, DeliveryOutcome, DeliveryStatus, FinishedDelivery,
};
use ferry_store::{StoreError, TaskKey};
use sqlx::Connection;
use sqlx::{ColumnIndex, Decode, Encode, Executor, IntoArguments, Row, Type};
use std::collections::HashMap;

/// The columns a delivery is read from, in this order.
const COLUMNS: &str =
    "id, config_id, seq, status, attempts, due_ms, first_attempt_ms, done_ms, last_error";

/// Claims the due heads (`$1` now, `$2` lease, `$3` lease until, `$4` limit); the dialect adds
/// its row-locking clause to the inner select.
///
/// The rows are visited through the pending rows' `due_ms` index as the database finds them
/// (oldest first, in practice) and the visit stops at the limit: a claim costs what it
/// takes, not the size of the backlog. (An `ORDER BY` would make PostgreSQL sort every due
/// row first; the order between tasks does not matter, the order within one is the head
/// rule's.) A row that is not its (task, config)'s head is passed over with one probe of
/// the pending rows' index; so that a head waiting for its retry does not have every row
/// behind it probed at each claim, a retry makes the rows behind it due no earlier than
/// itself (see [`finish_all`]).
fn claim_sql<DB: Dialect>() -> String {
    format!(
        "UPDATE push_deliveries SET lease = $2, lease_until_ms = $3, attempts = attempts + 1, \
           first_attempt_ms = COALESCE(first_attempt_ms, $1) \
         WHERE id IN ( \
           SELECT d.id FROM push_deliveries d \
           WHERE d.status = 'pending' AND d.due_ms <= $1 \
             AND (d.lease_until_ms IS NULL OR d.lease_until_ms <= $1) \
             AND NOT EXISTS (SELECT 1 FROM push_deliveries e \
               WHERE e.tenant = d.tenant AND e.task_id = d.task_id \
                 AND e.config_id = d.config_id AND e.status = 'pending' AND e.seq < d.seq) \
           LIMIT $4{} \
         ) \
         RETURNING tenant, task_id, {COLUMNS}",
        DB::SKIP_LOCKED
    )
}

impl<DB> SqlStore<DB>
where
    DB: Dialect,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB>,
    for<'q> i64: Encode<'q, DB> + Type<DB>,
    for<'q> Option<i64>: Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'q> Option<&'q str>: Encode<'q, DB> + Type<DB>,
    for<'r> i64: Decode<'r, DB>,
    for<'r> Option<i64>: Decode<'r, DB>,
    for<'r> &'r str: Decode<'r, DB>,
    for<'r> Option<&'r str>: Decode<'r, DB>,
    usize: ColumnIndex<DB::Row>,
{
    /// A delivery read back from `COLUMNS`, starting at column `first`.
    fn delivery_of(&self, row: &DB::Row, first: usize) -> Result<Delivery, StoreError> {
        let decode = |e: sqlx::Error| self.failed(&e);
        let number = |i: usize| -> Result<u64, StoreError> {
            let n: i64 = row.try_get(first + i).map_err(decode)?;
            Ok(u64::try_from(n).unwrap_or(0))
        };
        let maybe = |i: usize| -> Result<Option<u64>, StoreError> {
            let n: Option<i64> = row.try_get(first + i).map_err(decode)?;
            Ok(n.map(|n| u64::try_from(n).unwrap_or(0)))
        };
        let status: &str = row.try_get(first + 3).map_err(decode)?;
        let id: &str = row.try_get(first).map_err(decode)?;
        let config_id: &str = row.try_get(first + 1).map_err(decode)?;
        let last_error: Option<&str> = row.try_get(first + 8).map_err(decode)?;
        Ok(Delivery {
            id: id.to_owned(),
            config_id: config_id.to_owned(),
            seq: number(2)?,
            status: DeliveryStatus::parse(status).ok_or_else(|| {
                self.unavailable(format!("a delivery has the unknown status {status:?}"))
            })?,
            attempts: u32::try_from(number(4)?).unwrap_or(u32::MAX),
            due_ms: number(5)?,
            first_attempt_ms: maybe(6)?,
            done_ms: maybe(7)?,
            last_error: last_error.map(str::to_owned),
        })
    }

    pub(crate) async fn claim_deliveries(
        &self,
        now_ms: u64,
        lease: &str,
        lease_until_ms: u64,
        limit: usize,
    ) -> Result<Vec<ClaimedDelivery>, StoreError> {
        let sql = claim_sql::<DB>();
        let query = sqlx::query::<DB>(&sql)
            .bind(stored(now_ms))
            .bind(lease)
            .bind(stored(lease_until_ms))
            .bind(i64::try_from(limit).unwrap_or(i64::MAX));
        let rows = self
            .on_outbox(async |conn| query.fetch_all(conn).await)
            .await?;
        let decode = |e: sqlx::Error| self.failed(&e);
        let mut claimed = Vec::with_capacity(rows.len());
        for row in &rows {
            let tenant: &str = row.try_get(0).map_err(decode)?;
            let task: &str = row.try_get(1).map_err(decode)?;
            claimed.push((TaskKey::new(tenant, task), self.delivery_of(row, 2)?));
        }
        self.with_bodies(claimed).await
    }

    /// Each claimed delivery with its config's text and its event (a delivery whose config
    /// or event went meanwhile, with its task or config, is left out).
    async fn with_bodies(
        &self,
        claimed: Vec<(TaskKey, Delivery)>,
    ) -> Result<Vec<ClaimedDelivery>, StoreError> {
        if claimed.is_empty() {
            return Ok(Vec::new());
        }
        let marks = (1..=claimed.len())
            .map(|i| format!("${i}"))
            .collect::<Vec<_>>()
            .join(", ");
        let sql = format!(
            "SELECT d.id, c.config, e.event FROM push_deliveries d \
             JOIN push_configs c ON c.tenant = d.tenant AND c.task_id = d.task_id \
               AND c.id = d.config_id \
             JOIN events e ON e.tenant = d.tenant AND e.task_id = d.task_id AND e.seq = d.seq \
             WHERE d.id IN ({marks})"
        );
        let mut query = sqlx::query::<DB>(&sql);
        for (_, delivery) in &claimed {
            query = query.bind(delivery.id.as_str());
        }
        // On the outbox's pool: its connections belong to the deliverer (its runtime).
        let rows = self
            .on(&self.outbox, async |conn| query.fetch_all(conn).await)
            .await?;
        let decode = |e: sqlx::Error| self.failed(&e);
        let mut bodies = HashMap::with_capacity(rows.len());
        for row in &rows {
            let id: &str = row.try_get(0).map_err(decode)?;
            let config: &str = row.try_get(1).map_err(decode)?;
            let event: &str = row.try_get(2).map_err(decode)?;
            bodies.insert(id.to_owned(), (config.into(), event.to_owned()));
        }
        Ok(claimed
            .into_iter()
            .filter_map(|(key, delivery)| {
                let (config, event) = bodies.remove(&delivery.id)?;
                Some(ClaimedDelivery {
                    key,
                    delivery,
                    config,
                    event: bytes::Bytes::from(event),
                })
            })
            .collect())
    }

    pub(crate) async fn finish_deliveries(
        &self,
        finished: Vec<FinishedDelivery>,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        if finished.is_empty() {
            return Ok(());
        }
        self.on_outbox(async |conn| finish_all::<DB>(conn, &finished, now_ms).await)
            .await
    }

    pub(crate) async fn list_deliveries(&self, key: &TaskKey) -> Result<Vec<Delivery>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM push_deliveries WHERE tenant = $1 AND task_id = $2 \
             ORDER BY seq, config_id"
        );
        let query = sqlx::query::<DB>(&sql)
            .bind(key.tenant.as_str())
            .bind(&*key.id);
        let rows = self
            .on_reads(async |conn| query.fetch_all(conn).await)
            .await?;
        rows.iter().map(|row| self.delivery_of(row, 0)).collect()
    }

    pub(crate) async fn redeliver(&self, key: &TaskKey, id: &str) -> Result<bool, StoreError> {
        let query = sqlx::query::<DB>(
            "UPDATE push_deliveries SET status = 'pending', attempts = 0, due_ms = 0, \
             first_attempt_ms = NULL, done_ms = NULL, lease = NULL, lease_until_ms = NULL \
             WHERE tenant = $1 AND task_id = $2 AND id = $3",
        )
        .bind(key.tenant.as_str())
        .bind(&*key.id)
        .bind(id);
        let done = self
            .on_reads_writing(async |conn| query.execute(conn).await)
            .await?;
        Ok(DB::rows_affected(&done) > 0)
    }

    pub(crate) async fn count_deliveries(&self) -> Result<DeliveryCounts, StoreError> {
        let query = sqlx::query::<DB>(
            "SELECT status, count(*) FROM push_deliveries \
             WHERE status IN ('pending', 'dead') GROUP BY status",
        );
        let rows = self
            .on_reads(async |conn| query.fetch_all(conn).await)
            .await?;
        let decode = |e: sqlx::Error| self.failed(&e);
        let mut counts = DeliveryCounts::default();
        for row in &rows {
            let status: &str = row.try_get(0).map_err(decode)?;
            let n: i64 = row.try_get(1).map_err(decode)?;
            let n = u64::try_from(n).unwrap_or(0);
            match DeliveryStatus::parse(status) {
                Some(DeliveryStatus::Pending) => counts.pending = n,
                Some(DeliveryStatus::Dead) => counts.dead = n,
                _ => {}
            }
        }
        Ok(counts)
    }
}

/// Records finished attempts in one transaction; a row no longer under the named lease (or
/// no longer pending) is left alone.
async fn finish_all<DB>(
    conn: &mut DB::Connection,
    finished: &[FinishedDelivery],
    now_ms: u64,
) -> Result<(), sqlx::Error>
where
    DB: Dialect,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB>,
    for<'q> i64: Encode<'q, DB> + Type<DB>,
    for<'q> Option<i64>: Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'q> Option<&'q str>: Encode<'q, DB> + Type<DB>,
{
    let mut tx = conn.begin_with(DB::BEGIN_WRITE).await?;
    for done in finished {
        let (status, due_ms, done_ms, error) = match &done.outcome {
            DeliveryOutcome::Delivered => (DeliveryStatus::Delivered, None, Some(now_ms), None),
            DeliveryOutcome::Retry { due_ms, error } => (
                DeliveryStatus::Pending,
                Some(*due_ms),
                None,
                Some(error.as_str()),
            ),
            DeliveryOutcome::Dead { error } => (
                DeliveryStatus::Dead,
                None,
                Some(now_ms),
                Some(error.as_str()),
            ),
        };
        let recorded = sqlx::query::<DB>(
            "UPDATE push_deliveries SET status = $1, due_ms = COALESCE($2, due_ms), \
             done_ms = $3, last_error = $4, lease = NULL, lease_until_ms = NULL \
             WHERE id = $5 AND lease = $6 AND status = 'pending'",
        )
        .bind(status.as_str())
        .bind(due_ms.map(stored))
        .bind(done_ms.map(stored))
        .bind(error)
        .bind(done.id.as_str())
        .bind(done.lease.as_str())
        .execute(&mut *tx)
        .await?;
        if let Some(due_ms) = due_ms
            && DB::rows_affected(&recorded) == 1
        {
            // The rows behind a retried head wait as long as it does: an optimization of
            // the claim's visit, not of its order (the claim takes only heads anyway).
            sqlx::query::<DB>(
                "UPDATE push_deliveries SET due_ms = $1 \
                 WHERE status = 'pending' AND due_ms < $1 AND lease IS NULL \
                   AND (tenant, task_id, config_id) = \
                     (SELECT tenant, task_id, config_id FROM push_deliveries WHERE id = $2)",
            )
            .bind(stored(due_ms))
            .bind(done.id.as_str())
            .execute(&mut *tx)
            .await?;
        }
    }
    tx.commit().await
}

/// The `PushStore` of a database's store type, delegating to its `inner: SqlStore<DB>`.
macro_rules! delegate_push_store {
    ($store:ty) => {
        impl ferry_store::push::PushStore for $store {
            fn claim_deliveries(
                &self,
                now_ms: u64,
                lease: &str,
                lease_until_ms: u64,
                limit: usize,
            ) -> ferry_store::StoreFuture<'_, Vec<ferry_store::push::ClaimedDelivery>> {
                let lease = lease.to_owned();
                Box::pin(async move {
                    self.inner
                        .claim_deliveries(now_ms, &lease, lease_until_ms, limit)
                        .await
                })
            }

            fn finish_deliveries(
                &self,
                finished: Vec<ferry_store::push::FinishedDelivery>,
                now_ms: u64,
            ) -> ferry_store::StoreFuture<'_, ()> {
                Box::pin(self.inner.finish_deliveries(finished, now_ms))
            }

            fn list_deliveries(
                &self,
                key: &ferry_store::TaskKey,
            ) -> ferry_store::StoreFuture<'_, Vec<ferry_store::push::Delivery>> {
                let key = key.clone();
                Box::pin(async move { self.inner.list_deliveries(&key).await })
            }

            fn redeliver(
                &self,
                key: &ferry_store::TaskKey,
                id: &str,
            ) -> ferry_store::StoreFuture<'_, bool> {
                let (key, id) = (key.clone(), id.to_owned());
                Box::pin(async move { self.inner.redeliver(&key, &id).await })
            }

            fn count_deliveries(
                &self,
            ) -> ferry_store::StoreFuture<'_, ferry_store::push::DeliveryCounts> {
                Box::pin(self.inner.count_deliveries())
            }
        }
    };
}
pub(crate) use delegate_push_store;
