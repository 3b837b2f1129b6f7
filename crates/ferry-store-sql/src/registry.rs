//! The replicas' registry on PostgreSQL (see `ferry_store::replicas::Claim`): each replica's
//! internal URL and when it last announced itself, and which replica holds each conversation
//! whose state lives in one process.
//!
//! A claim inserts the conversation's row: of replicas racing with a new key, the insert of
//! exactly one lands (the primary key). Otherwise the row is locked and read with its
//! holder's last announcement: a live holder keeps it, a silent one loses it to the claimer
//! in the same transaction.

use crate::store::{SqlStore, stored};
use ferry_store::StoreError;
use ferry_store::replicas::Claim;
use sqlx::{Acquire, Postgres, Row};

/// How long a replica's entry, and what it held, outlive its last announcement.
const FORGOTTEN_AFTER_MS: u64 = 24 * 60 * 60 * 1000;

impl SqlStore<Postgres> {
    /// See `ReplicaStore::announce`: also forgets the replicas silent for a day, and their
    /// conversations.
    pub(crate) async fn announce(
        &self,
        replica: &str,
        url: &str,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        let forgotten = stored(now_ms.saturating_sub(FORGOTTEN_AFTER_MS));
        self.on_reads(async |conn| {
            sqlx::query::<Postgres>(
                "INSERT INTO replicas (id, url, seen_ms) VALUES ($1, $2, $3) \
                 ON CONFLICT (id) DO UPDATE SET url = EXCLUDED.url, seen_ms = EXCLUDED.seen_ms",
            )
            .bind(replica)
            .bind(url)
            .bind(stored(now_ms))
            .execute(&mut *conn)
            .await?;
            sqlx::query::<Postgres>(
                "WITH gone AS (DELETE FROM replicas WHERE seen_ms < $1 RETURNING id) \
                 DELETE FROM conversations c USING gone g WHERE c.replica = g.id",
            )
            .bind(forgotten)
            .execute(&mut *conn)
            .await?;
            Ok(())
        })
        .await
    }

    /// See `ReplicaStore::claim`.
    pub(crate) async fn claim(
        &self,
        replica: &str,
        key: &str,
        now_ms: u64,
        live_since_ms: u64,
    ) -> Result<Claim, StoreError> {
        self.on_reads(async |conn| {
            let inserted = sqlx::query::<Postgres>(
                "INSERT INTO conversations (key, replica, since_ms) VALUES ($1, $2, $3) \
                 ON CONFLICT (key) DO NOTHING RETURNING 1",
            )
            .bind(key)
            .bind(replica)
            .bind(stored(now_ms))
            .fetch_optional(&mut *conn)
            .await?;
            if inserted.is_some() {
                return Ok(Claim::Here { moved_from: None });
            }
            let mut tx = conn.begin().await?;
            let row = sqlx::query::<Postgres>(
                "SELECT c.replica, r.url, r.seen_ms FROM conversations c \
                 LEFT JOIN replicas r ON r.id = c.replica \
                 WHERE c.key = $1 FOR UPDATE OF c",
            )
            .bind(key)
            .fetch_optional(&mut *tx)
            .await?;
            let holder = match row {
                Some(row) => {
                    let holder: String = row.try_get(0)?;
                    let url: Option<String> = row.try_get(1)?;
                    let seen: Option<i64> = row.try_get(2)?;
                    let alive = seen.is_some_and(|seen| seen >= stored(live_since_ms));
                    match url {
                        Some(url) if alive && holder != replica => {
                            return Ok(Claim::Elsewhere {
                                replica: holder,
                                url,
                            });
                        }
                        _ => (holder != replica).then_some(holder),
                    }
                }
                None => None,
            };
            sqlx::query::<Postgres>(
                "INSERT INTO conversations (key, replica, since_ms) VALUES ($1, $2, $3) \
                 ON CONFLICT (key) DO UPDATE SET replica = EXCLUDED.replica, since_ms = EXCLUDED.since_ms",
            )
            .bind(key)
            .bind(replica)
            .bind(stored(now_ms))
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
            Ok(Claim::Here { moved_from: holder })
        })
        .await
    }
}
