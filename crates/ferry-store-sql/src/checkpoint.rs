//! SQLite's checkpoints beside the writer instead of in its commits.
//!
//! In WAL mode every commit appends the pages it changed to the WAL; a checkpoint copies them
//! into the database file and syncs it, and once everything is copied the next write starts
//! the WAL over. Left to SQLite, the commit that takes the WAL past its autocheckpoint size
//! does the whole copy, and every request of that batch waits for it: 30 to 47 ms under
//! load on the project's machine, most of SQLite's p99. The checkpointer does the copy on a
//! connection of its own while the writer goes on (a `PASSIVE` checkpoint takes no write
//! lock), then copies what was committed meanwhile inside the writers' turn, so that the WAL
//! starts over small. The writer keeps its autocheckpoint as a backstop.
//!
//! Letting the WAL grow instead costs throughput: a sync of a WAL that grows must also write
//! the file's new size, and lookups search an ever larger WAL index.

use crate::turn::WriteTurn;
use sqlx::{Row, SqlitePool};
use std::time::Duration;
use tokio::sync::watch;

/// The least time between two checkpoints: under load the WAL gathers about this much of the
/// writer's commits, a few megabytes, before they are copied.
const SPACING: Duration = Duration::from_millis(100);

/// Copies the WAL into the database file after the writer's commits (see the module).
pub(crate) struct Checkpointer {
    /// A connection of its own, so that a checkpoint never waits for a reader's connection
    /// nor keeps one from a reader.
    pub(crate) pool: SqlitePool,
    /// The writers' turn, held for the last copy of each checkpoint.
    pub(crate) turn: WriteTurn,
    /// Bumped by the writer after each commit; closed when the writer stops.
    pub(crate) commits: watch::Receiver<u64>,
    /// How long the checkpointer waits for a connection or the turn before it skips a round.
    pub(crate) timeout: Duration,
    /// Counts the checkpoints that ran (a reader on an older part of the WAL may have stopped
    /// one short of the end).
    pub(crate) done: watch::Sender<u64>,
}

impl Checkpointer {
    /// Checkpoints after commits, at most once per [`SPACING`], until the writer stops. A
    /// failure is a warning once (a full disk would fail every round), then quiet until a
    /// checkpoint succeeds again.
    pub(crate) async fn run(mut self) {
        let mut failing = false;
        while self.commits.changed().await.is_ok() {
            match self.checkpoint().await {
                Ok(()) => {
                    if std::mem::take(&mut failing) {
                        tracing::info!("SQLite checkpoints succeed again");
                    }
                    self.done.send_modify(|n| *n += 1);
                }
                Err(reason) if !failing => {
                    failing = true;
                    tracing::warn!(%reason, "SQLite checkpoint failed; the writer's own checkpoints go on (said once until one succeeds)");
                }
                Err(reason) => tracing::debug!(%reason, "SQLite checkpoint failed again"),
            }
            tokio::time::sleep(SPACING).await;
        }
    }

    /// Copies the WAL into the database: first what it holds while the writer goes on, then,
    /// in the writers' turn, what was committed meanwhile. Then every frame is copied, and
    /// the writer's next transaction starts the WAL over.
    async fn checkpoint(&self) -> Result<(), String> {
        let mut conn = tokio::time::timeout(self.timeout, self.pool.acquire())
            .await
            .map_err(|_| "no connection for the checkpoint".to_owned())?
            .map_err(|e| e.to_string())?;
        passive(&mut conn).await?;
        let _turn = self.turn.take(self.timeout).await?;
        passive(&mut conn).await
    }
}

/// A `PASSIVE` checkpoint: copies what it can without waiting for anyone. A reader still on
/// an older part of the WAL only stops the copy short (the next checkpoint goes on).
async fn passive(conn: &mut sqlx::SqliteConnection) -> Result<(), String> {
    let row = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
        .fetch_one(&mut *conn)
        .await
        .map_err(|e| e.to_string())?;
    let (log, copied): (i64, i64) = (row.try_get(1).unwrap_or(0), row.try_get(2).unwrap_or(0));
    tracing::trace!(log, copied, "SQLite checkpoint");
    Ok(())
}
