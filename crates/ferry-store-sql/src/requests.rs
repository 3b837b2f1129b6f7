//! Remembered requests on PostgreSQL (see `ferry_store::replicas::Remembered`): idempotent
//! retries get the first answer whichever replica they reach.
//!
//! A request is remembered by inserting its row: of replicas racing with one request, the
//! insert of exactly one lands (the primary key), and the others read what it holds. An
//! expired row is replaced in the same statement; the sweep deletes the rest.

use crate::store::{SqlStore, stored};
use ferry_store::StoreError;
use ferry_store::replicas::Remembered;
use sqlx::{Postgres, Row};

impl SqlStore<Postgres> {
    /// See `ReplicaStore::remember_request`.
    pub(crate) async fn remember_request(
        &self,
        caller: &str,
        message_id: &str,
        content: &str,
        now_ms: u64,
        expires_ms: u64,
    ) -> Result<Remembered, StoreError> {
        self.on_reads(async |conn| {
            let inserted = sqlx::query::<Postgres>(
                "INSERT INTO requests (caller, message_id, content, expires_ms) \
                 VALUES ($1, $2, $3, $5) \
                 ON CONFLICT (caller, message_id) DO UPDATE \
                   SET content = EXCLUDED.content, answer = NULL, expires_ms = EXCLUDED.expires_ms \
                   WHERE requests.expires_ms <= $4 \
                 RETURNING 1",
            )
            .bind(caller)
            .bind(message_id)
            .bind(content)
            .bind(stored(now_ms))
            .bind(stored(expires_ms))
            .fetch_optional(&mut *conn)
            .await?;
            if inserted.is_some() {
                return Ok(Remembered::First);
            }
            let row = sqlx::query::<Postgres>(
                "SELECT content, answer FROM requests WHERE caller = $1 AND message_id = $2",
            )
            .bind(caller)
            .bind(message_id)
            .fetch_optional(&mut *conn)
            .await?;
            let Some(row) = row else {
                // Forgotten in between (its first answer failed): answer it normally.
                return Ok(Remembered::Different);
            };
            let kept: String = row.try_get(0)?;
            let answer: Option<String> = row.try_get(1)?;
            Ok(match answer {
                _ if kept != content => Remembered::Different,
                Some(answer) => Remembered::Answered(answer),
                None => Remembered::Pending,
            })
        })
        .await
    }

    /// See `ReplicaStore::answer_request`.
    pub(crate) async fn answer_request(
        &self,
        caller: &str,
        message_id: &str,
        answer: &str,
    ) -> Result<(), StoreError> {
        self.on_reads(async |conn| {
            sqlx::query::<Postgres>(
                "UPDATE requests SET answer = $3 WHERE caller = $1 AND message_id = $2",
            )
            .bind(caller)
            .bind(message_id)
            .bind(answer)
            .execute(&mut *conn)
            .await
            .map(|_| ())
        })
        .await
    }

    /// See `ReplicaStore::forget_request`.
    pub(crate) async fn forget_request(
        &self,
        caller: &str,
        message_id: &str,
    ) -> Result<(), StoreError> {
        self.on_reads(async |conn| {
            sqlx::query::<Postgres>("DELETE FROM requests WHERE caller = $1 AND message_id = $2")
                .bind(caller)
                .bind(message_id)
                .execute(&mut *conn)
                .await
                .map(|_| ())
        })
        .await
    }
}
